"""The tests' view of DynamoComponentDeployments: v1alpha1.

The operator reads and writes DCDs as stored, in v1beta1 (`kinds.DCD`). The integration tests were
written against the v1alpha1 form (their manifests, and assertions such as `status.service`), so
their clients convert DCDs in process, as the operator's client once did: a v1alpha1 body is sent as
v1beta1, and every DCD read comes back as v1alpha1. No request of theirs needs the conversion
webhook for it. What the operator itself reads is pinned by the tests of `kinds.DCD` and the
stored-form tests (test/unit/dynamo/test_stored_dcd.py).
"""

from __future__ import annotations

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.stored_version import StorageCodec, every_storage_codec, older


def alpha_dcds() -> dict[Resource, VersionCodec]:
    """The codec that reads and writes `kinds.DCD` as v1alpha1 for a test."""
    return {kinds.DCD: StorageCodec(older(kinds.DCD), kinds.DCD)}


def codecs_for_tests() -> dict[Resource, VersionCodec]:
    """The operator's codecs for this release's CRDs, with DCDs in the tests' view."""
    return {**every_storage_codec(), **alpha_dcds()}
