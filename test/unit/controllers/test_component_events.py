"""Which DCDs announce their workload's first creation with an Event of their own."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamocomponentdeployment import part_of_a_graph


def dcd(*refs: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "g-frontend", "namespace": "ns", "ownerReferences": list(refs)}}


def ref(kind: str, api_version: str, *, controller: bool = True) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": "g", "uid": "u", "controller": controller}


@pytest.mark.parametrize(
    ("component", "graph_owned"),
    [
        pytest.param(dcd(ref("DynamoGraphDeployment", "nvidia.com/v1alpha1")), True, id="graph-controlled"),
        pytest.param(dcd(ref("DynamoGraphDeployment", "nvidia.com/v1beta1")), True, id="graph-other-version"),
        pytest.param(dcd(), False, id="standalone"),
        pytest.param(
            dcd(ref("DynamoGraphDeployment", "nvidia.com/v1alpha1", controller=False)),
            False,
            id="owner-not-controller",
        ),
        pytest.param(dcd(ref("DynamoGraphDeployment", "example.org/v1")), False, id="same-kind-other-group"),
        pytest.param(dcd(ref("Deployment", "apps/v1")), False, id="other-controller"),
    ],
)
def test_only_a_dcd_its_graph_controls_is_part_of_a_graph(
    component: dict[str, Any], graph_owned: bool
) -> None:
    """A graph's Event already named its components; a DCD a user applied on its own (or one
    something else controls) announces what it creates."""
    assert part_of_a_graph(component) is graph_owned
