"""The operator speaks Dynamo's converted kinds in their storage version, nvidia.com/v1beta1.

Generation, status and rollout read the v1alpha1 form (`kinds.DGD` and friends). On the wire, the
client lists, watches and writes v1beta1, the version the API server stores, so none of the
operator's own requests makes the API server call the conversion webhook. Each object is converted
in process once, as it arrives (the cache keeps the converted form) or as it leaves: the same pure
functions the webhook serves (`api.conversion`), and the round trip is lossless both ways.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import structlog
from dynamo_operator.api import v1beta1
from dynamo_operator.api.conversion import V1BETA1, ConversionError, convert
from dynamo_operator.api.v1beta1 import groupversion as beta
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

# The four kinds with a v1beta1 form, by the descriptor the operator's code uses.
CONVERTED: Final = (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)


def stored(view: Resource) -> Resource:
    """The v1beta1 descriptor of a converted kind's collection."""
    return Resource(view.group, beta.VERSION, view.plural, view.kind, view.namespaced)


@dataclass(frozen=True, slots=True)
class StorageCodec:
    """v1beta1 on the wire, v1alpha1 to the operator's code (`internal.client.codec.VersionCodec`)."""

    view: Resource
    wire: Resource

    def decode(self, obj: Obj) -> Obj:
        try:
            return convert(obj, self.view.api_version)
        except ConversionError as err:
            # A v1beta1 object that v1alpha1 cannot hold (the API server accepted it, so this is a
            # gap in conversion): reconcilers see it as stored, and refuse it with a condition.
            meta = obj.get("metadata") or {}
            log.error(
                "Cannot read object in the operator's version",
                kind=self.view.kind,
                namespace=meta.get("namespace"),
                name=meta.get("name"),
                error=str(err),
            )
            return obj

    def encode(self, obj: Obj) -> Obj:
        return convert(obj, V1BETA1)


def storage_codecs(stored_as_v1beta1: frozenset[str]) -> dict[Resource, VersionCodec]:
    """A codec for every converted kind whose CRD stores v1beta1 (by plural); a kind stored as
    v1alpha1 (an older release's CRD, or DynamoGraphDeploymentRequest in this one) is spoken in
    v1alpha1, which needs no conversion either."""
    return {view: StorageCodec(view, stored(view)) for view in CONVERTED if view.plural in stored_as_v1beta1}


def every_storage_codec() -> dict[Resource, VersionCodec]:
    """The codecs for this release's CRDs (`api.v1beta1.STORED`), for clients of a cluster known to
    run them (benchmarks, fault runs): they then need no conversion webhook to be reachable."""
    return storage_codecs(frozenset(view.plural for view in CONVERTED if view.kind in v1beta1.STORED))


__all__ = ["CONVERTED", "StorageCodec", "every_storage_codec", "storage_codecs", "stored"]
