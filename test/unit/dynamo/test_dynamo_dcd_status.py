"""A DCD's status, written as stored (v1beta1): its two conditions over the old ones, the workload's
replica counts as `status.component`, kept when nothing new is known."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.status.dcd_status import component_status, rejected_status
from dynamo_operator.internal.dynamo.status.readiness import WorkloadReadiness, ready_conditions

T0 = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
SERVICE = {"componentKind": "Deployment", "componentName": "c", "replicas": 1, "availableReplicas": 1}
# The same counts as a DCD's status holds them (v1beta1 names the workload in `componentNames`).
COMPONENT = {"componentKind": "Deployment", "componentNames": ["c"], "replicas": 1, "availableReplicas": 1}
OLD_COMPONENT = {"componentKind": "Deployment", "componentNames": ["c"], "replicas": 2}


def by_type(status: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in status["conditions"]}


@pytest.mark.parametrize(
    ("old", "service", "expected"),
    [
        pytest.param({}, SERVICE, COMPONENT, id="new-counts"),
        pytest.param({"component": OLD_COMPONENT}, SERVICE, COMPONENT, id="new-counts-replace-old"),
        pytest.param({"component": OLD_COMPONENT}, None, OLD_COMPONENT, id="no-counts-keeps-old"),
        pytest.param({}, None, None, id="no-counts-none-before"),
    ],
)
def test_replica_counts_are_the_new_ones_else_the_old(
    old: dict[str, Any], service: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    out = component_status(old, [], service=service, generation=4, now=T0)
    assert out.get("component") == expected
    assert "service" not in out  # v1alpha1's name for them
    assert out["observedGeneration"] == 4


def test_a_ready_component_says_so_in_both_conditions() -> None:
    verdict = WorkloadReadiness(True, "1/1 ready", SERVICE)
    out = component_status({}, ready_conditions(verdict), service=verdict.service, generation=1, now=T0)
    assert by_type(out) == {
        "Available": ("True", "DeploymentReady", "Deployment is ready: 1/1 ready"),
        "DynamoComponentReady": ("True", "ComponentReady", "1/1 ready"),
    }


def test_a_rejected_component_names_the_reason_in_both_conditions_and_keeps_its_counts() -> None:
    out = rejected_status(
        {"component": OLD_COMPONENT}, reason="MissingAPI", message="m", generation=2, now=T0
    )
    assert by_type(out) == {
        "Available": ("False", "MissingAPI", "m"),
        "DynamoComponentReady": ("False", "MissingAPI", "m"),
    }
    assert out["component"] == OLD_COMPONENT
