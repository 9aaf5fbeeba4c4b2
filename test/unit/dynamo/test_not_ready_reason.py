"""The graph's `Ready` reason says why it is not ready (internal/dynamo/status/not_ready_reason.py):
capacity, a rollout, pods not ready, several of these, or not told; as upstream 2a6da14c names them."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.status.dgd_status import explain, synced_status
from dynamo_operator.internal.dynamo.status.not_ready_reason import aggregate, component_not_ready_reason
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus, graph_status

Obj = dict[str, Any]
T0 = datetime.datetime(2026, 11, 28, 7, 0, tzinfo=datetime.UTC)


def dcd(
    available_reason: str = "DeploymentNotReady",
    *,
    available: str = "False",
    generation: int = 2,
    observed: int = 2,
    replicas: int = 2,
    updated: int = 2,
) -> Obj:
    """A DCD as its controller reports it."""
    return {
        "metadata": {"name": "g-w", "generation": generation},
        "status": {
            "observedGeneration": observed,
            "conditions": [{"type": "Available", "status": available, "reason": available_reason}],
            "component": {"componentKind": "Deployment", "replicas": replicas, "updatedReplicas": updated},
        },
    }


@pytest.mark.parametrize(
    ("component", "expected"),
    [
        pytest.param(dcd("PodsUnschedulable"), "insufficient_capacity", id="unschedulable-pods"),
        pytest.param(
            dcd("PodsUnschedulable", replicas=3, updated=1),
            "insufficient_capacity",
            id="a-rollout-whose-new-pods-cannot-be-placed-waits-for-capacity",
        ),
        pytest.param(dcd("PodsNotReady", replicas=3, updated=1), "updating", id="old-pods-beside-new"),
        pytest.param(dcd("PodsNotReady"), "pods_not_ready", id="placed-not-ready"),
        pytest.param(dcd("CrashLoopBackOff"), "pods_not_ready", id="crash-loop"),
        pytest.param(dcd("ImagePullBackOff"), "pods_not_ready", id="image-pull"),
        pytest.param(dcd("ContainerCreateError"), "pods_not_ready", id="container-create-error"),
        pytest.param(dcd(), "some_resources_are_not_ready", id="no-pod-tells"),
        pytest.param(
            dcd("PodsNotReady", observed=1), "some_resources_are_not_ready", id="latest-spec-not-acted-on"
        ),
        pytest.param({"metadata": {"name": "g-w"}}, "some_resources_are_not_ready", id="no-status-yet"),
        pytest.param(None, "some_resources_are_not_ready", id="no-dcd-yet"),
    ],
)
def test_a_not_ready_component_is_classed_by_what_its_dcd_reports(
    component: Obj | None, expected: str
) -> None:
    assert component_not_ready_reason(component) == expected


@pytest.mark.parametrize(
    ("classes", "expected"),
    [
        pytest.param(["insufficient_capacity"], "insufficient_capacity", id="one"),
        pytest.param(["pods_not_ready", "pods_not_ready"], "pods_not_ready", id="all-the-same"),
        pytest.param(["insufficient_capacity", "updating"], "mixed_not_ready_reasons", id="different"),
        pytest.param(
            ["insufficient_capacity", "some_resources_are_not_ready"],
            "mixed_not_ready_reasons",
            id="one-not-told-is-a-class-too",
        ),
        pytest.param([], "some_resources_are_not_ready", id="none"),
    ],
)
def test_the_graphs_reason_is_its_components_shared_class_or_mixed(classes: list[str], expected: str) -> None:
    assert aggregate(classes) == expected


SERVICES = {"Frontend": {"replicas": 1}, "Worker": {"replicas": 2}}


def test_a_graph_whose_only_unready_component_cannot_be_placed_is_insufficient_capacity() -> None:
    """A ready frontend does not count; the worker's unschedulable pods make the graph's reason."""
    frontend = dcd("DeploymentReady", available="True", replicas=1, updated=1)
    verdict = graph_status(SERVICES, {"Frontend": frontend, "Worker": dcd("PodsUnschedulable")})
    assert (verdict.ready, verdict.reason) == (False, "insufficient_capacity")


def test_a_graph_with_components_blocked_for_different_causes_is_mixed() -> None:
    verdict = graph_status(
        SERVICES, {"Frontend": dcd("CrashLoopBackOff"), "Worker": dcd("PodsUnschedulable")}
    )
    assert verdict.reason == "mixed_not_ready_reasons"


def test_a_ready_graph_has_no_not_ready_reason() -> None:
    ready = dcd("DeploymentReady", available="True")
    assert graph_status(SERVICES, {"Frontend": ready, "Worker": ready}).reason == ""


def test_the_ready_condition_carries_the_classified_reason() -> None:
    verdict = GraphStatus(False, "Worker: 0/2 ready (2 pods unschedulable)", reason="insufficient_capacity")
    [ready] = synced_status({}, verdict, generation=1, now=T0)["conditions"]
    assert (ready["status"], ready["reason"]) == ("False", "insufficient_capacity")


def test_a_verdict_that_does_not_classify_keeps_the_generic_reason() -> None:
    """A pathway that sets no reason (Grove's status here) still writes `some_resources_are_not_ready`."""
    [ready] = synced_status({}, GraphStatus(False, "Worker: 0/2 ready"), generation=1, now=T0)["conditions"]
    assert ready["reason"] == "some_resources_are_not_ready"


def test_explaining_a_verdict_keeps_its_reason() -> None:
    verdict = GraphStatus(False, "Worker: 0/2 ready", reason="updating")
    assert explain(verdict, keep_serving="old workers serve").reason == "updating"
