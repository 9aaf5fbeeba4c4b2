"""A workload's replica counts move between a DCD's `status.component` (v1beta1, as stored) and a
graph's `status.services[x]` (v1alpha1) by the conversion webhook's own rule, so the graph reports
what it reported when the DCD was read through the webhook's conversion."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal.dynamo.common.inputs import ComponentReplicas, ServiceReplicas
from dynamo_operator.internal.dynamo.status.replicas import as_component_replicas, as_service_replicas

COUNTS = {"replicas": 2, "updatedReplicas": 1, "readyReplicas": 1, "availableReplicas": 1}


def _dcd(version: str, status: dict[str, Any]) -> dict[str, Any]:
    spec = {"componentType": "worker"} if version == V1ALPHA1 else {"type": "worker"}
    meta = {"name": "w", "namespace": "ns"}
    return {
        "apiVersion": version,
        "kind": "DynamoComponentDeployment",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


@pytest.mark.parametrize(
    "service",
    [
        pytest.param({"componentKind": "Deployment", "componentName": "w", **COUNTS}, id="named-once"),
        pytest.param(
            {"componentKind": "LeaderWorkerSet", "componentName": "w-0", "componentNames": ["w-0"], **COUNTS},
            id="named-twice",
        ),
        pytest.param(
            {"componentKind": "LeaderWorkerSet", "componentName": "", "componentNames": [], **COUNTS},
            id="unnamed",
        ),
    ],
)
def test_counts_measured_of_a_workload_are_written_as_the_conversion_stores_them(
    service: ServiceReplicas,
) -> None:
    stored = convert(_dcd(V1ALPHA1, {"service": service}), V1BETA1)
    assert as_component_replicas(service) == stored["status"]["component"]


@pytest.mark.parametrize(
    "component",
    [
        pytest.param({"componentKind": "Deployment", "componentNames": ["w"], **COUNTS}, id="one-name"),
        pytest.param(
            {"componentKind": "PodClique", "componentNames": ["a", "b"], **COUNTS}, id="the-last-name"
        ),
        pytest.param({"componentKind": "Deployment", **COUNTS}, id="no-names"),
    ],
)
def test_a_components_counts_read_as_a_graph_service_as_the_conversion_shows_them(
    component: ComponentReplicas,
) -> None:
    shown = convert(_dcd(V1BETA1, {"component": component}), V1ALPHA1)
    assert as_service_replicas(component) == shown["status"]["service"]
