"""Trimming objects on their way into a cache, so memory grows with what controllers read.

`strip_managed_fields` always runs first (managedFields are often half an object's size and no
controller reads them from a cache). A caller-supplied `Transform` may then cut further, and
`intern_strings` runs last so what is kept shares its repeated strings with every other object.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from dynamo_operator.internal.cache.interface import Obj

Transform = Callable[[Obj], Obj]


def strip_managed_fields(obj: Obj) -> Obj:
    """Drop `metadata.managedFields` in place (the dict is freshly decoded and ours alone)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return obj


def metadata_only(obj: Obj) -> Obj:
    """Keep apiVersion, kind and metadata: enough for owner/label mapping and existence checks."""
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": obj.get("metadata", {})}


def keep_fields(*top_level: str, data_keys: Iterable[str] = ()) -> Transform:
    """Metadata plus the named top-level fields, and only `data_keys` of `data` (e.g. a Secret's
    `type` and its `.dockerconfigjson`)."""
    wanted_data = frozenset(data_keys)

    def transform(obj: Obj) -> Obj:
        out = metadata_only(obj)
        for name in top_level:
            if name in obj:
                out[name] = obj[name]
        if wanted_data and isinstance(obj.get("data"), dict):
            out["data"] = {k: v for k, v in obj["data"].items() if k in wanted_data}
        return out

    return transform


# Strings at most this long are shared through `sys.intern`: keys, label values, reasons, image
# names repeat across thousands of cached objects, while longer ones (messages, scripts) rarely do.
INTERN_MAX_LEN = 128


def intern_strings(value: Any) -> Any:
    """`value` with every short string value interned, in place; returns `value` (a lone string
    comes back interned).

    A watch decodes each event on its own, so the same label value or name is a new string object in
    every cached object. Interning makes them one, about halving a cached Deployment. This runs on
    every watch event, on an object freshly decoded for the cache alone, so it mutates rather than
    rebuilds: rebuilding every container cost several times the JSON decoding itself, mutating
    about half of that (issue #13). Replacing a string by an equal one changes nothing anyone holding
    the object can observe. The price: orjson allocates dicts of ten keys or more larger than a
    rebuild would, ~10 % more bytes per cached object (37.0 against 34.0 MiB at 1,000 graphs). Keys
    are left to the decoder: orjson (internal/client) hands out one object per distinct key already.
    Only exact dicts, lists and strings below the top are visited (what a JSON decoder makes).
    """
    if isinstance(value, str):
        return _intern(str(value)) if len(value) <= INTERN_MAX_LEN else value
    if isinstance(value, dict):
        _intern_dict(value)
    elif isinstance(value, list):
        _intern_list(value)
    return value


def _intern_dict(d: dict[Any, Any]) -> None:
    for k, v in d.items():  # assigning to existing keys while iterating is allowed
        t = type(v)
        if t is str:
            if len(v) <= INTERN_MAX_LEN:
                d[k] = _intern(v)
        elif t is dict:
            _intern_dict(v)
        elif t is list:
            _intern_list(v)


def _intern_list(items: list[Any]) -> None:
    for i, v in enumerate(items):
        t = type(v)
        if t is str:
            if len(v) <= INTERN_MAX_LEN:
                items[i] = _intern(v)
        elif t is dict:
            _intern_dict(v)
        elif t is list:
            _intern_list(v)


_intern = sys.intern


def keep_paths(*paths: str) -> Transform:
    """Metadata plus the named dotted paths (`"spec.replicas"`, `"status"`), for caches whose readers
    need a few fields of a large object: an owned Deployment's readiness, not its pod template."""
    split = [tuple(p.split(".")) for p in paths]

    def transform(obj: Obj) -> Obj:
        out = metadata_only(obj)
        for path in split:
            _copy_path(obj, out, path)
        return out

    return transform


def _copy_path(src: Obj, dst: Obj, path: tuple[str, ...]) -> None:
    *parents, leaf = path
    node: Any = src
    for name in parents:
        node = node.get(name) if isinstance(node, dict) else None
    if not isinstance(node, dict) or leaf not in node:
        return  # nothing there: no empty parents either
    for name in parents:
        dst = dst.setdefault(name, {})
    dst[leaf] = node[leaf]
