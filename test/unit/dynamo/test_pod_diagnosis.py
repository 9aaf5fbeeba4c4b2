"""Why a component's pods are not ready: the sentence, its ordering, grouping and bounds; the
informer transform and the event filter."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.status.pod_diagnosis import (
    MAX_MESSAGE,
    Problem,
    diagnose,
)

SCHED_PVC = "0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims."
PREEMPTION = "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
SCHED_MISSING = '0/4 nodes are available: persistentvolumeclaim "model-cache" not found.'


def pod(
    name: str = "p",
    *,
    phase: str = "Running",
    ready: bool = False,
    unschedulable: str | None = None,
    waiting: str | None = None,
    waiting_message: str = "",
    last_exit: str | None = None,
    restarts: int = 0,
    deleting: bool = False,
    init: bool = False,
) -> dict[str, Any]:
    conditions: list[dict[str, Any]] = []
    if unschedulable is not None:
        phase = "Pending"
        conditions.append(
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": unschedulable}
        )
    else:
        conditions.append({"type": "PodScheduled", "status": "True"})
        conditions.append({"type": "Ready", "status": "True" if ready else "False"})
    cs: dict[str, Any] = {"name": "main", "ready": ready, "restartCount": restarts, "image": "reg/img:1"}
    if waiting:
        cs["state"] = {"waiting": {"reason": waiting, "message": waiting_message}}
    else:
        cs["state"] = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}
    if last_exit:
        cs["lastState"] = {"terminated": {"reason": last_exit, "exitCode": 1}}
    status: dict[str, Any] = {"phase": phase, "conditions": conditions}
    if unschedulable is None:
        status["initContainerStatuses" if init else "containerStatuses"] = [cs]
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "labels": {"nvidia.com/selector": "g-worker"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": status}


@pytest.mark.parametrize(
    ("pods", "problem", "message"),
    [
        pytest.param(
            [pod("a", unschedulable=SCHED_PVC), pod("b", unschedulable=SCHED_PVC)],
            Problem.UNSCHEDULABLE,
            f"2 pods unschedulable: {SCHED_PVC}",
            id="identical-unschedulable-pods-are-grouped-with-a-count",
        ),
        pytest.param(
            [pod(unschedulable=f"{SCHED_PVC} {PREEMPTION}")],
            Problem.UNSCHEDULABLE,
            f"1 pod unschedulable: {SCHED_PVC}",
            id="the-preemption-post-mortem-is-dropped",
        ),
        pytest.param(
            [pod(unschedulable=SCHED_MISSING)],
            Problem.UNSCHEDULABLE,
            f"1 pod unschedulable: {SCHED_MISSING}",
            id="the-scheduler-names-the-missing-pvc",
        ),
        pytest.param(
            [pod(phase="Pending", waiting="ErrImagePull", waiting_message="rpc error: not found")],
            Problem.IMAGE_PULL,
            '1 pod ImagePullBackOff: cannot pull image "reg/img:1"',
            id="err-image-pull-reads-as-image-pull-back-off-so-the-text-does-not-flip",
        ),
        pytest.param(
            [pod(phase="Pending", waiting="ImagePullBackOff", waiting_message="Back-off pulling")],
            Problem.IMAGE_PULL,
            '1 pod ImagePullBackOff: cannot pull image "reg/img:1"',
            id="image-pull-back-off-names-the-image",
        ),
        pytest.param(
            [pod(phase="Pending", waiting="ImagePullBackOff", init=True)],
            Problem.IMAGE_PULL,
            '1 pod ImagePullBackOff: cannot pull image "reg/img:1"',
            id="init-containers-count-too",
        ),
        pytest.param(
            [pod(waiting="CrashLoopBackOff", last_exit="Error", restarts=5)],
            Problem.CRASH_LOOP,
            "1 pod CrashLoopBackOff (last exit: Error, 5 restarts)",
            id="crash-loop-names-the-last-exit-and-the-restarts",
        ),
        pytest.param(
            [pod(waiting="CrashLoopBackOff", last_exit="OOMKilled", restarts=1)],
            Problem.CRASH_LOOP,
            "1 pod CrashLoopBackOff (last exit: OOMKilled, 1 restart)",
            id="one-restart-is-singular",
        ),
        pytest.param(
            [
                pod(
                    phase="Pending",
                    waiting="CreateContainerConfigError",
                    waiting_message='secret "s" not found',
                )
            ],
            Problem.CREATE_ERROR,
            '1 pod CreateContainerConfigError: secret "s" not found',
            id="container-config-errors-carry-the-kubelet-message",
        ),
        pytest.param(
            [pod("a"), pod("b", ready=True), pod("c")],
            Problem.NOT_READY,
            "2 pods not ready yet",
            id="running-but-not-ready-pods-are-counted-ready-ones-are-not",
        ),
        pytest.param(
            [
                pod("a"),
                pod("b", waiting="CrashLoopBackOff", last_exit="Error", restarts=2),
                pod("c", unschedulable=SCHED_PVC),
            ],
            Problem.UNSCHEDULABLE,
            f"1 pod unschedulable: {SCHED_PVC}; "
            "1 pod CrashLoopBackOff (last exit: Error, 2 restarts); 1 pod not ready yet",
            id="most-severe-first",
        ),
        pytest.param(
            [pod("a", deleting=True), pod("b", phase="Failed"), pod("c", ready=True)],
            None,
            None,
            id="terminating-and-finished-pods-are-ignored",
        ),
        pytest.param([], None, None, id="no-pods-no-diagnosis"),
    ],
)
def test_diagnose_says_why_pods_are_not_ready(
    pods: list[dict[str, Any]], problem: Problem | None, message: str | None
) -> None:
    got = diagnose(pods)
    if problem is None:
        assert got is None
        return
    assert got is not None
    assert (got.problem, got.message) == (problem, message)


@pytest.mark.parametrize(
    ("problem", "reason"),
    [
        pytest.param(Problem.UNSCHEDULABLE, "PodsUnschedulable", id="unschedulable"),
        pytest.param(Problem.IMAGE_PULL, "ImagePullBackOff", id="image-pull"),
        pytest.param(Problem.CRASH_LOOP, "CrashLoopBackOff", id="crash-loop"),
        pytest.param(Problem.NOT_READY, "PodsNotReady", id="not-ready"),
    ],
)
def test_each_problem_has_a_condition_reason(problem: Problem, reason: str) -> None:
    assert problem.reason == reason


def test_diagnosis_is_the_same_whatever_order_the_pods_come_in() -> None:
    pods = [
        pod("a", unschedulable=SCHED_PVC),
        pod("b", waiting="ImagePullBackOff"),
        pod("c"),
        pod("d", waiting="CrashLoopBackOff", last_exit="Error", restarts=3),
        pod("e", unschedulable=SCHED_MISSING),
    ]
    first = diagnose(pods)
    assert first is not None
    assert all(diagnose(order) == first for order in (pods[::-1], pods[2:] + pods[:2]))


@pytest.mark.parametrize(
    "pods",
    [
        pytest.param([pod(unschedulable="x" * 5000)], id="one-huge-scheduler-message"),
        pytest.param(
            [pod(str(i), unschedulable=f"{i}/9 nodes " + "y" * 150) for i in range(9)],
            id="many-distinct-groups",
        ),
    ],
)
def test_diagnosis_is_bounded(pods: list[dict[str, Any]]) -> None:
    got = diagnose(pods)
    assert got is not None
    assert len(got.message) <= MAX_MESSAGE


def test_left_out_groups_are_counted() -> None:
    pods = [pod(str(i), unschedulable=f"{i}/9 nodes " + "y" * 150) for i in range(9)]
    got = diagnose(pods)
    assert got is not None
    assert got.message.endswith("; 8 more")
