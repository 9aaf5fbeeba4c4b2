"""The Recreate strategy of the managed worker rollout: which services take it, when an old generation
counts as drained, and what each round of the rollout asks for while it drains."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.recreate import (
    DRAINED,
    NOT_LOOKED,
    POLL_SECONDS,
    RECREATE,
    ROLLING_UPDATE,
    Drain,
    at_zero,
    drain_of,
    needs_pods,
    recreate_services,
    service_annotations,
    strategy_of,
)
from dynamo_operator.internal.dynamo.rollout.rollingupdate import (
    EVENT_RECREATE_STARTING,
    EVENT_STARTED,
    PENDING_REQUEUE_SECONDS,
    Phase,
    RollingPlan,
    plan_rolling_update,
)

Obj = dict[str, Any]
STRATEGY = "nvidia.com/deployment-strategy"
NOW = "2026-01-01T00:00:00Z"
OLD, NEW = "aaaaaaaa", "bbbbbbbb"
DESIRED = {"Frontend": "g-frontend", "Worker": f"g-worker-{NEW}"}
IN_PROGRESS = {"phase": "InProgress", "startTime": NOW}


def dcd(
    name: str,
    *,
    service: str = "Worker",
    worker_hash: str | None = None,
    replicas: int | None = 2,
    ready: int = 0,
    status_replicas: int | None = None,
    generation: int = 1,
    observed: int | None = 1,
) -> Obj:
    """A DCD as stored; `status_replicas` is its workload's pod count (None: no `status.component`)."""
    labels = {"nvidia.com/dynamo-component": service}
    if worker_hash:
        labels["nvidia.com/dynamo-worker-hash"] = worker_hash
    spec: Obj = {"serviceName": service}
    if replicas is not None:
        spec["replicas"] = replicas
    status: Obj = {}
    if observed is not None:
        status["observedGeneration"] = observed
    if status_replicas is not None:
        status["component"] = {"replicas": status_replicas, "readyReplicas": ready}
    return {
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "labels": labels, "generation": generation},
        "spec": spec,
        "status": status,
    }


def pod(selector: str | None, phase: str = "Running", *, deleting: bool = False) -> Obj:
    meta: Obj = {"name": f"p-{selector}-{phase}", "labels": {}}
    if selector:
        meta["labels"]["nvidia.com/selector"] = selector
    if deleting:
        meta["deletionTimestamp"] = NOW
    return {"metadata": meta, "status": {"phase": phase}}


def worker(replicas: int = 2, **annotations: str) -> Obj:
    return {"componentType": "worker", "replicas": replicas, "annotations": annotations}


RECREATE_WORKER = {"Worker": worker(**{STRATEGY: RECREATE})}
OLD_NAME = f"g-worker-{OLD}"
OLD_SERVING = dcd(OLD_NAME, worker_hash=OLD, replicas=2, ready=2, status_replicas=2)
OLD_AT_ZERO = dcd(OLD_NAME, worker_hash=OLD, replicas=0, status_replicas=0, generation=2, observed=2)
NEW_HELD = dcd(DESIRED["Worker"], worker_hash=NEW, replicas=0, status_replicas=0)
NEW_READY = dcd(DESIRED["Worker"], worker_hash=NEW, replicas=2, ready=2, status_replicas=2)
FRONTEND = dcd("g-frontend", service="Frontend", replicas=1, ready=1, status_replicas=1)


def plan(
    previous: Obj | None,
    live: list[Obj],
    *,
    drains: dict[str, Drain] | None = None,
    services: dict[str, Obj] | None = None,
    desired: dict[str, str] | None = None,
    graph_annotations: dict[str, str] | None = None,
) -> RollingPlan:
    names = desired or DESIRED
    by_name = {d["metadata"]["name"]: d for d in live}
    return plan_rolling_update(
        previous=previous,
        desired=names,
        workers=services if services is not None else RECREATE_WORKER,
        new_hash=NEW,
        live=live,
        views={n: by_name.get(n) for n in names.values()},
        managed=True,
        now=NOW,
        graph_annotations=graph_annotations,
        drains=drains,
    )


