"""The tests' view of DynamoGraphDeployments, DynamoComponentDeployments and requests: v1alpha1.

The operator reads and writes these kinds as stored, in v1beta1 (`kinds.DGD`, `kinds.DCD`,
`kinds.DGDR`). The integration tests were written against the v1alpha1 form (their manifests, and
assertions such as `status.services` or `status.service`), so their clients convert these kinds in
process, as the operator's client once did: a v1alpha1 body is sent as v1beta1, and every read comes
back as v1alpha1. No request of theirs needs the conversion webhook for it. What the operator itself
reads is pinned by the tests of the stored forms (test/unit/dynamo/test_stored_dcd.py,
test_graph_lowering.py, and `testsupport.api.as_stored` reads in integration tests).
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.stored_version import StorageCodec, older, speaking_v1alpha1


def alpha_view() -> dict[Resource, VersionCodec]:
    """The codecs of every kind the tests read in v1alpha1: graphs and DCDs converted in process, and
    requests sent to and read from the v1alpha1 endpoint, through the webhook, as a user's v1alpha1
    manifest is (scaling adapters are read as stored). A request is validated in the version it is
    written in, and the tests' v1alpha1 requests (a node selector without a pod spec, say) are not
    all valid v1beta1 ones."""
    through_webhook = older(kinds.DGDR)
    return {
        **speaking_v1alpha1(kinds.DGD, kinds.DCD),
        kinds.DGDR: StorageCodec(through_webhook, through_webhook),
    }


def stored_graph(alpha: dict[str, Any]) -> dict[str, Any]:
    """A graph written in the tests' v1alpha1 form (apiVersion and kind may be left out) as the
    operator reads it: stored, in v1beta1."""
    full = {"apiVersion": V1ALPHA1, "kind": kinds.DGD.kind, **alpha}
    return dict(convert(full, V1BETA1))
