"""The Grove pathway's `Ready` reasons and `scheduledReplicas` (internal/dynamo/grove/readiness.py):
each PodClique or scaling group classed as upstream 2a6da14c classes it (capacity, then a rollout,
then pods not ready), the graph's reason aggregated from them, and the scheduled count reported once
Grove has observed the object's spec. Objects are shaped as Grove (v0.1.0-alpha.12-rc1) writes them."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.grove.readiness import (
    ServiceObject,
    grove_graph_status,
    grove_readiness,
    member_clique_names,
    not_ready_cliques,
)
from dynamo_operator.internal.dynamo.status import dgd_status, not_ready_reason

PCLQ = consts.KIND_POD_CLIQUE
PCSG = consts.KIND_POD_CLIQUE_SCALING_GROUP
NOW = datetime.datetime(2026, 11, 28, 9, 0, tzinfo=datetime.UTC)


def clique(
    *,
    desired: int = 2,
    replicas: int = 2,
    ready: int = 2,
    updated: int = 2,
    scheduled: int | None = 2,
    gated: int = 0,
    observed: int | None = 1,
    generation: int = 1,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A PodClique as Grove writes it (`scheduled` None: Grove left the count unset)."""
    status: dict[str, Any] = {
        "replicas": replicas,
        "readyReplicas": ready,
        "updatedReplicas": updated,
        "scheduleGatedReplicas": gated,
    }
    if scheduled is not None:
        status["scheduledReplicas"] = scheduled
    if observed is not None:
        status["observedGeneration"] = observed
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "metadata": {"name": "g-0-x", "generation": generation},
        "spec": {"replicas": desired},
        "status": status,
    }


