"""status.deploymentInfo from the created graph's status (read as stored: `components`), summed as
upstream sums them."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal.dynamo.dgdr.deployment import deployment_info
from dynamo_operator.internal.dynamo.dgdr.machine import DeploymentInfo


def _graph(status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "g"}, "status": status}


def test_replicas_and_available_replicas_are_summed_over_the_services() -> None:
    services = {
        "Frontend": {"componentKind": "Deployment", "replicas": 1, "availableReplicas": 1},
        "VllmWorker": {"componentKind": "Deployment", "replicas": 3, "availableReplicas": 1},
    }
    assert deployment_info(_graph({"state": "pending", "components": services})) == DeploymentInfo(4, 2)


def test_a_service_without_available_replicas_counts_none_available() -> None:
    services = {"W": {"componentKind": "LeaderWorkerSet", "replicas": 2, "readyReplicas": 2}}
    assert deployment_info(_graph({"components": services})) == DeploymentInfo(2, 0)


def test_a_graph_without_service_status_yet_has_zero_replicas() -> None:
    assert deployment_info(_graph(None)) == DeploymentInfo(0, 0)
    assert deployment_info(_graph({"state": "pending"})) == DeploymentInfo(0, 0)


def test_counts_that_are_not_counts_are_ignored() -> None:
    services = {"A": {"replicas": True, "availableReplicas": -1}, "B": "x", "C": {"replicas": "2"}}
    assert deployment_info(_graph({"components": services})) == DeploymentInfo(0, 0)


def test_a_sum_past_int32_is_the_largest_int32() -> None:
    services = {str(i): {"replicas": 2**31 - 1, "availableReplicas": 2**31 - 1} for i in range(3)}
    assert deployment_info(_graph({"components": services})) == DeploymentInfo(2**31 - 1, 2**31 - 1)
