"""Status helpers (readiness of workloads, DGD Ready message) and the restart state machine."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.restart import next_restart_status, restart_selection, service_restarted
from dynamo_operator.internal.dynamo.status import (
    component_conditions,
    dcd_available,
    deployment_ready,
    graph_status,
    leader_worker_set_ready,
    lws_replica_status,
    merge_conditions,
)

Obj = dict[str, Any]
AVAILABLE = [{"type": "Available", "status": "True"}]


def _dep(replicas: int = 2, gen: int = 1, **status: Any) -> Obj:
    base = {
        "observedGeneration": 1,
        "replicas": 2,
        "updatedReplicas": 2,
        "availableReplicas": 2,
        "conditions": AVAILABLE,
    }
    return {
        "metadata": {"name": "d", "generation": gen},
        "spec": {"replicas": replicas},
        "status": {**base, **status},
    }


@pytest.mark.parametrize(
    ("dep", "ready"),
    [
        pytest.param(_dep(), True, id="all-ready"),
        pytest.param(_dep(gen=2), False, id="generation-not-observed"),
        pytest.param(_dep(updatedReplicas=1), False, id="not-all-updated"),
        pytest.param(_dep(availableReplicas=1), False, id="not-all-available"),
        pytest.param(_dep(replicas=1), False, id="old-pods-still-running"),
        pytest.param(_dep(conditions=[]), False, id="no-available-condition"),
        pytest.param(_dep(replicas=0, availableReplicas=0), True, id="scaled-to-zero"),
        pytest.param({**_dep(), "spec": {"replicas": 2, "paused": True}}, False, id="paused"),
    ],
)
def test_deployment_ready(dep: Obj, ready: bool) -> None:
    """Ready iff the latest template runs on every desired replica and the Deployment is Available."""
    assert deployment_ready(dep) is ready


@pytest.mark.parametrize(
    ("status", "ready"),
    [
        pytest.param({"readyReplicas": 1, "conditions": AVAILABLE}, True, id="ready"),
        pytest.param({"readyReplicas": 0, "conditions": AVAILABLE}, False, id="no-ready-group"),
        pytest.param({"readyReplicas": 1}, False, id="not-available"),
    ],
)
def test_lws_ready(status: Obj, ready: bool) -> None:
    """An LWS is ready when its group is ready and it reports Available."""
    assert (
        leader_worker_set_ready({"metadata": {"generation": 1}, "spec": {"replicas": 1}, "status": status})
        is ready
    )


def test_lws_replica_status_sums() -> None:
    """Replica counts are summed over a component's LWSs; names sorted."""
    sets = [
        {"metadata": {"name": "g-w-1"}, "status": {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 0}},
        {"metadata": {"name": "g-w-0"}, "status": {"replicas": 1, "updatedReplicas": 1, "readyReplicas": 1}},
    ]
    assert lws_replica_status(sets) == {
        "componentKind": "LeaderWorkerSet",
        "componentName": "g-w-0",
        "componentNames": ["g-w-0", "g-w-1"],
        "replicas": 2,
        "updatedReplicas": 2,
        "readyReplicas": 1,
    }


@pytest.mark.parametrize(
    ("ready", "multinode", "reason"),
    [
        (True, False, "DeploymentReady"),
        (False, False, "DeploymentNotReady"),
        (True, True, "AllLeaderWorkerSetsReady"),
        (False, True, "SomeLeaderWorkerSetsNotReady"),
    ],
)
def test_component_conditions(ready: bool, multinode: bool, reason: str) -> None:
    """Available + DynamoComponentReady mirror the workload's readiness."""
    available, component = component_conditions(ready, multinode=multinode)
    assert (available["reason"], available["status"], component["status"]) == (reason, str(ready), str(ready))


def test_merge_conditions_keeps_transition_time_when_status_unchanged() -> None:
    """lastTransitionTime moves only when the status flips."""
    old = [{"type": "Ready", "status": "False", "lastTransitionTime": "t0", "reason": "a"}]
    same = merge_conditions(old, [{"type": "Ready", "status": "False", "reason": "b"}], now="t1")
    flipped = merge_conditions(old, [{"type": "Ready", "status": "True", "reason": "c"}], now="t1")
    assert (same[0]["lastTransitionTime"], flipped[0]["lastTransitionTime"]) == ("t0", "t1")


def _dcd(gen: int = 1, observed: int = 1, available: bool = True, service: Obj | None = None) -> Obj:
    status: Obj = {
        "observedGeneration": observed,
        "conditions": [{"type": "Available", "status": str(available), "message": "Deployment is not ready"}],
    }
    if service:
        status["service"] = service
    return {"metadata": {"generation": gen}, "status": status}


@pytest.mark.parametrize(
    ("dcd", "ok"),
    [
        pytest.param(_dcd(), True, id="available"),
        pytest.param(_dcd(gen=2), False, id="generation-not-observed"),
        pytest.param(_dcd(available=False), False, id="not-available"),
        pytest.param(None, False, id="missing"),
    ],
)
def test_dcd_available(dcd: Obj | None, ok: bool) -> None:
    """A DCD is ready when it observed its generation and is Available."""
    assert dcd_available(dcd) is ok


GRAPH = {"metadata": {"name": "g"}, "spec": {"services": {"F": {}, "W": {}}}}


