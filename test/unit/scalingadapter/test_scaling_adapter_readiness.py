"""Which `Ready` condition an adapter reports for which graph, and when that deserves a Warning Event."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.scalingadapter.readiness import (
    READY,
    Reason,
    awaiting_collection,
    driver,
    ready_condition,
    warrants_warning,
)
from dynamo_operator.internal.dynamo.status.conditions import Condition
from testsupport.dcd_view import stored_graph

ENABLED = {"scalingAdapter": {"enabled": True}}


def _adapter(
    name: str = "g-worker", *, owner: dict[str, Any] | None = None, created: str = "2026-01-01T00:00:00Z"
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "creationTimestamp": created}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"metadata": meta, "spec": {"replicas": 1, "dgdRef": {"name": "g", "componentName": "Worker"}}}


GRAPH_OWNER = {"kind": "DynamoGraphDeployment", "name": "g", "uid": "u1", "controller": True}


def _dgd(services: dict[str, Any], *, uid: str = "u1", deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "ns", "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return stored_graph({"metadata": meta, "spec": {"services": services}})


@pytest.mark.parametrize(
    ("dgd", "status", "reason"),
    [
        pytest.param(_dgd({"Worker": ENABLED}), "True", Reason.ACTIVE, id="drives-enabled-service"),
        pytest.param(None, "False", Reason.GRAPH_NOT_FOUND, id="graph-missing"),
        pytest.param(
            _dgd({"Worker": ENABLED}, deleting=True), "False", Reason.GRAPH_NOT_FOUND, id="graph-deleting"
        ),
        pytest.param(_dgd({"Frontend": {}}), "False", Reason.SERVICE_NOT_FOUND, id="service-missing"),
        pytest.param(_dgd({}), "False", Reason.SERVICE_NOT_FOUND, id="graph-without-services"),
        pytest.param(_dgd({"Worker": {}}), "False", Reason.ADAPTER_DISABLED, id="no-scaling-adapter"),
        pytest.param(
            _dgd({"Worker": {"scalingAdapter": {"enabled": False}}}),
            "False",
            Reason.ADAPTER_DISABLED,
            id="scaling-adapter-off",
        ),
    ],
)
def test_ready_condition_for_each_graph(dgd: dict[str, Any] | None, status: str, reason: Reason) -> None:
    cond = ready_condition(_adapter(), dgd)
    assert (cond.type, cond.status, cond.reason) == (READY, status, reason)


def test_graph_not_found_message_names_graph_namespace_and_the_fix() -> None:
    message = ready_condition(_adapter(), None).message
    assert "DynamoGraphDeployment g was not found in namespace ns" in message
    assert "spec.dgdRef.name" in message
    assert "turns Ready by itself" in message


def test_service_not_found_message_lists_the_services_the_graph_has() -> None:
    message = ready_condition(_adapter(), _dgd({"Frontend": {}, "Decode": {}})).message
    assert "has no component Worker (its components: Decode, Frontend)" in message
    assert "spec.dgdRef.componentName" in message


def test_adapter_disabled_message_says_how_to_enable_it() -> None:
    message = ready_condition(_adapter(), _dgd({"Worker": {}})).message
    assert "Service Worker of DynamoGraphDeployment g does not have scalingAdapter enabled" in message
    assert "`scalingAdapter: {}`" in message
    assert "spec.services.Worker.scalingAdapter.enabled: true" in message


def _ready(status: str, reason: str) -> list[dict[str, Any]]:
    return [{"type": READY, "status": status, "reason": reason, "message": "m"}]


@pytest.mark.parametrize(
    ("previous", "want", "warn"),
    [
        pytest.param(None, Reason.GRAPH_NOT_FOUND, True, id="first-report-is-a-problem"),
        pytest.param(_ready("True", "Active"), Reason.GRAPH_NOT_FOUND, True, id="ready-to-problem"),
        pytest.param(
            _ready("False", "GraphNotFound"), Reason.GRAPH_NOT_FOUND, False, id="same-problem-again"
        ),
        pytest.param(
            _ready("False", "GraphNotFound"), Reason.SERVICE_NOT_FOUND, True, id="problem-to-other-problem"
        ),
        pytest.param(_ready("False", "GraphNotFound"), Reason.ACTIVE, False, id="recovery"),
        pytest.param(None, Reason.ACTIVE, False, id="first-report-is-ready"),
    ],
)
def test_one_warning_per_transition_into_a_problem(
    previous: list[dict[str, Any]] | None, want: Reason, warn: bool
) -> None:
    cond = Condition(READY, "True" if want == Reason.ACTIVE else "False", want, "new message")
    assert warrants_warning(previous, cond) is warn


@pytest.mark.parametrize(
    ("owner", "dgd", "waiting"),
    [
        pytest.param(GRAPH_OWNER, _dgd({"Worker": ENABLED}), False, id="owner-present"),
        pytest.param(GRAPH_OWNER, None, True, id="owner-gone"),
        pytest.param(GRAPH_OWNER, _dgd({"Worker": ENABLED}, deleting=True), True, id="owner-deleting"),
        pytest.param(GRAPH_OWNER, _dgd({"Worker": ENABLED}, uid="u2"), True, id="owner-replaced-same-name"),
        pytest.param(None, None, False, id="hand-made-adapter"),
        pytest.param({**GRAPH_OWNER, "name": "other"}, None, False, id="owner-is-not-the-referenced-graph"),
        pytest.param({**GRAPH_OWNER, "controller": False}, None, False, id="not-a-controller-reference"),
    ],
)
def test_adapter_of_a_vanished_owner_awaits_collection(
    owner: dict[str, Any] | None, dgd: dict[str, Any] | None, waiting: bool
) -> None:
    assert awaiting_collection(_adapter(owner=owner), dgd) is waiting


OLD, NEW = "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"


@pytest.mark.parametrize(
    ("adapters", "winner"),
    [
        pytest.param(
            [_adapter("hand", created=OLD), _adapter("g-worker", owner=GRAPH_OWNER, created=NEW)],
            "g-worker",
            id="graph-own-adapter-wins-over-older",
        ),
        pytest.param(
            [_adapter("b", created=NEW), _adapter("a", created=NEW), _adapter("c", created=OLD)],
            "c",
            id="else-oldest",
        ),
        pytest.param([_adapter("b"), _adapter("a")], "a", id="then-by-name"),
        pytest.param(
            [
                _adapter("stale", owner={**GRAPH_OWNER, "uid": "u0"}, created=OLD),
                _adapter("new", created=NEW),
            ],
            "new",
            id="leftover-of-former-graph-does-not-compete",
        ),
    ],
)
def test_one_adapter_drives_a_service(adapters: list[dict[str, Any]], winner: str) -> None:
    assert driver(adapters, _dgd({"Worker": ENABLED})) == winner


def test_a_second_adapter_of_a_driven_service_is_a_duplicate() -> None:
    """Two drivers with different replicas would undo each other's writes: only the winner is Ready."""
    graph_own = _adapter("g-worker", owner=GRAPH_OWNER, created=NEW)
    hand = _adapter("hand", created=OLD)
    dgd = _dgd({"Worker": ENABLED})
    assert ready_condition(graph_own, dgd, [hand]).reason == Reason.ACTIVE
    loser = ready_condition(hand, dgd, [graph_own])
    assert (loser.status, loser.reason) == ("False", Reason.DUPLICATE_ADAPTER)
    assert "Adapter g-worker already drives service Worker of DynamoGraphDeployment g" in loser.message
