"""Trimming objects on their way into a cache, so memory grows with what controllers read.

`strip_managed_fields` always runs first (managedFields are often half an object's size and no
controller reads them from a cache). A caller-supplied `Transform` may then cut further.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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