# --- which services are rolled the Recreate way -----------------------------------------------------


@pytest.mark.parametrize(
    ("service", "graph", "expected"),
    [
        pytest.param({}, {}, ROLLING_UPDATE, id="no-annotation-is-rolling-update"),
        pytest.param({STRATEGY: "RollingUpdate"}, {}, ROLLING_UPDATE, id="explicit-rolling-update"),
        pytest.param({STRATEGY: "Recreate"}, {}, RECREATE, id="service-recreate"),
        pytest.param({STRATEGY: "recreate"}, {}, ROLLING_UPDATE, id="other-spelling-is-rolling-update"),
        pytest.param({}, {STRATEGY: "Recreate"}, RECREATE, id="graph-recreate-when-service-says-nothing"),
        pytest.param({STRATEGY: "RollingUpdate"}, {STRATEGY: "Recreate"}, ROLLING_UPDATE, id="service-wins"),
    ],
)
def test_strategy_of_service(service: dict[str, str], graph: dict[str, str], expected: str) -> None:
    assert strategy_of(service_annotations({"annotations": service}, graph)) == expected


def test_recreate_services_names_only_services_annotated_recreate() -> None:
    services = {"Prefill": worker(**{STRATEGY: RECREATE}), "Decode": worker()}
    assert recreate_services(services, {}) == frozenset({"Prefill"})


# --- when an old DCD is at zero -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "expected"),
    [
        pytest.param(dcd("o", replicas=1, status_replicas=1), False, id="still-asks-for-replicas"),
        pytest.param(dcd("o", replicas=None, status_replicas=0), False, id="default-replica-not-drained"),
        pytest.param(
            dcd("o", replicas=0, status_replicas=0, generation=2, observed=1), False, id="unobserved"
        ),
        pytest.param(
            dcd("o", replicas=0, status_replicas=None, generation=2, observed=2), False, id="no-counts"
        ),
        pytest.param(dcd("o", replicas=0, status_replicas=1, generation=2, observed=2), False, id="pod-left"),
        pytest.param(
            dcd("o", replicas=0, status_replicas=0, generation=2, observed=None), False, id="no-status"
        ),
        pytest.param(dcd("o", replicas=0, status_replicas=0, generation=2, observed=2), True, id="at-zero"),
    ],
)
def test_old_dcd_at_zero(old: Obj, expected: bool) -> None:
    assert at_zero(old) is expected


def test_pods_are_needed_only_once_every_old_dcd_is_at_zero() -> None:
    assert (needs_pods([]), needs_pods([OLD_AT_ZERO]), needs_pods([OLD_AT_ZERO, OLD_SERVING])) == (
        False,
        True,
        False,
    )


# --- when an old generation has drained -------------------------------------------------------------


@pytest.mark.parametrize(
    ("pods", "left"),
    [
        pytest.param([], 0, id="no-pods"),
        pytest.param([pod(OLD_NAME)], 1, id="running-old-pod-blocks"),
        pytest.param([pod(OLD_NAME, deleting=True)], 1, id="terminating-running-old-pod-blocks"),
        pytest.param([pod(OLD_NAME, "Pending")], 1, id="pending-old-pod-blocks"),
        pytest.param([pod(OLD_NAME, "Unknown")], 1, id="unknown-old-pod-blocks"),
        pytest.param(
            [pod(OLD_NAME, "Succeeded"), pod(OLD_NAME, "Failed")], 0, id="finished-pods-do-not-block"
        ),
        pytest.param([pod(DESIRED["Worker"])], 0, id="new-generation-pod-does-not-block"),
        pytest.param([pod(None)], 0, id="pod-without-selector-does-not-block"),
    ],
)
def test_pods_left_of_an_old_generation_at_zero(pods: list[Obj], left: int) -> None:
    drain = drain_of([OLD_AT_ZERO], pods)
    assert (drain.pods_left, drain.drained) == (left, left == 0)


def test_an_old_generation_still_scaling_is_not_drained_and_says_what_is_left() -> None:
    drain = drain_of([OLD_SERVING], None)
    assert (drain.drained, drain.scaling, drain.replicas_left) == (False, (OLD_NAME,), 2)


