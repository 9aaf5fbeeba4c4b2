"""A new component's or graph's first status is held back while it would only say "starting"; a
component that is not ready is looked at again on a schedule that slows while it stays so."""

from __future__ import annotations

import datetime

import pytest
from dynamo_operator.internal.dynamo.status.readiness import (
    FIRST_STATUS_GRACE_SECONDS,
    NOT_READY_RECHECK_MAX_SECONDS,
    NOT_READY_RECHECK_MIN_SECONDS,
    GraphStatus,
    WorkloadReadiness,
    first_status_delay,
    not_ready_recheck,
    nothing_to_report_yet,
)

CREATED = "2026-11-22T08:00:00Z"
BORN = datetime.datetime(2026, 11, 22, 8, 0, 0, tzinfo=datetime.UTC).timestamp()
STARTING = WorkloadReadiness(False, "0/1 ready", {})
READY = WorkloadReadiness(True, "1/1 ready", {})


def test_starting_pods_of_a_new_component_wait_out_the_rest_of_the_grace() -> None:
    assert first_status_delay(STARTING, created=CREATED, now=BORN + 2) == pytest.approx(
        FIRST_STATUS_GRACE_SECONDS - 2
    )


def test_a_ready_component_is_reported_at_once() -> None:
    assert first_status_delay(READY, created=CREATED, now=BORN) == 0


def test_after_the_grace_a_starting_component_is_reported() -> None:
    assert first_status_delay(STARTING, created=CREATED, now=BORN + FIRST_STATUS_GRACE_SECONDS) == 0


def test_a_clock_behind_the_api_server_never_waits_longer_than_the_grace() -> None:
    assert first_status_delay(STARTING, created=CREATED, now=BORN - 60) == FIRST_STATUS_GRACE_SECONDS


@pytest.mark.parametrize("created", [None, "", "not-a-time"])
def test_an_unknown_creation_time_is_reported_at_once(created: str | None) -> None:
    assert first_status_delay(STARTING, created=created, now=BORN) == 0


# --- when a not-ready component's pods are looked at again ----------------------------------------


def test_a_component_just_gone_not_ready_is_looked_at_again_soon() -> None:
    assert not_ready_recheck(CREATED, BORN + 1) == NOT_READY_RECHECK_MIN_SECONDS


def test_the_recheck_grows_with_how_long_the_component_has_been_not_ready() -> None:
    assert not_ready_recheck(CREATED, BORN + 60) == pytest.approx(30.0)


def test_a_lasting_problem_is_looked_at_every_two_minutes_at_most() -> None:
    assert not_ready_recheck(CREATED, BORN + 86_400) == NOT_READY_RECHECK_MAX_SECONDS


@pytest.mark.parametrize("since", [None, "", "not-a-time"])
def test_an_unknown_transition_time_is_looked_at_again_soon(since: str | None) -> None:
    assert not_ready_recheck(since, BORN) == NOT_READY_RECHECK_MIN_SECONDS


def test_a_transition_time_ahead_of_the_clock_is_looked_at_again_soon() -> None:
    assert not_ready_recheck(CREATED, BORN - 600) == NOT_READY_RECHECK_MIN_SECONDS


PENDING = GraphStatus(ready=False, message="Frontend: 0/1 ready")
ROLLED = {
    "metadata": {"generation": 1},
    "status": {"observedGeneration": 1, "conditions": [{"type": "Available", "status": "True"}]},
}


def test_a_new_graph_whose_components_have_not_reported_writes_nothing() -> None:
    assert nothing_to_report_yet({}, PENDING, {"Frontend": {"metadata": {}}, "Worker": None})


def test_a_ready_component_alone_does_not_end_the_graphs_wait() -> None:
    dcds = {"Frontend": ROLLED, "Worker": {"metadata": {"generation": 1}}}
    assert nothing_to_report_yet({}, PENDING, dcds)


def test_a_component_reporting_not_ready_ends_the_graphs_wait() -> None:
    starting = {"metadata": {"generation": 1}, "status": {"observedGeneration": 1, "conditions": []}}
    assert not nothing_to_report_yet({}, PENDING, {"Frontend": ROLLED, "Worker": starting})


def test_every_component_reported_ends_the_graphs_wait() -> None:
    assert not nothing_to_report_yet({}, PENDING, {"Frontend": ROLLED, "Worker": ROLLED})


def test_a_graph_with_a_status_always_reports_changes() -> None:
    assert not nothing_to_report_yet({"state": "pending"}, PENDING, {"Frontend": None})


def test_a_ready_graph_is_reported() -> None:
    assert not nothing_to_report_yet({}, GraphStatus(ready=True, message="All resources are ready"), {})
