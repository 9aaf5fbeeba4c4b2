"""The tests' view of DynamoComponentDeployments and DynamoGraphDeployments: v1alpha1.

The operator reads and writes graphs and DCDs as stored, in v1beta1 (`kinds.DGD`, `kinds.DCD`). The
integration tests were written against the v1alpha1 form (their manifests, and assertions such as
`status.services` or `status.service`), so their clients convert these kinds in process, as the
operator's client once did: a v1alpha1 body is sent as v1beta1, and every read comes back as
v1alpha1. No request of theirs needs the conversion webhook for it. What the operator itself reads is
pinned by the tests of `kinds.DGD` and `kinds.DCD` and the stored-form tests
(test/unit/dynamo/test_stored_dcd.py, test_graph_lowering.py).
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.stored_version import StorageCodec, every_storage_codec, older


def alpha_dcds() -> dict[Resource, VersionCodec]:
    """The codec that reads and writes `kinds.DCD` as v1alpha1 for a test."""
    return {kinds.DCD: StorageCodec(older(kinds.DCD), kinds.DCD)}


def alpha_graphs() -> dict[Resource, VersionCodec]:
    """The codec that reads and writes `kinds.DGD` as v1alpha1 for a test."""
    return {kinds.DGD: StorageCodec(older(kinds.DGD), kinds.DGD)}


def codecs_for_tests() -> dict[Resource, VersionCodec]:
    """The operator's codecs for this release's CRDs, with graphs and DCDs in the tests' view."""
    return {**every_storage_codec(), **alpha_dcds(), **alpha_graphs()}


def stored_graph(alpha: dict[str, Any]) -> dict[str, Any]:
    """A graph written in the tests' v1alpha1 form (apiVersion and kind may be left out) as the
    operator reads it: stored, in v1beta1."""
    full = {"apiVersion": V1ALPHA1, "kind": kinds.DGD.kind, **alpha}
    return dict(convert(full, V1BETA1))
