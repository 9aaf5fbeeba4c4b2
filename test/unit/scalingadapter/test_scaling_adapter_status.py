"""An adapter's status: what it drives when Ready, what it last said when not; Ready upserted either way."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.scalingadapter.status import adapter_status
from dynamo_operator.internal.dynamo.status.conditions import Condition
from testsupport.dcd_view import stored_graph

T0 = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
READY = Condition("Ready", "True", "Ready", "drives VllmWorker")
NOT_READY = Condition("Ready", "False", "GraphNotFound", "graph g not found")
PREVIOUS = {"replicas": 5, "selector": "old=1", "lastScaleTime": "t0"}
DGD = stored_graph(
    {
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"services": {"VllmWorker": {"replicas": 3}}},
        "status": {"services": {"VllmWorker": {"replicas": 2}}},
    }
)


@pytest.mark.parametrize(
    ("ready", "dgd", "scaled_at", "figures"),
    [
        pytest.param(READY, DGD, None, (2, "t0"), id="driving-reports-running-replicas"),
        pytest.param(READY, DGD, "t1", (2, "t1"), id="driving-just-scaled"),
        pytest.param(NOT_READY, DGD, None, (5, "t0"), id="not-driving-keeps-what-it-said"),
        pytest.param(READY, None, None, (5, "t0"), id="no-graph-keeps-what-it-said"),
    ],
)
def test_the_figures_are_the_services_only_while_the_adapter_drives_it(
    ready: Condition, dgd: dict[str, Any] | None, scaled_at: str | None, figures: tuple[int, str]
) -> None:
    out = adapter_status(
        PREVIOUS, ready, dgd=dgd, service="VllmWorker", scaled_at=scaled_at, generation=4, now=T0
    )
    assert (out["replicas"], out["lastScaleTime"]) == figures
    [cond] = out["conditions"]
    assert (cond["status"], cond["reason"], cond["observedGeneration"]) == (ready.status, ready.reason, 4)


def test_the_previous_status_is_not_changed_in_place() -> None:
    previous = dict(PREVIOUS)
    adapter_status(previous, NOT_READY, dgd=None, service="VllmWorker", scaled_at=None, generation=1, now=T0)
    assert previous == PREVIOUS


def test_an_adapter_that_never_drove_its_service_reports_zero_replicas() -> None:
    """v1beta1, the stored version, requires status.replicas: a status without it is refused."""
    out = adapter_status({}, NOT_READY, dgd=None, service="VllmWorker", scaled_at=None, generation=1, now=T0)
    assert out["replicas"] == 0
