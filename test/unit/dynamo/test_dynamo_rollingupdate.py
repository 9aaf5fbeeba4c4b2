"""The managed worker rolling update: every arrow of the phase machine, the surge/unavailable budget,
old DCDs scaled newest first, and what each round asks of the reconciler."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.rollingbudget import (
    Budget,
    budget,
    scaled,
    share_out,
    surge_and_unavailable,
)
from dynamo_operator.internal.dynamo.rollout.rollingupdate import (
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_STARTED,
    Phase,
    next_phase,
    plan_rolling_update,
    supports_managed_rollout,
    with_new_replicas,
)

Obj = dict[str, Any]
NOW = "2026-01-01T00:00:00Z"
EARLIER = "2025-12-31T23:59:00Z"
DESIRED = {"Frontend": "g-frontend", "Prefill": "g-prefill-bbbbbbbb", "Decode": "g-decode-bbbbbbbb"}


def dcd(
    name: str,
    service: str,
    *,
    worker_hash: str | None = None,
    replicas: int = 1,
    ready: int = 1,
    created: str = "2025-01-01T00:00:00Z",
    **meta: Any,
) -> Obj:
    labels = {"nvidia.com/dynamo-component": service}
    if worker_hash:
        labels["nvidia.com/dynamo-worker-hash"] = worker_hash
    return {
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "labels": labels, "creationTimestamp": created, **meta},
        "spec": {"serviceName": service, "replicas": replicas},
        "status": {"component": {"readyReplicas": ready}},
    }


def workers(replicas: int = 1, **annotations: str) -> dict[str, Obj]:
    spec = {"replicas": replicas, "annotations": annotations}
    return {"Prefill": {"componentType": "prefill", **spec}, "Decode": {"componentType": "decode", **spec}}


OLD_P = dcd("g-prefill-aaaaaaaa", "Prefill", worker_hash="aaaaaaaa")
OLD_D = dcd("g-decode-aaaaaaaa", "Decode", worker_hash="aaaaaaaa")
NEW_P = dcd("g-prefill-bbbbbbbb", "Prefill", worker_hash="bbbbbbbb", ready=0)
NEW_D = dcd("g-decode-bbbbbbbb", "Decode", worker_hash="bbbbbbbb", ready=0)
FRONTEND = dcd("g-frontend", "Frontend")


def plan(
    previous: Obj | None,
    live: list[Obj],
    *,
    views: dict[str, Obj | None] | None = None,
    managed: bool = True,
    services: dict[str, Obj] | None = None,
) -> Any:
    by_name = {d["metadata"]["name"]: d for d in live}
    return plan_rolling_update(
        previous=previous,
        desired=DESIRED,
        workers=services if services is not None else workers(),
        new_hash="bbbbbbbb",
        live=live,
        views=views if views is not None else {n: by_name.get(n) for n in DESIRED.values()},
        managed=managed,
        now=NOW,
    )


# --- the phase machine, one row per arrow --------------------------------------------------------


@pytest.mark.parametrize(
    ("previous", "managed", "old_left", "after"),
    [
        pytest.param(Phase.NONE, True, False, Phase.NONE, id="none-steady"),
        pytest.param(Phase.NONE, True, True, Phase.PENDING, id="none-to-pending-on-old-dcds"),
        pytest.param(Phase.COMPLETED, True, True, Phase.PENDING, id="completed-to-pending-on-next-edit"),
        pytest.param(Phase.FAILED, True, True, Phase.PENDING, id="failed-to-pending-on-next-edit"),
        pytest.param(Phase.COMPLETED, True, False, Phase.COMPLETED, id="completed-steady"),
        pytest.param(Phase.FAILED, True, False, Phase.FAILED, id="failed-steady"),
        pytest.param(Phase.PENDING, True, True, Phase.IN_PROGRESS, id="pending-to-in-progress"),
        pytest.param(Phase.PENDING, True, False, Phase.IN_PROGRESS, id="pending-to-in-progress-even-if-done"),
        pytest.param(Phase.IN_PROGRESS, True, True, Phase.IN_PROGRESS, id="in-progress-while-old-left"),
        pytest.param(Phase.IN_PROGRESS, True, False, Phase.COMPLETED, id="in-progress-to-completed"),
        pytest.param(Phase.PENDING, False, True, Phase.FAILED, id="pending-to-failed-when-multinode"),
        pytest.param(Phase.IN_PROGRESS, False, True, Phase.FAILED, id="in-progress-to-failed-when-multinode"),
        pytest.param(Phase.NONE, False, True, Phase.NONE, id="unmanaged-never-starts"),
        pytest.param(Phase.COMPLETED, False, True, Phase.COMPLETED, id="unmanaged-keeps-last-verdict"),
    ],
)
def test_phase_arrow(previous: Phase, managed: bool, old_left: bool, after: Phase) -> None:
    assert next_phase(previous, managed=managed, old_left=old_left) == after


# --- what each arrow writes and records ---------------------------------------------------------


def test_a_new_graph_has_no_rolling_update_status() -> None:
    """No older worker DCD: nothing to roll, no status, the new hash serves."""
    out = plan(None, [FRONTEND, NEW_P, NEW_D])
    assert (out.status, out.events, out.keep, out.serving_hash) == (None, (), frozenset(), "bbbbbbbb")


def test_old_dcds_start_a_rollout_pending_with_start_time_and_event() -> None:
    out = plan(None, [FRONTEND, OLD_P, OLD_D])
    assert out.status == {"phase": "Pending", "startTime": NOW}
    assert [(e.type, e.reason) for e in out.events] == [("Normal", EVENT_STARTED)]
    assert out.keep == {"g-prefill-aaaaaaaa", "g-decode-aaaaaaaa"}
    assert out.serving_hash == "aaaaaaaa"
    assert out.in_progress and out.requeue_after is not None


def test_a_completed_rollout_restarts_with_fresh_times() -> None:
    previous = {
        "phase": "Completed",
        "startTime": EARLIER,
        "endTime": EARLIER,
        "updatedComponents": ["Decode"],
    }
    out = plan(previous, [OLD_P, OLD_D])
    assert out.status == {"phase": "Pending", "startTime": NOW}


def test_pending_moves_to_in_progress_keeping_start_time() -> None:
    out = plan({"phase": "Pending", "startTime": EARLIER}, [OLD_P, OLD_D, NEW_P, NEW_D])
    assert out.status == {"phase": "InProgress", "startTime": EARLIER, "updatedComponents": None}
    assert out.events == () and out.requeue_after is None


def test_in_progress_lists_the_services_already_updated() -> None:
    """Prefill's new DCD is ready and its old one has no ready replica: Prefill is updated."""
    old_p = dcd("g-prefill-aaaaaaaa", "Prefill", worker_hash="aaaaaaaa", replicas=0, ready=0)
    new_p = dcd("g-prefill-bbbbbbbb", "Prefill", worker_hash="bbbbbbbb", ready=1)
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [old_p, OLD_D, new_p, NEW_D])
    assert out.status["updatedComponents"] == ["Prefill"]
    assert out.keep == {"g-prefill-aaaaaaaa", "g-decode-aaaaaaaa"}