def test_graph_status_all_ready() -> None:
    """All DCDs ready → successful, Ready=True, services filled."""
    svc = {"componentKind": "Deployment", "componentName": "g-f", "replicas": 1, "updatedReplicas": 1}
    status = graph_status(GRAPH, {"F": _dcd(service=svc), "W": _dcd(service=svc)})
    assert status["state"] == "successful"
    assert status["conditions"][0] == {
        "type": "Ready",
        "status": "True",
        "reason": "all_resources_are_ready",
        "message": "All resources are ready",
    }
    assert set(status["services"]) == {"F", "W"}


def test_graph_status_message_names_what_is_not_ready() -> None:
    """Not ready → pending, and the message names each unready DCD (sorted) and why."""
    status = graph_status(
        GRAPH, {"F": None, "W": _dcd(available=False, service={"replicas": 2, "readyReplicas": 1})}
    )
    cond = status["conditions"][0]
    assert status["state"] == "pending" and cond["status"] == "False"
    assert cond["message"] == (
        "Resources not ready: g-f: not created yet; g-w: Deployment is not ready (replicas=2, ready=1)"
    )


# --- restart ------------------------------------------------------------------------------------------

SERVICES = ["a", "b", "c"]


def _seq(order: list[str] | None = None) -> Obj:
    strategy: Obj = {"type": "Sequential"}
    if order:
        strategy["order"] = order
    return {"id": "r1", "strategy": strategy}


PAR = {"id": "r1", "strategy": {"type": "Parallel"}}


@pytest.mark.parametrize(
    ("restart", "previous", "done", "first", "expected"),
    [
        pytest.param(None, None, set(), False, None, id="no-restart"),
        pytest.param(
            None,
            {"observedID": "r0", "phase": "Completed"},
            set(),
            False,
            {"observedID": "r0", "phase": "Completed"},
            id="keep-terminal",
        ),
        pytest.param(
            _seq(),
            None,
            set(),
            True,
            {"observedID": "r1", "phase": "Completed"},
            id="created-with-id-is-not-a-restart",
        ),
        pytest.param(
            _seq(),
            None,
            set(),
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]},
            id="seq-start",
        ),
        pytest.param(
            _seq(["c", "a", "b"]),
            None,
            set(),
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["c"]},
            id="seq-start-order",
        ),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]},
            set(),
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]},
            id="seq-wait",
        ),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["a"]},
            {"a"},
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]},
            id="seq-advance",
        ),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["c"]},
            {"c"},
            False,
            {"observedID": "r1", "phase": "Completed"},
            id="seq-complete",
        ),
        pytest.param(
            PAR,
            None,
            set(),
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": SERVICES},
            id="par-start",
        ),
        pytest.param(
            PAR,
            {"observedID": "r1", "phase": "Restarting", "inProgress": SERVICES},
            {"a", "c"},
            False,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]},
            id="par-progress",
        ),
        pytest.param(
            PAR,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]},
            {"b"},
            False,
            {"observedID": "r1", "phase": "Completed"},
            id="par-complete",
        ),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Completed"},
            set(),
            False,
            {"observedID": "r1", "phase": "Completed"},
            id="same-id-done",
        ),
        pytest.param(
            {**_seq(), "id": "r2"},
            {"observedID": "r1", "phase": "Completed"},
            set(),
            False,
            {"observedID": "r2", "phase": "Restarting", "inProgress": ["a"]},
            id="new-id-restarts",
        ),
    ],
)
def test_next_restart_status(
    restart: Obj | None, previous: Obj | None, done: set[str], first: bool, expected: Obj | None
) -> None:
    """Each arrow of the restart state machine."""
    assert (
        next_restart_status(restart, previous, SERVICES, lambda s: s in done, first_deploy=first) == expected
    )


@pytest.mark.parametrize(
    ("restart", "status", "existing", "expected"),
    [
        pytest.param(_seq(), None, {"a": "r0"}, {"a": "r0"}, id="no-status-keeps-existing"),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]},
            {},
            {"a": "r1", "b": "r1"},
            id="seq-prefix",
        ),
        pytest.param(
            PAR,
            {"observedID": "r1", "phase": "Restarting", "inProgress": ["b"]},
            {},
            {s: "r1" for s in SERVICES},
            id="parallel-all",
        ),
        pytest.param(
            _seq(),
            {"observedID": "r1", "phase": "Completed"},
            {},
            {s: "r1" for s in SERVICES},
            id="completed-all",
        ),
        pytest.param(
            None,
            {"observedID": "r1", "phase": "Completed"},
            {},
            {s: "r1" for s in SERVICES},
            id="id-removed-keeps-pods-stable",
        ),
    ],
)
def test_restart_selection(
    restart: Obj | None, status: Obj | None, existing: dict[str, str], expected: dict[str, str]
) -> None:
    """Which services carry the restart id."""
    assert restart_selection(restart, status, SERVICES, existing) == expected


@pytest.mark.parametrize(
    ("annotation", "observed", "available", "ok"),
    [
        pytest.param("r1", 2, True, True, id="restarted"),
        pytest.param("r0", 2, True, False, id="old-id"),
        pytest.param("r1", 1, True, False, id="not-observed"),
        pytest.param("r1", 2, False, False, id="not-available"),
    ],
)
def test_service_restarted(annotation: str, observed: int, available: bool, ok: bool) -> None:
    """A service finished restarting when its DCD carries the id, was observed, and is Available."""
    dcd = {
        "metadata": {"generation": 2},
        "spec": {"annotations": {"nvidia.com/restartAt": annotation}},
        "status": {
            "observedGeneration": observed,
            "conditions": [{"type": "Available", "status": str(available)}],
        },
    }
    assert service_restarted(dcd, "r1") is ok
