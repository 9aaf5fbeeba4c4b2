"""The operator speaks Dynamo's converted kinds in their storage version, nvidia.com/v1beta1.

The request's reconciler reads the v1alpha1 form of requests (`kinds.DGDR`). On the wire, the client
lists, watches and writes v1beta1, the version the API server stores, so none of the operator's own
requests makes the API server call the conversion webhook. Each request is converted in process once,
as it arrives (the cache keeps the converted form) or as it leaves: the same pure functions the
webhook serves (`api.conversion`), and the round trip is lossless both ways.

The graph (`kinds.DGD`), the component (`kinds.DCD`) and the scaling adapter (`kinds.DGDSA`) are read
in v1beta1 themselves and need no codec where their CRD stores v1beta1 (generation lowers a graph's or
a component's spec to v1alpha1 itself, once per change of it: internal/dynamo/graph/lowering.py,
component/lowering.py); to a CRD an older release installed (stored as v1alpha1) they are spoken in
v1alpha1 on the wire and converted the other way.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, Final, cast

import structlog
from dynamo_operator.api import v1beta1
from dynamo_operator.api.conversion import ConversionError, convert, preserve
from dynamo_operator.api.v1alpha1 import groupversion as alpha
from dynamo_operator.api.v1beta1 import groupversion as beta
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

# The four kinds with a v1beta1 form, by the descriptor the operator's code uses.
CONVERTED: Final = (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)
# Those of them the operator's code reads in v1beta1, their storage version.
READ_AS_STORED: Final = frozenset({kinds.DGD, kinds.DCD, kinds.DGDSA})


def stored(view: Resource) -> Resource:
    """The v1beta1 descriptor of a converted kind's collection."""
    return dataclasses.replace(view, version=beta.VERSION)


def older(view: Resource) -> Resource:
    """The v1alpha1 descriptor of a converted kind's collection."""
    return dataclasses.replace(view, version=alpha.VERSION)


# The reserved annotation each kind keeps its v1alpha1-only spec fields in (api/conversion/preserve.py);
# the scaling adapter has none (its two versions hold the same fields).
_SPEC_PAYLOAD: Final = {
    kinds.DGD.kind: preserve.DGD_SPEC,
    kinds.DCD.kind: preserve.DCD_SPEC,
    kinds.DGDR.kind: preserve.DGDR_SPEC,
}
# Decoded specs remembered, most recent last; a bound, not a size anyone needs (an object's entry is
# refreshed on each of its events, and 4,000 objects is a cluster of 1,000 graphs).
SPEC_MEMORY: Final = 16_384


class StorageCodec:
    """The wire's version to the operator's code and back (`internal.client.codec.VersionCodec`):
    v1beta1 on the wire and v1alpha1 to the code, or, for a kind read as stored on a cluster whose CRD
    still stores v1alpha1, the other way round.

    Most events of an object change its status or metadata, not its spec: the API server bumps
    `metadata.generation` on every spec change, and v1alpha1-only spec fields travel in the kind's
    reserved annotation. So the decoded spec is remembered per object by (generation, that
    annotation), and an event that leaves both alone converts only the rest of the object. The
    remembered spec is handed out, not copied: cached objects are read, never changed in place.
    """

    __slots__ = ("_specs", "view", "wire")

    def __init__(self, view: Resource, wire: Resource) -> None:
        self.view, self.wire = view, wire
        # uid → (generation, the stored payload, the decoded spec, the payload the decoded object carries)
        self._specs: OrderedDict[str, tuple[object, str | None, object, str | None]] = OrderedDict()

    def decode(self, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        uid = meta.get("uid")
        key = _SPEC_PAYLOAD.get(self.view.kind, "")
        payload = (meta.get("annotations") or {}).get(key)
        generation = meta.get("generation")
        remembered = self._specs.get(uid) if uid else None
        out: Obj
        try:
            if remembered is not None and remembered[:2] == (generation, payload) and "spec" in obj:
                # The response was decoded for this call alone: converted in place, not copied. Its
                # spec payload is the one remembered: dropped unread, so the conversion of the rest
                # (metadata and status) does not parse it again for a spec it no longer converts.
                rest = {k: v for k, v in obj.items() if k != "spec"}
                preserve.take(rest["metadata"], (key,))
                out = cast(Obj, convert(rest, self.view.api_version, owned=True))
                out["spec"] = remembered[2]
                if remembered[3] is not None:  # what the spec's conversion records beside it
                    metadata: Obj = out.setdefault("metadata", {})
                    metadata.setdefault("annotations", {})[key] = remembered[3]
            else:
                out = cast(Obj, convert(obj, self.view.api_version, owned=True))
        except ConversionError as err:
            # A v1beta1 object that v1alpha1 cannot hold (the API server accepted it, so this is a
            # gap in conversion): reconcilers see it as stored, and refuse it with a condition.
            log.error(
                "Cannot read object in the operator's version",
                kind=self.view.kind,
                namespace=meta.get("namespace"),
                name=meta.get("name"),
                error=str(err),
            )
            return obj
        if uid and generation is not None and "spec" in out:
            metadata_out: Obj = out.get("metadata") or {}
            carried = (metadata_out.get("annotations") or {}).get(key)
            self._specs[uid] = (generation, payload, out["spec"], carried)
            self._specs.move_to_end(uid)
            while len(self._specs) > SPEC_MEMORY:
                self._specs.popitem(last=False)
        return out

    def encode(self, obj: Obj) -> Obj:
        return convert(obj, self.wire.api_version)


def storage_codecs(stored_as_v1beta1: frozenset[str]) -> dict[Resource, VersionCodec]:
    """A codec for every converted kind whose code reads another version than its CRD stores (CRDs
    storing v1beta1 given by plural): a kind read as v1alpha1 whose CRD stores v1beta1, and a kind
    read as v1beta1 (`READ_AS_STORED`) whose CRD, an older release's, stores v1alpha1. Every other
    kind is spoken in the version its code reads, which needs no conversion either."""
    codecs: dict[Resource, VersionCodec] = {}
    for view in CONVERTED:
        as_beta = view.plural in stored_as_v1beta1
        if view in READ_AS_STORED and not as_beta:
            codecs[view] = StorageCodec(view, older(view))
        elif view not in READ_AS_STORED and as_beta:
            codecs[view] = StorageCodec(view, stored(view))
    return codecs


def every_storage_codec() -> dict[Resource, VersionCodec]:
    """The codecs for this release's CRDs (`api.v1beta1.STORED`), for clients of a cluster known to
    run them (benchmarks, fault runs): they then need no conversion webhook to be reachable."""
    return storage_codecs(frozenset(view.plural for view in CONVERTED if view.kind in v1beta1.STORED))


__all__ = [
    "CONVERTED",
    "READ_AS_STORED",
    "StorageCodec",
    "every_storage_codec",
    "older",
    "storage_codecs",
    "stored",
]
