"""A DGD's status from what a round found (refused, synced, rolling); Ready's time moves on a flip only."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.rollingupdate import RollingPlan
from dynamo_operator.internal.dynamo.status.dgd_status import explain, rejected_status, synced_status
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus

T0 = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=5)
SERVICES = {"Frontend": {"componentKind": "Deployment", "componentName": "g-frontend", "replicas": 1}}
# The same counts as the graph stores them (v1beta1 `status.components`): the workload is named in
# `componentNames`.
COMPONENTS = {"Frontend": {"componentKind": "Deployment", "componentNames": ["g-frontend"], "replicas": 1}}


def ready_of(status: dict[str, Any]) -> dict[str, Any]:
    [cond] = [c for c in status["conditions"] if c["type"] == "Ready"]
    return dict(cond)


@pytest.mark.parametrize(
    ("verdict", "rolling", "state", "ready"),
    [
        pytest.param(
            GraphStatus(True, "All resources are ready", SERVICES),
            None,
            "successful",
            ("True", "all_resources_are_ready", "All resources are ready"),
            id="ready",
        ),
        pytest.param(
            GraphStatus(False, "Frontend: 0/1 ready", SERVICES),
            None,
            "pending",
            ("False", "some_resources_are_not_ready", "Frontend: 0/1 ready"),
            id="not-ready",
        ),
        pytest.param(
            GraphStatus(True, "All resources are ready", SERVICES),
            RollingPlan(status={"phase": "InProgress"}),
            "pending",
            ("False", "rolling_update_in_progress", "Rolling update in progress: All resources are ready"),
            id="ready-but-rolling-is-pending",
        ),
        pytest.param(
            GraphStatus(True, "All resources are ready", SERVICES),
            RollingPlan(status={"phase": "Completed"}),
            "successful",
            ("True", "all_resources_are_ready", "All resources are ready"),
            id="rollout-completed-is-ready",
        ),
    ],
)
def test_a_synced_graph_states_its_readiness(
    verdict: GraphStatus, rolling: RollingPlan | None, state: str, ready: tuple[str, str, str]
) -> None:
    status, reason, message = ready
    out = synced_status({}, verdict, generation=3, rolling=rolling, now=T0)
    assert (out["state"], out["observedGeneration"], out["components"]) == (state, 3, COMPONENTS)
    assert ready_of(out) == {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-11-22T08:00:00Z",
        "observedGeneration": 3,
    }


@pytest.mark.parametrize(
    ("restart", "rolling", "keys"),
    [
        pytest.param(None, None, set(), id="neither"),
        pytest.param({"id": "r1", "phase": "Restarting"}, None, {"restart"}, id="restart"),
        pytest.param(None, RollingPlan(status={"phase": "Pending"}), {"rollingUpdate"}, id="rolling"),
        pytest.param(None, RollingPlan(status=None), set(), id="rolling-plan-without-status"),
    ],
)
def test_restart_and_rolling_progress_appear_only_when_given(
    restart: dict[str, Any] | None, rolling: RollingPlan | None, keys: set[str]
) -> None:
    old = {"restart": {"id": "r0"}, "rollingUpdate": {"phase": "Completed"}}
    out = synced_status(old, GraphStatus(True, "ok"), generation=1, restart=restart, rolling=rolling, now=T0)
    assert {"restart", "rollingUpdate"} & out.keys() == keys


def test_the_ready_time_stays_while_the_status_does_not_flip() -> None:
    first = synced_status({}, GraphStatus(False, "a: 0/1 ready"), generation=1, now=T0)
    second = synced_status(first, GraphStatus(False, "a: rolling"), generation=2, now=T1)
    assert ready_of(second)["lastTransitionTime"] == "2026-11-22T08:00:00Z"
    flipped = synced_status(second, GraphStatus(True, "All resources are ready"), generation=2, now=T1)
    assert ready_of(flipped)["lastTransitionTime"] == "2026-11-22T08:05:00Z"


def test_a_rejected_graph_fails_and_keeps_the_rest_of_its_status() -> None:
    old = synced_status({}, GraphStatus(True, "All resources are ready", SERVICES), generation=1, now=T0)
    out = rejected_status(old, reason="InvalidSpec", message="spec: bad", generation=2, now=T1)
    assert out["state"] == "failed"
    assert (out["components"], out["observedGeneration"]) == (COMPONENTS, 1)
    assert ready_of(out) == {
        "type": "Ready",
        "status": "False",
        "reason": "InvalidSpec",
        "message": "spec: bad",
        "lastTransitionTime": "2026-11-22T08:05:00Z",
        "observedGeneration": 2,
    }


def test_rejecting_again_with_the_same_words_changes_nothing() -> None:
    once = rejected_status({}, reason="NameCollision", message="m", generation=1, now=T0)
    assert rejected_status(once, reason="NameCollision", message="m", generation=1, now=T1) == once


@pytest.mark.parametrize(
    ("verdict", "keep_serving", "missing", "ready", "message"),
    [
        pytest.param(
            GraphStatus(True, "All resources are ready"),
            None,
            (),
            True,
            "All resources are ready",
            id="nothing",
        ),
        pytest.param(
            GraphStatus(False, "w: rolling"),
            "workers abc keep serving until workers def are ready",
            (),
            False,
            "w: rolling; workers abc keep serving until workers def are ready",
            id="old-workers-serve",
        ),
        pytest.param(
            GraphStatus(True, "All resources are ready"),
            None,
            ("data",),
            False,
            "waiting for PVC data",
            id="missing-pvc-replaces-all-ready",
        ),
        pytest.param(
            GraphStatus(False, "a: 0/1 ready"),
            None,
            ("data", "models"),
            False,
            "a: 0/1 ready; waiting for PVC data, models",
            id="missing-pvcs-appended",
        ),
    ],
)
def test_explain_adds_what_the_dcds_cannot_tell(
    verdict: GraphStatus, keep_serving: str | None, missing: tuple[str, ...], ready: bool, message: str
) -> None:
    out = explain(verdict, keep_serving=keep_serving, missing_pvcs=missing)
    assert (out.ready, out.message) == (ready, message)


def test_explain_leaves_the_verdict_it_was_given_alone() -> None:
    verdict = GraphStatus(True, "All resources are ready")
    explain(verdict, missing_pvcs=("data",))
    assert (verdict.ready, verdict.message) == (True, "All resources are ready")


def test_the_status_is_built_as_the_graph_stores_it() -> None:
    rolling = RollingPlan(status={"phase": "Completed", "updatedComponents": ["Frontend"]})
    out = synced_status({}, GraphStatus(True, "ok", SERVICES), generation=1, rolling=rolling, now=T0)
    assert "services" not in out
    assert out["components"]["Frontend"]["componentNames"] == ["g-frontend"]
    assert out["rollingUpdate"] == {"phase": "Completed", "updatedComponents": ["Frontend"]}
