"""A multinode component's readiness from its one LeaderWorkerSet (status/readiness.py `lws_readiness`)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.status.readiness import lws_readiness, ready_conditions

Obj = dict[str, Any]


def _lws(desired: int, *, replicas: int, ready: int, updated: int, available: bool = True) -> Obj:
    return {
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "g-w-0"},
        "spec": {"replicas": desired},
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": updated,
            "conditions": [{"type": "Available", "status": "True" if available else "False"}],
        },
    }


@pytest.mark.parametrize(
    ("lws", "ready", "message"),
    [
        pytest.param(_lws(3, replicas=3, ready=3, updated=3), True, "3/3 groups ready", id="all-ready"),
        pytest.param(
            _lws(3, replicas=3, ready=2, updated=3, available=False), False, "2/3 groups ready", id="one-down"
        ),
        pytest.param(
            _lws(3, replicas=3, ready=3, updated=2, available=False), False, "3/3 groups ready", id="rolling"
        ),
        pytest.param(
            _lws(3, replicas=3, ready=3, updated=3, available=False),
            False,
            "3/3 groups ready",
            id="not-available",
        ),
        pytest.param(
            _lws(1, replicas=3, ready=3, updated=3),
            False,
            "scaling down to 1, 3 groups left",
            id="scaling-down",
        ),
        pytest.param(_lws(0, replicas=0, ready=0, updated=0), True, "scaled to zero", id="scaled-to-zero"),
        pytest.param(None, False, "0/1 groups ready", id="not-created"),
    ],
)
def test_one_set_is_ready_when_every_desired_group_is_and_no_other_is_left(
    lws: Obj | None, ready: bool, message: str
) -> None:
    verdict = lws_readiness(lws)
    assert (verdict.ready, verdict.message) == (ready, message)


def test_the_status_names_the_one_set_and_its_group_counts() -> None:
    verdict = lws_readiness(_lws(3, replicas=3, ready=2, updated=3, available=False))
    assert verdict.service == {
        "componentKind": "LeaderWorkerSet",
        "componentName": "g-w-0",
        "componentNames": ["g-w-0"],
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 2,
    }


def test_the_conditions_say_leaderworkerset_in_upstreams_reasons() -> None:
    available, component = ready_conditions(
        lws_readiness(_lws(2, replicas=2, ready=1, updated=2, available=False))
    )
    assert (available.reason, available.message) == (
        "LeaderWorkerSetNotReady",
        "LeaderWorkerSet is not ready: 1/2 groups ready",
    )
    assert (component.reason, component.status) == ("ComponentNotReady", "False")
