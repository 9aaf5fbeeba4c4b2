"""The reserved annotations that carry what the other API version cannot hold.

Upstream's operator keeps, per kind, at most two private annotations on a converted object: one for
the spec, one for the status. Objects written by upstream's webhook must read the same here, so the
keys and the encoding are upstream's:

- a *spec* payload is an envelope `{"version": 1, "spec": <sparse spec of the source version>}`,
  optionally with `"rawJSON": [{"path": ..., "raw": <base64>, "nil": true}]` records for EPP plugin
  parameters that were not valid JSON or were null (Go keeps them as raw bytes). A payload without a
  `spec` key is an older form: the whole object is the sparse spec.
- a *status* payload is the sparse status object itself, no envelope.

The payload is typed in the *source* version: a v1beta1 object converted to v1alpha1 carries sparse
v1beta1 data under `nvidia.com/dgd-spec`, and the other way round. Which one a payload holds is
known from the direction of the conversion that reads it.

Damaged payloads never fail a conversion (issue #36): a payload that does not parse, is too large or
too deep is dropped with a log line, and the live fields are converted as if it were absent.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

log = logging.getLogger(__name__)

DGD_SPEC = "nvidia.com/dgd-spec"
DGD_STATUS = "nvidia.com/dgd-status"
DCD_SPEC = "nvidia.com/dcd-spec"
DCD_STATUS = "nvidia.com/dcd-status"
DGDR_SPEC = "nvidia.com/dgdr-spec"
DGDR_STATUS = "nvidia.com/dgdr-status"

# Per-field DGDR annotations of upstream's Dynamo 1.0/1.1: no longer read, but scrubbed from every
# converted DGDR so they cannot leak from one version into the other.
LEGACY_DGDR_ANNOTATIONS = (
    "nvidia.com/dgdr-config-map-ref",
    "nvidia.com/dgdr-output-pvc",
    "nvidia.com/dgdr-enable-gpu-discovery",
    "nvidia.com/dgdr-deployment-overrides",
    "nvidia.com/dgdr-profiling-config",
    "nvidia.com/dgdr-status-backend",
    "nvidia.com/dgdr-profiling-results",
    "nvidia.com/dgdr-deployment-status",
    "nvidia.com/dgdr-profiling-job-name",
)

ENVELOPE_VERSION = 1

# Bounds on what is parsed from an annotation. The API server caps all annotations of an object at
# 256 KiB together, so a longer value cannot come from a stored object; the depth bound keeps a
# hostile payload from exhausting the parser's recursion.
MAX_PAYLOAD_CHARS = 256 * 1024
MAX_PAYLOAD_DEPTH = 64


class RawRecord:
    """One `rawJSON` entry: an EPP plugin `parameters` value at `path` that JSON could not hold."""

    __slots__ = ("nil", "path", "raw")

    def __init__(self, path: str, raw: bytes | None = None, nil: bool = False) -> None:
        self.path = path
        self.raw = raw
        self.nil = nil

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path}
        if self.raw:
            out["raw"] = base64.b64encode(self.raw).decode("ascii")
        if self.nil:
            out["nil"] = True
        return out


def _depth(value: object, limit: int) -> int:
    """The nesting depth of a JSON value, stopping once past `limit` (no recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        if isinstance(node, dict):
            stack.extend((child, level + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, level + 1) for child in node)
    return deepest


def _parse(raw: str, key: str) -> object | None:
    if len(raw) > MAX_PAYLOAD_CHARS:
        log.warning("ignoring conversion annotation %s: %d characters is over the bound", key, len(raw))
        return None
    try:
        value: object = json.loads(raw)
    except (ValueError, RecursionError) as err:
        log.warning("ignoring conversion annotation %s: not JSON (%s)", key, err)
        return None
    if _depth(value, MAX_PAYLOAD_DEPTH) > MAX_PAYLOAD_DEPTH:
        log.warning("ignoring conversion annotation %s: nested deeper than %d", key, MAX_PAYLOAD_DEPTH)
        return None
    return value


def dumps(value: object) -> str:
    """Compact JSON, non-ASCII kept, keys sorted: the same payload is the same text whatever order the
    object's keys came in, so converting an unchanged object never changes its annotations."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def encode_spec(spec: Mapping[str, object], records: Iterable[RawRecord] = ()) -> str:
    """The spec annotation's value for a sparse `spec` (and any raw EPP parameter records)."""
    # The envelope's keys in the order upstream's Go struct writes them (version, spec, rawJSON; a
    # record's path, raw, nil), so an envelope holding the same is the same text in both operators;
    # the sparse spec inside keeps sorted keys (one text per content, whatever order it was built in).
    text = f'{{"version":{ENVELOPE_VERSION},"spec":{dumps(dict(spec))}'
    raw = [record.to_json() for record in records]
    if raw:
        text += ',"rawJSON":' + json.dumps(raw, separators=(",", ":"), ensure_ascii=False)
    return text + "}"


def decode_spec(raw: str, key: str = "spec payload") -> dict[str, Any] | None:
    """The sparse spec held in a spec annotation, or None when it is absent or damaged.

    `rawJSON` records are applied: a `nil` record marks its path absent (null), a `raw` one puts
    the decoded bytes back when they are JSON (bytes that are not JSON have no place in a JSON object
    and are dropped with a log line).
    """
    if not raw:
        return None
    value = _parse(raw, key)
    if not isinstance(value, dict):
        if value is not None:
            log.warning("ignoring conversion annotation %s: not an object", key)
        return None
    if "spec" not in value:
        return value  # older form: the object is the spec
    spec = value["spec"]
    if not isinstance(spec, dict):
        log.warning("ignoring conversion annotation %s: spec is not an object", key)
        return None
    records = value.get("rawJSON")
    if isinstance(records, list):
        _apply_records(spec, records, key)
    return spec


def _apply_records(spec: dict[str, Any], records: list[object], key: str) -> None:
    for record in records:
        if not isinstance(record, dict) or not isinstance(record.get("path"), str):
            log.warning("ignoring a malformed rawJSON record in %s", key)
            continue
        parent, leaf = _walk(spec, record["path"].split("/"))
        if parent is None:
            continue  # the path names something the sparse spec does not hold: nothing to restore
        if record.get("nil"):
            parent[leaf] = None  # "absent in the source": a removal in the sparse difference
            continue
        data = record.get("raw")
        if not isinstance(data, str) or not data:
            continue
        try:
            parent[leaf] = json.loads(base64.b64decode(data, validate=True))
        except (ValueError, binascii.Error):
            log.warning("ignoring rawJSON record %s in %s: not JSON", record["path"], key)


def _walk(root: dict[str, Any], parts: list[str]) -> tuple[MutableMapping[str, Any] | None, str]:
    """The mapping holding the last path element; list indices are decimal parts."""
    node: object = root
    for part in parts[:-1]:
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None, ""
    return (node, parts[-1]) if isinstance(node, dict) else (None, "")


def encode_status(status: Mapping[str, object]) -> str:
    """The status annotation's value: the sparse status, no envelope."""
    return dumps(dict(status))


def decode_status(raw: str, key: str = "status payload") -> dict[str, Any] | None:
    """The sparse status held in a status annotation, or None when absent or damaged."""
    if not raw:
        return None
    value = _parse(raw, key)
    if not isinstance(value, dict):
        if value is not None:
            log.warning("ignoring conversion annotation %s: not an object", key)
        return None
    return value


def take(metadata: MutableMapping[str, Any], keys: Iterable[str]) -> dict[str, str]:
    """Remove the reserved `keys` from `metadata.annotations` and return what they held.

    Every converted object starts without them: the converter writes back only what the target version
    needs. `annotations` is dropped when nothing else is left, as the API server would store it.
    """
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        return {}
    taken = {key: annotations.pop(key) for key in list(keys) if key in annotations}
    if not annotations:
        del metadata["annotations"]
    return {key: value for key, value in taken.items() if isinstance(value, str)}


def put(metadata: MutableMapping[str, Any], key: str, value: str) -> None:
    """Set one reserved annotation on `metadata`."""
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
        metadata["annotations"] = annotations
    annotations[key] = value
