"""Retiring the per-replica LeaderWorkerSets (component/lws_migration.py): what is left over, when the
one set has settled, and what the sync keeps meanwhile."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.component import lws_migration as m

Obj = dict[str, Any]
DCD = "g-w-1234abcd"


def _lws(
    name: str, *, replicas: int = 3, ready: int = 3, updated: int | None = None, template: str = "t1"
) -> Obj:
    return {
        "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "annotations": {consts.ANNOTATION_POD_TEMPLATE_HASH: template}},
        "spec": {"replicas": replicas},
        "status": {
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": ready if updated is None else updated,
            "conditions": [{"type": "Available", "status": "True" if ready >= replicas else "False"}],
        },
    }


def _pod_group(name: str) -> Obj:
    return {"kind": "PodGroup", "metadata": {"name": name}}


def test_every_set_but_the_first_and_every_pod_group_is_left_over() -> None:
    children = [
        _lws(f"{DCD}-0"),
        _lws(f"{DCD}-1"),
        _lws(f"{DCD}-2"),
        _pod_group(f"{DCD}-0"),
        _pod_group(f"{DCD}-1"),
    ]
    assert m.leftovers(DCD, children) == [
        f"LeaderWorkerSet/{DCD}-1",
        f"LeaderWorkerSet/{DCD}-2",
        f"PodGroup/{DCD}-0",
        f"PodGroup/{DCD}-1",
    ]


def test_the_one_set_alone_leaves_nothing_over() -> None:
    assert m.leftovers(DCD, [_lws(f"{DCD}-0")]) == []


def test_a_leftover_already_being_deleted_is_not_counted() -> None:
    going = _lws(f"{DCD}-1")
    going["metadata"]["deletionTimestamp"] = "2026-11-28T06:00:00Z"
    assert m.leftovers(DCD, [_lws(f"{DCD}-0"), going]) == []


def test_settled_once_the_set_runs_the_desired_template_at_the_desired_replicas_all_ready() -> None:
    assert m.settled(_lws(f"{DCD}-0"), _lws(f"{DCD}-0"))


@pytest.mark.parametrize(
    "live",
    [
        pytest.param(None, id="not-created"),
        pytest.param(_lws(f"{DCD}-0", replicas=1, ready=1), id="replicas-not-raised-yet"),
        pytest.param(_lws(f"{DCD}-0", template="t0"), id="old-template"),
        pytest.param(_lws(f"{DCD}-0", ready=2), id="new-groups-not-ready"),
        pytest.param(_lws(f"{DCD}-0", updated=2), id="group-0-not-rolled"),
    ],
)
def test_not_settled_while_the_set_lags(live: Obj | None) -> None:
    """Before the write (old replicas or template: its status describes the old spec), and after it
    until LWS reports every group updated and ready."""
    assert not m.settled(_lws(f"{DCD}-0"), live)


@pytest.mark.parametrize(
    ("kind", "name", "held"),
    [
        pytest.param("LeaderWorkerSet", f"{DCD}-1", True, id="old-set"),
        pytest.param("PodGroup", f"{DCD}-0", True, id="pod-group"),
        pytest.param("Deployment", DCD, False, id="other-kind"),
    ],
)
def test_leftovers_are_held_until_settled(kind: str, name: str, held: bool) -> None:
    assert m.held(kind, name, dcd=DCD, migrated=False) is held
    assert m.held(kind, name, dcd=DCD, migrated=True) is False


def _pod(group: int, *, ready: bool = True, phase: str = "Running", deleting: bool = False) -> Obj:
    meta: Obj = {"labels": {m.LWS_GROUP_INDEX_LABEL: str(group)}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-28T06:00:00Z"
    return {
        "metadata": meta,
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_a_group_serves_with_every_pod_running_and_ready() -> None:
    assert m.groups_serving([_pod(0), _pod(0), _pod(1), _pod(1)], size=2) == 2


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(None, id="worker-not-created"),
        pytest.param(_pod(0, ready=False), id="worker-not-ready"),
        pytest.param(_pod(0, phase="Pending"), id="worker-pending"),
        pytest.param(_pod(0, deleting=True), id="worker-being-deleted"),
    ],
)
def test_a_group_with_a_worker_not_serving_does_not_count(second: Obj | None) -> None:
    """LWS calls such a group ready once its leader is; the migration waits for the whole group."""
    pods = [_pod(0)] + ([second] if second else [])
    assert m.groups_serving(pods, size=2) == 0