def test_every_service_updated_prunes_the_old_dcds_and_stays_in_progress() -> None:
    old = [
        dcd("g-prefill-aaaaaaaa", "Prefill", worker_hash="aaaaaaaa", replicas=0, ready=0),
        dcd("g-decode-aaaaaaaa", "Decode", worker_hash="aaaaaaaa", replicas=0, ready=0),
    ]
    new = [
        dcd("g-prefill-bbbbbbbb", "Prefill", worker_hash="bbbbbbbb"),
        dcd("g-decode-bbbbbbbb", "Decode", worker_hash="bbbbbbbb"),
    ]
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [*old, *new])
    assert out.keep == frozenset()
    assert out.status == {
        "phase": "InProgress",
        "startTime": EARLIER,
        "updatedComponents": ["Decode", "Prefill"],
    }
    assert out.events == () and out.serving_hash == "bbbbbbbb"


def test_old_dcds_gone_completes_with_end_time_and_event() -> None:
    previous = {"phase": "InProgress", "startTime": EARLIER, "updatedComponents": ["Prefill"]}
    out = plan(previous, [FRONTEND, NEW_P, NEW_D])
    assert out.status == {
        "phase": "Completed",
        "startTime": EARLIER,
        "endTime": NOW,
        "updatedComponents": ["Decode", "Prefill"],
    }
    assert [e.reason for e in out.events] == [EVENT_COMPLETED]
    assert not out.in_progress


