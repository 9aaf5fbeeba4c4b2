"""Content hashes of desired objects: canonical, stable across restarts and operator versions.

The hash is sha256 over a canonical JSON form (sorted keys, compact separators, no volatile
server-side fields), so two dicts that mean the same thing hash the same however they were built.
List order is kept: in Kubernetes a list's order is meaningful (containers, args, env).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, Final

import orjson
from dynamo_operator.internal import consts

# Server-populated metadata that must never influence a desired-state hash.
_VOLATILE_METADATA = frozenset(
    {
        "resourceVersion",
        "uid",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "managedFields",
        "selfLink",
    }
)
# Our own stamps: a hash must not depend on itself.
_HASH_ANNOTATIONS = frozenset({consts.ANNOTATION_LAST_APPLIED_HASH})


# Where orjson's floats can differ from the stdlib's, both below 1e-4: a negative exponent ("1e-7" /
# "1e-07"), and [1e-5, 1e-4), which orjson writes in full and the stdlib with an exponent
# ("0.00001" / "1e-05"). Searched for as "e-<digit>" and "0.0000" (literal prefixes the regex engine
# skips to fast), then the character before: a digit for an exponent; for a full small number,
# anything but a digit or a point (so "10.00001", the same in both, does not count). A match inside a
# string only costs the slower path.
_NEGATIVE_EXPONENT = re.compile(rb"e-[0-9]")
_SMALL_IN_FULL = re.compile(rb"0\.0000")


_DIGITS = b"0123456789"
_DIGITS_OR_POINT = _DIGITS + b"."


def _may_differ_from_stdlib(out: bytes) -> bool:
    if any(m.start() and out[m.start() - 1] in _DIGITS for m in _NEGATIVE_EXPONENT.finditer(out)):
        return True
    return any(
        not m.start() or out[m.start() - 1] not in _DIGITS_OR_POINT for m in _SMALL_IN_FULL.finditer(out)
    )


def canonical_json(value: Any) -> str:
    """The one serialisation every hash is computed over."""
    return _canonical_bytes(value).decode()


def _canonical_bytes(value: Any) -> bytes:
    """`json.dumps(sort_keys, compact, UTF-8, no NaN)`, byte for byte, the fast way where it can be.

    Every stamped hash on a live object was computed over the stdlib's form, so the form must never
    change. orjson writes the same bytes for str/int/bool/None/list/dict, ~10x faster; where it could
    differ (non-string keys, ints past 64 bits, floats below 1e-4) the stdlib writes it. One
    difference is kept: NaN and infinities, which the stdlib refuses, hash as null (never in an object
    the API server returned).
    """
    try:
        out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        out = None
    if out is None or _may_differ_from_stdlib(out):
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode()
    return out


def digest(value: Any, *, length: int = 64) -> str:
    """Hex sha256 of the canonical form of `value`, truncated to `length` characters."""
    return hashlib.sha256(_canonical_bytes(value)).hexdigest()[:length]


def _strip(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k != "status"}
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        clean = {k: v for k, v in meta.items() if k not in _VOLATILE_METADATA}
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _HASH_ANNOTATIONS}
        if annotations:
            clean["annotations"] = annotations
        else:
            clean.pop("annotations", None)
        out["metadata"] = clean
    return out


def content_hash(obj: Mapping[str, Any]) -> str:
    """Hash of everything we send for `obj`, ignoring status, server fields and the hash stamp itself."""
    return digest(_strip(obj))


def stamp_hash(obj: dict[str, Any]) -> dict[str, Any]:
    """Write `content_hash(obj)` into the object's annotations (in place) and return it."""
    meta = obj.setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    annotations.pop(consts.ANNOTATION_LAST_APPLIED_HASH, None)
    annotations[consts.ANNOTATION_LAST_APPLIED_HASH] = content_hash(obj)
    return obj


def recorded_hash(obj: Mapping[str, Any]) -> str | None:
    """The hash a live object was last written with, or None when it carries none."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(consts.ANNOTATION_LAST_APPLIED_HASH)
    return value if isinstance(value, str) else None


def pod_template_hash(template: Mapping[str, Any]) -> str:
    """Hash of a pod template alone: equal for two workloads iff their pods would not roll."""
    return digest(template, length=16)


class _LastAppliedHash:
    """The operator's hash stamp for the child syncer (internal.apply's `HashStamp`): the content
    hash in the last-applied-hash annotation."""

    def content(self, obj: Mapping[str, Any]) -> str:
        return content_hash(obj)

    def stamp(self, obj: dict[str, Any]) -> dict[str, Any]:
        return stamp_hash(obj)

    def recorded(self, obj: Mapping[str, Any]) -> str | None:
        return recorded_hash(obj)


LAST_APPLIED_HASH: Final = _LastAppliedHash()