def test_an_old_generation_at_zero_whose_pods_were_not_listed_is_not_drained() -> None:
    assert drain_of([OLD_AT_ZERO], None) == NOT_LOOKED
    assert not NOT_LOOKED.drained


def test_no_old_generation_is_drained() -> None:
    assert drain_of([], None) == DRAINED


# --- each round of a Recreate rollout ----------------------------------------------------------------


def test_first_round_scales_the_old_generation_to_zero_and_holds_the_new_one_at_zero() -> None:
    out = plan(None, [FRONTEND, OLD_SERVING], drains={"Worker": drain_of([OLD_SERVING], None)})
    assert out.phase == Phase.PENDING
    assert (dict(out.old_replicas), dict(out.new_replicas), out.keep) == (
        {OLD_NAME: 0},
        {"Worker": 0},
        frozenset({OLD_NAME}),
    )


def test_started_event_says_which_services_are_recreated() -> None:
    out = plan(None, [FRONTEND, OLD_SERVING], drains={"Worker": drain_of([OLD_SERVING], None)})
    [event] = out.events
    assert event.reason == EVENT_STARTED
    assert "Recreate for Worker" in event.message


def test_ready_condition_note_says_old_workers_are_scaling_to_zero() -> None:
    out = plan(
        IN_PROGRESS, [FRONTEND, OLD_SERVING, NEW_HELD], drains={"Worker": drain_of([OLD_SERVING], None)}
    )
    assert out.note == (
        f"Recreate: old workers of Worker scaling to zero (2 left); workers {NEW} start once the old"
        " ones are gone"
    )


def test_new_generation_stays_at_zero_while_old_pods_terminate() -> None:
    drain = drain_of([OLD_AT_ZERO], [pod(OLD_NAME, deleting=True)])
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={"Worker": drain})
    assert (dict(out.new_replicas), dict(out.old_replicas), out.keep) == (
        {"Worker": 0},
        {},
        frozenset({OLD_NAME}),
    )
    assert out.note is not None and "waiting for 1 old Worker pod(s) to terminate" in out.note


def test_waiting_on_old_pods_looks_again_soon() -> None:
    drain = drain_of([OLD_AT_ZERO], [pod(OLD_NAME)])
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={"Worker": drain})
    assert out.requeue_after == POLL_SECONDS


def test_pending_round_waiting_on_old_pods_keeps_the_shorter_requeue() -> None:
    drain = drain_of([OLD_AT_ZERO], [pod(OLD_NAME)])
    out = plan(None, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={"Worker": drain})
    assert out.requeue_after == min(POLL_SECONDS, PENDING_REQUEUE_SECONDS)


def test_a_recreate_service_without_a_reported_drain_is_held_at_zero() -> None:
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={})
    assert dict(out.new_replicas) == {"Worker": 0}


def test_drained_old_generation_lets_the_new_one_start_with_its_replicas() -> None:
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={"Worker": drain_of([OLD_AT_ZERO], [])})
    assert (dict(out.new_replicas), out.keep, out.note) == ({"Worker": 2}, frozenset({OLD_NAME}), None)


def test_starting_the_new_generation_records_one_event() -> None:
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_HELD], drains={"Worker": drain_of([OLD_AT_ZERO], [])})
    assert [e.reason for e in out.events] == [EVENT_RECREATE_STARTING]


def test_new_generation_ready_and_old_drained_lets_the_old_dcds_go() -> None:
    out = plan(
        IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, NEW_READY], drains={"Worker": drain_of([OLD_AT_ZERO], [])}
    )
    assert (out.keep, out.serving_hash, out.status and out.status["updatedComponents"]) == (
        frozenset(),
        NEW,
        ["Worker"],
    )


