"""Owner references to the four converted kinds name their storage version, nvidia.com/v1beta1, as
upstream's do, whichever version the owner was read in; other owners keep their own version."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.dynamo.common.objects import owner_reference


def _owner(api_version: str, kind: str) -> dict[str, object]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "o", "uid": "u"}}


@pytest.mark.parametrize(
    "kind",
    [
        "DynamoGraphDeployment",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentScalingAdapter",
        "DynamoGraphDeploymentRequest",
    ],
)
def test_converted_kinds_are_named_by_their_storage_version(kind: str) -> None:
    ref = owner_reference(_owner("nvidia.com/v1alpha1", kind))
    assert ref is not None and ref["apiVersion"] == "nvidia.com/v1beta1"


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("nvidia.com/v1alpha1", "DynamoModel"), ("grove.io/v1alpha1", "PodCliqueSet"), ("v1", "ConfigMap")],
)
def test_other_owners_keep_their_version(api_version: str, kind: str) -> None:
    ref = owner_reference(_owner(api_version, kind))
    assert ref is not None and ref["apiVersion"] == api_version