def test_old_dcds_being_deleted_no_longer_count() -> None:
    deleting = dcd("g-prefill-aaaaaaaa", "Prefill", worker_hash="aaaaaaaa", deletionTimestamp=NOW)
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [deleting, NEW_P, NEW_D])
    assert out.status["phase"] == "Completed"


def test_a_completed_rollout_is_left_alone() -> None:
    previous = {
        "phase": "Completed",
        "startTime": EARLIER,
        "endTime": EARLIER,
        "updatedComponents": ["Decode"],
    }
    out = plan(previous, [NEW_P, NEW_D])
    assert (out.status, out.events) == (previous, ())


def test_a_graph_turning_multinode_mid_rollout_fails_it_with_a_warning() -> None:
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [OLD_P, NEW_P], managed=False)
    assert out.status == {"phase": "Failed", "startTime": EARLIER, "endTime": NOW}
    assert [(e.type, e.reason) for e in out.events] == [("Warning", EVENT_FAILED)]
    assert out.old_replicas == {} and out.new_replicas == {}


def test_old_dcds_of_removed_services_are_not_part_of_the_rollout() -> None:
    removed = dcd("g-gone-aaaaaaaa", "Gone", worker_hash="aaaaaaaa")
    out = plan(None, [removed, NEW_P, NEW_D])
    assert out.status is None and out.keep == frozenset()


def test_legacy_unhashed_dcds_roll_too_with_the_serving_hash_unknown() -> None:
    out = plan(None, [dcd("g-prefill", "Prefill"), dcd("g-decode", "Decode")])
    assert out.status is not None and out.status["phase"] == "Pending"
    assert out.keep == {"g-prefill", "g-decode"} and out.serving_hash is None


# --- the replica budget -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "desired", "round_up", "expected"),
    [
        pytest.param("25%", 4, True, 1, id="percent-exact"),
        pytest.param("25%", 1, True, 1, id="percent-rounds-up-for-surge"),
        pytest.param("25%", 1, False, 0, id="percent-rounds-down-for-unavailable"),
        pytest.param("50%", 5, False, 2, id="half-of-odd-down"),
        pytest.param("50%", 5, True, 3, id="half-of-odd-up"),
        pytest.param("2", 8, True, 2, id="absolute"),
        pytest.param(" 3 ", 8, False, 3, id="absolute-with-spaces"),
        pytest.param("-1", 8, False, 0, id="negative-is-zero"),
        pytest.param("many", 4, True, 1, id="unreadable-is-default"),
        pytest.param("x%", 4, False, 1, id="unreadable-percent-is-default"),
    ],
)
def test_scaled(value: str, desired: int, round_up: bool, expected: int) -> None:
    assert scaled(value, desired, round_up=round_up) == expected


@pytest.mark.parametrize(
    ("annotations", "desired", "expected"),
    [
        pytest.param({}, 4, (1, 1), id="defaults-25-percent"),
        pytest.param({}, 1, (1, 0), id="defaults-one-replica"),
        pytest.param({"surge": "0", "unavailable": "0"}, 4, (1, 0), id="both-zero-surge-one"),
        pytest.param({"surge": "1", "unavailable": "0"}, 4, (1, 0), id="zero-downtime"),
        pytest.param({"surge": "0", "unavailable": "2"}, 8, (0, 2), id="no-surge"),
    ],
)
def test_surge_and_unavailable(annotations: dict[str, str], desired: int, expected: tuple[int, int]) -> None:
    keys = {
        "surge": "nvidia.com/deployment-rolling-update-max-surge",
        "unavailable": "nvidia.com/deployment-rolling-update-max-unavailable",
    }
    assert surge_and_unavailable({keys[k]: v for k, v in annotations.items()}, desired) == expected