def test_old_dcds_are_kept_while_their_pods_run_even_when_the_new_generation_serves() -> None:
    """The completion barrier: a service of 0 replicas is "ready" at once, but old pods still run."""
    services = {"Worker": worker(0, **{STRATEGY: RECREATE})}
    new_zero = dcd(DESIRED["Worker"], worker_hash=NEW, replicas=0, status_replicas=0)
    drain = drain_of([OLD_AT_ZERO], [pod(OLD_NAME, deleting=True)])
    out = plan(IN_PROGRESS, [FRONTEND, OLD_AT_ZERO, new_zero], drains={"Worker": drain}, services=services)
    assert (out.keep, out.serving_hash, out.status and out.status["updatedComponents"]) == (
        frozenset({OLD_NAME}),
        OLD,
        None,
    )


def test_completed_rollout_with_an_old_generation_still_running_resumes_instead_of_accepting_it() -> None:
    """The stale-annotation barrier: a Completed rollout that finds old worker DCDs whose pods still
    run rolls again (Pending), keeps the old DCDs and names the old hash as serving."""
    drain = drain_of([OLD_AT_ZERO], [pod(OLD_NAME)])
    done = {"phase": "Completed", "startTime": NOW, "endTime": NOW}
    out = plan(done, [FRONTEND, OLD_AT_ZERO, NEW_READY], drains={"Worker": drain})
    assert (out.phase, out.keep, out.serving_hash) == (Phase.PENDING, frozenset({OLD_NAME}), OLD)


def test_a_rolling_update_service_beside_a_recreate_one_keeps_its_budget() -> None:
    services = {"Prefill": worker(4), "Decode": worker(4, **{STRATEGY: RECREATE})}
    desired = {"Prefill": f"g-prefill-{NEW}", "Decode": f"g-decode-{NEW}"}
    old_p = dcd(
        f"g-prefill-{OLD}", service="Prefill", worker_hash=OLD, replicas=4, ready=4, status_replicas=4
    )
    old_d = dcd(f"g-decode-{OLD}", service="Decode", worker_hash=OLD, replicas=4, ready=4, status_replicas=4)
    out = plan(
        IN_PROGRESS,
        [old_p, old_d],
        drains={"Decode": drain_of([old_d], None)},
        services=services,
        desired=desired,
    )
    # Prefill: 25% of 4 unavailable and surged; Decode: all old replicas away, none new yet.
    assert dict(out.old_replicas) == {f"g-prefill-{OLD}": 3, f"g-decode-{OLD}": 0}
    assert dict(out.new_replicas) == {"Prefill": 2, "Decode": 0}


def test_graph_annotations_pace_a_rolling_update_service_that_sets_none() -> None:
    services = {"Worker": worker(4)}
    old = dcd(OLD_NAME, worker_hash=OLD, replicas=4, ready=4, status_replicas=4)
    surge_one = {"nvidia.com/deployment-rolling-update-max-surge": "1"}
    unavailable_none = {"nvidia.com/deployment-rolling-update-max-unavailable": "0"}
    out = plan(
        IN_PROGRESS, [FRONTEND, old], services=services, graph_annotations={**surge_one, **unavailable_none}
    )
    assert (dict(out.old_replicas), dict(out.new_replicas)) == ({}, {"Worker": 1})


def test_revert_to_the_draining_generation_scales_it_back_once_the_abandoned_one_is_at_zero() -> None:
    """A -> B -> A under Recreate: A (desired again, at zero) is never kept or pruned as old; B, which
    never got a pod, is drained at once and A gets its replicas back."""
    a_name, b_name = OLD_NAME, DESIRED["Worker"]
    a_at_zero = dcd(a_name, worker_hash=OLD, replicas=0, status_replicas=0, generation=2, observed=2)
    b_held = dcd(b_name, worker_hash=NEW, replicas=0, status_replicas=0)
    back = {"Frontend": "g-frontend", "Worker": a_name}
    out = plan_rolling_update(
        previous=IN_PROGRESS,
        desired=back,
        workers=RECREATE_WORKER,
        new_hash=OLD,
        live=[FRONTEND, a_at_zero, b_held],
        views={"g-frontend": FRONTEND, a_name: a_at_zero},
        managed=True,
        now=NOW,
        drains={"Worker": drain_of([b_held], [])},
    )
    assert (dict(out.new_replicas), out.keep, dict(out.old_replicas)) == (
        {"Worker": 2},
        frozenset({b_name}),
        {},
    )
