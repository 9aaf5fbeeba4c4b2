"""A graph as the operator reads it (v1beta1, its storage version) lowered to the v1alpha1 form
generation builds from. Pure, with a bounded memory.

The operator's cache holds graphs as stored, and the graph's status is built and written as stored
(status/dgd_status.py). Generation (`graph/generate.py`, the worker hashes, Grove) still reads the
v1alpha1 `spec.services`, so the spec is converted here, by the webhook's own lossless conversion
(api/conversion), and only the spec: metadata is the stored object's, status is not carried.

A graph's spec changes only with its `metadata.generation` (the API server bumps it on every spec
change) or with the reserved annotations its v1alpha1-only fields travel in, so the lowered spec is
remembered per graph by those: the status and metadata events that make most of a graph's life
convert nothing, where the client's codec once converted the rest of the object at each of them.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Final, cast

from dynamo_operator.api.conversion import V1ALPHA1, ConversionError, convert, preserve
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph, json_object

# The reserved annotations a graph's spec conversion reads (the status one tells a v1alpha1-made
# object from a v1beta1-made one) and the one it writes.
_READ: Final = (preserve.DGD_SPEC, preserve.DGD_STATUS)

# uid → (generation, the reserved annotations, the lowered spec, the payload it records beside it).
# Most recent last; 16,384 graphs is past any cluster this operator is measured on.
_MEMO: collections.OrderedDict[str, tuple[object, tuple[object, ...], object, str | None]] = (
    collections.OrderedDict()
)
MEMO_SIZE: Final = 16_384


def lowered_graph(stored: Mapping[str, object]) -> Graph:
    """`stored` (a graph as the cache holds it) as a v1alpha1 graph without status: its metadata with
    the reserved annotations as the conversion leaves them, and its spec converted. A graph already in
    v1alpha1 (a manifest rendered offline) is handed back as it is. The spec is shared with other
    callers: read, never changed in place (generation copies what it edits). A graph v1alpha1 cannot
    hold (a gap in the conversion) is refused as a spec error."""
    if stored.get("apiVersion") == V1ALPHA1:
        return cast(Graph, stored)
    meta = json_object(stored.get("metadata"))
    annotations = json_object(meta.get("annotations"))
    reserved = tuple(annotations.get(key) for key in _READ)
    uid = str(meta.get("uid") or "")
    generation = meta.get("generation")
    found = _MEMO.get(uid) if uid else None
    if found is not None and found[:2] == (generation, reserved):
        _MEMO.move_to_end(uid)
        spec, carried = found[2], found[3]
    else:
        spec, carried = _lower_spec(stored)
        if uid and generation is not None:
            _MEMO[uid] = (generation, reserved, spec, carried)
            _MEMO.move_to_end(uid)
            while len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
    kept = {k: v for k, v in annotations.items() if k not in _READ}
    if carried is not None:
        kept[preserve.DGD_SPEC] = carried
    metadata = {k: v for k, v in meta.items() if k != "annotations"}
    if kept:
        metadata["annotations"] = kept
    return cast(
        Graph, {"apiVersion": V1ALPHA1, "kind": stored.get("kind"), "metadata": metadata, "spec": spec}
    )


def _lower_spec(stored: Mapping[str, object]) -> tuple[object, str | None]:
    annotations = json_object(json_object(stored.get("metadata")).get("annotations"))
    envelope = {
        "apiVersion": stored.get("apiVersion"),
        "kind": stored.get("kind"),
        # Only what the conversion reads: the reserved annotations (the rest is passed on as it is).
        "metadata": {"annotations": {k: annotations[k] for k in _READ if k in annotations}},
        "spec": stored.get("spec") or {},
    }
    try:
        out = convert(envelope, V1ALPHA1)
    except ConversionError as err:
        raise GenerationError("spec", f"cannot be read as v1alpha1: {err}") from err
    carried = json_object(json_object(out.get("metadata")).get("annotations")).get(preserve.DGD_SPEC)
    return out.get("spec") or {}, carried if isinstance(carried, str) else None


def forget(uid: str) -> None:
    """Drop a deleted graph's remembered spec."""
    _MEMO.pop(uid, None)
