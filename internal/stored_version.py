"""The operator speaks Dynamo's converted kinds in their storage version, nvidia.com/v1beta1.

The graph (`kinds.DGD`), the component (`kinds.DCD`), the scaling adapter (`kinds.DGDSA`) and the
request (`kinds.DGDR`) are read, cached and written in v1beta1, so none of the operator's own
requests makes the API server call the conversion webhook, and its cache holds no converted copy.
Where generation still reads the v1alpha1 form (a graph's or a component's spec, a request's), it
lowers the object itself, once per change of it, with the same pure functions the webhook serves
(`api.conversion`, lossless both ways): internal/dynamo/graph/lowering.py, component/lowering.py,
dgdr/view.py.

To a CRD an older release installed (stored as v1alpha1, until the storage migration), these kinds
are spoken in v1alpha1 on the wire and converted to v1beta1 as they arrive (`StorageCodec`).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, Final, cast

import structlog
from dynamo_operator.api.conversion import ConversionError, convert, preserve
from dynamo_operator.api.v1alpha1 import groupversion as alpha
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

# The four kinds with a v1beta1 form, by the descriptor the operator's code reads them through: their
# storage version, v1beta1.
CONVERTED: Final = (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)


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
    """The wire's version to the code's and back (`internal.client.codec.VersionCodec`): for the
    operator, v1alpha1 on the wire of a CRD that still stores it and v1beta1 to the code; for a
    client of the tests or of a user's tooling, v1beta1 on the wire and v1alpha1 to its code.

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
    """A codec for every converted kind whose CRD (given by plural: those storing v1beta1) still
    stores v1alpha1, an older release's: spoken in v1alpha1 on the wire, read as v1beta1. A kind
    whose CRD stores v1beta1 needs none."""
    return {
        view: StorageCodec(view, older(view)) for view in CONVERTED if view.plural not in stored_as_v1beta1
    }


def speaking_v1alpha1(*views: Resource) -> dict[Resource, VersionCodec]:
    """Codecs for a client that reads and writes the converted kinds `views` in v1alpha1 from CRDs
    that store v1beta1 (this release's), converting in process: benchmarks, fault runs and tests that
    write v1alpha1 manifests need no conversion webhook then. The operator itself needs none."""
    return {view: StorageCodec(older(view), view) for view in views}


__all__ = [
    "CONVERTED",
    "StorageCodec",
    "older",
    "speaking_v1alpha1",
    "storage_codecs",
]