@pytest.mark.parametrize(
    ("desired", "new_ready", "annotations", "expected"),
    [
        pytest.param(1, 0, {}, Budget(old=1, new=1), id="one-replica-surges-one"),
        pytest.param(1, 1, {}, Budget(old=0, new=1), id="one-replica-new-ready-old-drained"),
        pytest.param(4, 0, {}, Budget(old=3, new=2), id="four-start"),
        pytest.param(4, 2, {}, Budget(old=1, new=4), id="four-half-way"),
        pytest.param(4, 4, {}, Budget(old=0, new=4), id="four-done"),
        pytest.param(0, 0, {}, Budget(old=0, new=0), id="scaled-to-zero"),
        pytest.param(
            1,
            0,
            {"nvidia.com/deployment-rolling-update-max-unavailable": "100%"},
            Budget(old=1, new=1),
            id="never-zero-ready-workers",
        ),
        pytest.param(
            1,
            0,
            {
                "nvidia.com/deployment-rolling-update-max-surge": "0",
                "nvidia.com/deployment-rolling-update-max-unavailable": "1",
            },
            Budget(old=1, new=1),
            id="no-surge-one-replica-still-surges-one",
        ),
        pytest.param(
            8,
            0,
            {
                "nvidia.com/deployment-rolling-update-max-surge": "0",
                "nvidia.com/deployment-rolling-update-max-unavailable": "2",
            },
            Budget(old=6, new=2),
            id="no-surge-eight",
        ),
    ],
)
def test_budget(desired: int, new_ready: int, annotations: dict[str, str], expected: Budget) -> None:
    assert budget(desired=desired, new_ready=new_ready, annotations=annotations) == expected


@pytest.mark.parametrize(
    ("total", "current", "expected"),
    [
        pytest.param(3, [("b", 2), ("a", 2)], {"b": 2, "a": 1}, id="newest-first"),
        pytest.param(0, [("b", 2), ("a", 2)], {"b": 0, "a": 0}, id="all-drained"),
        pytest.param(9, [("b", 2), ("a", 2)], {"b": 2, "a": 2}, id="never-grows"),
    ],
)
def test_share_out(total: int, current: list[tuple[str, int]], expected: dict[str, int]) -> None:
    assert share_out(total, current) == expected


def test_round_scales_old_dcds_newest_first_and_sizes_the_new_one() -> None:
    """Four decode replicas spread over two older generations; the new DCD has two ready: the old
    budget (1) goes to the newest old DCD, the oldest is drained, the new DCD gets all four."""
    older = dcd(
        "g-decode-00000000", "Decode", worker_hash="00000000", replicas=2, created="2025-01-01T00:00:00Z"
    )
    newer = dcd(
        "g-decode-aaaaaaaa", "Decode", worker_hash="aaaaaaaa", replicas=2, created="2025-02-01T00:00:00Z"
    )
    new_d = dcd("g-decode-bbbbbbbb", "Decode", worker_hash="bbbbbbbb", replicas=2, ready=2)
    services = {"Decode": {"componentType": "decode", "replicas": 4}}
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [older, newer, new_d], services=services)
    assert out.old_replicas == {"g-decode-aaaaaaaa": 1, "g-decode-00000000": 0}
    assert out.new_replicas == {"Decode": 4}
    assert out.serving_hash is None  # two old generations serve


def test_round_leaves_old_replicas_alone_when_already_right() -> None:
    out = plan({"phase": "InProgress", "startTime": EARLIER}, [OLD_P, OLD_D, NEW_P, NEW_D])
    assert out.old_replicas == {}
    assert out.new_replicas == {"Prefill": 1, "Decode": 1}


def test_with_new_replicas_overrides_only_the_rolled_worker_dcds() -> None:
    objects = [FRONTEND, NEW_P, {"kind": "Service", "metadata": {"name": "x"}, "spec": {"replicas": 7}}]
    out = with_new_replicas(objects, {"Prefill": 3})
    assert out[1]["spec"]["replicas"] == 3 and NEW_P["spec"]["replicas"] == 1
    assert out[0] is FRONTEND and out[2] is objects[2]


@pytest.mark.parametrize(
    ("services", "expected"),
    [
        pytest.param({"W": {"componentType": "worker"}}, True, id="single-node"),
        pytest.param(
            {"W": {"componentType": "worker", "multinode": {"nodeCount": 2}}}, False, id="multinode"
        ),
        pytest.param({"F": None}, True, id="empty-service"),
    ],
)
def test_supports_managed_rollout(services: dict[str, Any], expected: bool) -> None:
    assert supports_managed_rollout(services) is expected
