"""Which child updates finish a wait (the urgent lane's predicates): a workload or a DCD turning ready."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.status.readiness import became_ready, dcd_became_rolled, workload_ready

Obj = dict[str, Any]


def deployment(*, available: int, generation: int = 1, observed: int = 1, replicas: int = 1) -> Obj:
    return {
        "kind": "Deployment",
        "metadata": {"name": "d", "generation": generation},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": observed,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": available,
            "availableReplicas": available,
            "conditions": [{"type": "Available", "status": "True" if available else "False"}],
        },
    }


def dcd(*, available: bool, generation: int = 1, observed: int = 1) -> dict[str, Any]:
    return {
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "c", "generation": generation},
        "status": {
            "observedGeneration": observed,
            "conditions": [{"type": "Available", "status": "True" if available else "False"}],
        },
    }


def test_a_deployment_whose_pods_became_available_became_ready() -> None:
    assert became_ready(deployment(available=0), deployment(available=1))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (deployment(available=1), deployment(available=1)),  # still ready: nothing finished now
        (deployment(available=0), deployment(available=0)),  # still starting
        (deployment(available=1), deployment(available=0)),  # lost a pod
        (deployment(available=0), deployment(available=1, generation=2, observed=1)),  # a new spec
    ],
    ids=["still-ready", "still-starting", "became-unready", "spec-not-observed"],
)
def test_other_deployment_updates_are_not_a_readiness_transition(old: Any, new: Any) -> None:
    assert not became_ready(old, new)


def test_only_workload_kinds_are_judged_ready() -> None:
    service = {"kind": "Service", "metadata": {"name": "s"}, "status": {}}
    assert not workload_ready(service)
    assert not became_ready(service, service)


def test_a_leaderworkerset_whose_groups_became_ready_became_ready() -> None:
    def lws(ready: int) -> dict[str, Any]:
        return {
            "kind": "LeaderWorkerSet",
            "metadata": {"name": "w", "generation": 1},
            "spec": {"replicas": 1},
            "status": {
                "observedGeneration": 1,
                "replicas": 1,
                "updatedReplicas": 1,
                "readyReplicas": ready,
                "conditions": [{"type": "Available", "status": "True" if ready else "False"}],
            },
        }

    assert workload_ready(lws(1)) == became_ready(lws(0), lws(1))


def test_a_dcd_reporting_available_for_its_spec_became_rolled() -> None:
    assert dcd_became_rolled(dcd(available=False), dcd(available=True))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (dcd(available=True), dcd(available=True)),
        (dcd(available=True), dcd(available=False)),
        (dcd(available=False), dcd(available=True, generation=2, observed=1)),
    ],
    ids=["still-available", "became-unavailable", "stale-status"],
)
def test_other_dcd_updates_are_not_a_readiness_transition(old: Any, new: Any) -> None:
    assert not dcd_became_rolled(old, new)