def group(
    *,
    desired: int = 2,
    replicas: int = 2,
    available: int = 2,
    updated: int = 2,
    scheduled: int | None = 2,
    observed: int | None = 1,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A PodCliqueScalingGroup as Grove writes it."""
    status: dict[str, Any] = {
        "replicas": replicas,
        "availableReplicas": available,
        "updatedReplicas": updated,
    }
    if scheduled is not None:
        status["scheduledReplicas"] = scheduled
    if observed is not None:
        status["observedGeneration"] = observed
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "metadata": {"name": "g-0-x", "generation": 1},
        "spec": {"replicas": desired, "cliqueNames": ["x-ldr", "x-wkr"]},
        "status": status,
    }


def cond(type_: str, status: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message}


# --- one PodClique ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "reason", "why"),
    [
        pytest.param(
            clique(ready=1, scheduled=2),
            not_ready_reason.PODS_NOT_READY,
            "scheduled but ready=1/2",
            id="placed-not-ready",
        ),
        pytest.param(clique(updated=1), not_ready_reason.UPDATING, "desired=2, updated=1", id="not-updated"),
        pytest.param(
            clique(replicas=3, scheduled=3),
            not_ready_reason.UPDATING,
            "performing rolling update: desired=2, replicas=3",
            id="surplus-from-rollout",
        ),
        pytest.param(
            clique(ready=1, scheduled=1),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            "insufficient scheduled replicas: scheduled=1/2",
            id="partly-scheduled",
        ),
        pytest.param(
            clique(ready=0, scheduled=0, gated=2),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            "schedule-gated replicas: 2",
            id="schedule-gated",
        ),
        pytest.param(
            clique(
                ready=0,
                scheduled=0,
                conditions=[
                    cond(
                        "PodCliqueScheduled",
                        "False",
                        "InsufficientScheduledPods",
                        "Insufficient scheduled pods",
                    )
                ],
            ),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            "scheduling condition InsufficientScheduledPods: Insufficient scheduled pods",
            id="scheduling-condition",
        ),
        pytest.param(None, not_ready_reason.UNCLASSIFIED, "resource not found", id="missing"),
        pytest.param(
            clique(observed=None),
            not_ready_reason.UNCLASSIFIED,
            "observedGeneration is nil",
            id="never-observed",
        ),
        pytest.param(
            clique(generation=2, ready=0),
            not_ready_reason.UNCLASSIFIED,
            "spec not yet processed: generation=2, observedGeneration=1",
            id="spec-not-processed",
        ),
    ],
)
def test_a_pod_clique_not_ready_is_classed_as_upstream_classes_it(
    obj: dict[str, Any] | None, reason: str, why: str
) -> None:
    verdict = grove_readiness(PCLQ, "g-0-x", obj)
    assert (verdict.ready, verdict.reason, verdict.why) == (False, reason, why)


def test_capacity_outranks_a_rollout_that_cannot_place_its_new_pods() -> None:
    verdict = grove_readiness(PCLQ, "g-0-x", clique(replicas=3, updated=1, ready=2, scheduled=2, gated=1))
    assert (verdict.reason, verdict.why) == (
        not_ready_reason.INSUFFICIENT_CAPACITY,
        "schedule-gated replicas: 1",
    )


def test_a_scheduling_condition_that_holds_is_no_capacity_shortfall() -> None:
    verdict = grove_readiness(
        PCLQ,
        "g-0-x",
        clique(ready=1, conditions=[cond("PodCliqueScheduled", "True", "SufficientScheduledPods")]),
    )
    assert verdict.reason == not_ready_reason.PODS_NOT_READY


def test_no_scheduled_count_alone_is_no_capacity_shortfall() -> None:
    """Grove may leave the count at zero; only a count between zero and the desired one tells."""
    verdict = grove_readiness(PCLQ, "g-0-x", clique(ready=0, scheduled=None))
    assert (verdict.reason, verdict.why) == (not_ready_reason.PODS_NOT_READY, "scheduled but ready=0/2")


def test_a_whole_pod_clique_without_a_scheduled_count_is_ready() -> None:
    verdict = grove_readiness(PCLQ, "g-0-x", clique(scheduled=None))
    assert (verdict.ready, verdict.reason, verdict.why) == (True, "", "")


def test_a_pod_clique_scaled_to_zero_is_ready_while_its_pods_go() -> None:
    verdict = grove_readiness(PCLQ, "g-0-x", clique(desired=0, replicas=1, ready=1, updated=1, scheduled=1))
    assert verdict.ready


# --- one scaling group -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "reason", "why"),
    [
        pytest.param(
            group(available=1),
            not_ready_reason.PODS_NOT_READY,
            "scheduled but available=1/2",
            id="placed-not-available",
        ),
        pytest.param(group(updated=1), not_ready_reason.UPDATING, "desired=2, updated=1", id="not-updated"),
        pytest.param(
            group(replicas=3, scheduled=3),
            not_ready_reason.UPDATING,
            "performing rolling update: desired=2, replicas=3",
            id="surplus-from-rollout",
        ),
        pytest.param(
            group(available=1, scheduled=1),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            "insufficient scheduled replicas: scheduled=1/2",
            id="partly-scheduled",
        ),
        pytest.param(
            group(
                available=0,
                scheduled=0,
                conditions=[
                    cond(
                        "MinAvailableBreached",
                        "False",
                        "InsufficientScheduledPodCliqueScalingGroupReplicas",
                        "Insufficient scheduled replicas",
                    )
                ],
            ),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            "min-available breached (InsufficientScheduledPodCliqueScalingGroupReplicas):"
            " Insufficient scheduled replicas",
            id="older-grove-scheduling-condition",
        ),
        pytest.param(
            group(
                available=0,
                conditions=[
                    cond("MinAvailableBreached", "True", "InsufficientAvailablePodCliqueScalingGroupReplicas")
                ],
            ),
            not_ready_reason.PODS_NOT_READY,
            "scheduled but available=0/2",
            id="availability-breach-is-not-capacity",
        ),
    ],
)
def test_a_scaling_group_not_ready_is_classed_as_upstream_classes_it(
    obj: dict[str, Any], reason: str, why: str
) -> None:
    verdict = grove_readiness(PCSG, "g-0-x", obj)
    assert (verdict.ready, verdict.reason, verdict.why) == (False, reason, why)


def test_a_scaling_group_whose_leader_failed_is_not_called_updating() -> None:
    """Grove counts a group replica updated only once it is available: a replica down for a failed
    pod is short of both, and no rollout runs (upstream would read `updating` here)."""
    failed_leader = group(
        desired=1,
        replicas=1,
        available=0,
        updated=0,
        scheduled=1,
        conditions=[
            cond("MinAvailableBreached", "True", "InsufficientAvailablePodCliqueScalingGroupReplicas")
        ],
    )
    verdict = grove_readiness(PCSG, "g-0-x", failed_leader)
    assert (verdict.reason, verdict.why) == (not_ready_reason.PODS_NOT_READY, "scheduled but available=0/1")


@pytest.mark.parametrize(
    ("progress", "reason"),
    [
        pytest.param({"podCliqueSetGenerationHash": "h2"}, not_ready_reason.UPDATING, id="update-running"),
        pytest.param(
            {"podCliqueSetGenerationHash": "h2", "updateEndedAt": "2026-11-28T09:00:00Z"},
            not_ready_reason.PODS_NOT_READY,
            id="update-ended",
        ),
    ],
)
def test_a_scaling_group_rollout_is_told_by_groves_update_progress(
    progress: dict[str, Any], reason: str
) -> None:
    obj = group(available=1, updated=1)
    obj["status"]["updateProgress"] = progress
    assert grove_readiness(PCSG, "g-0-x", obj).reason == reason


def test_a_scaling_group_short_of_capacity_still_names_its_short_member_cliques() -> None:
    members = {
        "g-0-x-0-x-ldr": {"spec": {"replicas": 1}, "status": {"readyReplicas": 1}},
        "g-0-x-0-x-wkr": {"spec": {"replicas": 2}, "status": {"readyReplicas": 2}},
        "g-0-x-1-x-ldr": {"spec": {"replicas": 1}, "status": {"readyReplicas": 0}},
        "g-0-x-1-x-wkr": None,
    }
    verdict = grove_readiness(PCSG, "g-0-x", group(available=1, scheduled=1), members)
    assert verdict.why == (
        "insufficient scheduled replicas: scheduled=1/2"
        " (podclique/g-0-x-1-x-ldr: ready=0/1, podclique/g-0-x-1-x-wkr: not found)"
    )


# --- scheduledReplicas -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "obj", "scheduled"),
    [
        pytest.param(PCLQ, clique(ready=1, scheduled=1), 1, id="podclique"),
        pytest.param(PCSG, group(scheduled=2), 2, id="scaling-group"),
        pytest.param(PCLQ, clique(scheduled=None), 0, id="unset-reads-as-grove-writes-it"),
    ],
)
def test_scheduled_replicas_are_reported_as_grove_counts_them(
    kind: str, obj: dict[str, Any], scheduled: int
) -> None:
    assert grove_readiness(kind, "g-0-x", obj).service["scheduledReplicas"] == scheduled


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(None, id="missing"),
        pytest.param(clique(observed=None), id="never-observed"),
        pytest.param(clique(generation=2), id="spec-not-processed"),
    ],
)
def test_scheduled_replicas_are_not_reported_before_grove_observed_the_spec(
    obj: dict[str, Any] | None,
) -> None:
    """Not reported means unknown: a count of an older spec would read as the new one's."""
    assert "scheduledReplicas" not in grove_readiness(PCLQ, "g-0-x", obj).service


# --- the graph --------------------------------------------------------------------------------------

TARGETS = [ServiceObject("Frontend", PCLQ, "g-0-frontend"), ServiceObject("decode", PCLQ, "g-0-decode")]


def named(obj: dict[str, Any], name: str) -> dict[str, Any]:
    obj["metadata"]["name"] = name
    return obj


@pytest.mark.parametrize(
    ("frontend", "decode", "reason"),
    [
        pytest.param(
            clique(), clique(ready=1, scheduled=1), not_ready_reason.INSUFFICIENT_CAPACITY, id="one-short"
        ),
        pytest.param(
            clique(ready=0, scheduled=1),
            clique(ready=1, scheduled=1),
            not_ready_reason.INSUFFICIENT_CAPACITY,
            id="both-short-of-capacity",
        ),
        pytest.param(
            clique(updated=1), clique(ready=1, scheduled=1), not_ready_reason.MIXED, id="updating-and-short"
        ),
        pytest.param(None, clique(ready=1, scheduled=1), not_ready_reason.MIXED, id="missing-and-short"),
    ],
)
def test_the_graph_reason_aggregates_its_services_classes(
    frontend: dict[str, Any] | None, decode: dict[str, Any], reason: str
) -> None:
    live = {"g-0-decode": named(decode, "g-0-decode")}
    if frontend is not None:
        live["g-0-frontend"] = named(frontend, "g-0-frontend")
    status = grove_graph_status(TARGETS, live)
    assert (status.ready, status.reason) == (False, reason)


def test_a_ready_graph_carries_no_not_ready_reason() -> None:
    live = {"g-0-frontend": named(clique(), "g-0-frontend"), "g-0-decode": named(clique(), "g-0-decode")}
    status = grove_graph_status(TARGETS, live)
    assert (status.ready, status.reason) == (True, "")
    assert {s["scheduledReplicas"] for s in status.services.values()} == {2}


def test_upstream_rollout_case_reads_updating_with_every_replica_scheduled() -> None:
    """Upstream's controller test: decode 2 desired, 1 updated, both scheduled: `updating`."""
    live = {
        "g-0-frontend": named(clique(desired=1, replicas=1, ready=1, updated=1, scheduled=1), "g-0-frontend"),
        "g-0-decode": named(clique(ready=1, updated=1, scheduled=2), "g-0-decode"),
    }
    status = grove_graph_status(TARGETS, live)
    assert status.reason == not_ready_reason.UPDATING
    assert status.message == "podclique/g-0-decode: desired=2, updated=1"
    assert status.services["decode"]["scheduledReplicas"] == 2
    assert status.services["Frontend"]["scheduledReplicas"] == 1


def test_the_ready_condition_carries_the_grove_reason() -> None:
    live = {
        "g-0-frontend": named(clique(), "g-0-frontend"),
        "g-0-decode": named(clique(ready=1, scheduled=1), "g-0-decode"),
    }
    status = dgd_status.synced_status({}, grove_graph_status(TARGETS, live), generation=1, now=NOW)
    [ready] = status["conditions"]
    assert (ready["status"], ready["reason"]) == ("False", "insufficient_capacity")
    assert ready["message"] == "podclique/g-0-decode: insufficient scheduled replicas: scheduled=1/2"
    assert status["components"]["decode"]["scheduledReplicas"] == 1
    assert "placement" not in status  # Grove reports no placement score: left unset, as upstream does


def test_only_an_existing_object_that_is_not_ready_has_its_pods_asked() -> None:
    live = {
        "g-0-frontend": named(clique(), "g-0-frontend"),
        "g-0-decode": named(clique(ready=1), "g-0-decode"),
    }
    assert not_ready_cliques(TARGETS, live) == {"g-0-decode": ["g-0-decode"]}
    assert not_ready_cliques(TARGETS, {"g-0-frontend": named(clique(), "g-0-frontend")}) == {}


def test_a_scaling_groups_pods_are_asked_through_its_member_cliques() -> None:
    target = ServiceObject("W", PCSG, "g-0-w")
    short = named(group(), "g-0-w")
    short["status"]["availableReplicas"] = 0
    cliques = not_ready_cliques([target], {"g-0-w": short})
    assert cliques == {"g-0-w": member_clique_names(short)}


def test_what_the_pods_say_follows_their_objects_line() -> None:
    live = {
        "g-0-frontend": named(clique(), "g-0-frontend"),
        "g-0-decode": named(clique(ready=1), "g-0-decode"),
    }
    said = '1 pod unschedulable: persistentvolumeclaim "w" not found'
    status = grove_graph_status(TARGETS, live, pods_say={"g-0-decode": said})
    assert status.message.startswith("podclique/g-0-decode: ") and status.message.endswith(f"({said})")
