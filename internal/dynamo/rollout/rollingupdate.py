"""The managed worker rolling update: `status.rollingUpdate`'s phase machine and each round's plan. Pure.

A worker spec edit renames every worker DCD (new worker hash, workerhash.py), and the new workers join
a new Dynamo namespace, so old and new generations never talk to each other. For a graph whose
services are all single-node (Deployments) the graph reconciler then paces the replacement as
upstream's operator does (reference `dynamo-dgd-dcd.md` §2.6): the new DCD of each worker service
comes up by `maxSurge`, the old DCDs of that service are scaled down (their `spec.replicas`) as new
replicas turn ready, and once every worker service has moved the old DCDs are deleted. Prefill and
decode (and plain worker) services roll side by side, each paced by its own budget
(rollingbudget.py); a service counts as updated once its new DCD has all its replicas ready and its
old DCDs none.

Everything is derived from the cluster: the "old" DCDs are the graph's live worker DCDs that the
spec no longer names; the phase is the one last written to status. Phases:

    ""/Completed/Failed --old DCDs appear--> Pending          (startTime, event RollingUpdateStarted)
    Pending            --next round------> InProgress
    InProgress         --every service updated--> InProgress, old DCDs pruned
    InProgress         --no old DCD left--> Completed         (endTime, event RollingUpdateCompleted)
    Pending/InProgress --graph no longer single-node--> Failed (endTime, Warning RollingUpdateFailed)

Completion waits for the old DCDs to be gone from the cache, not only for their deletion to be sent:
a cache that still showed them would otherwise look like the start of the next rollout.

A worker service annotated `nvidia.com/deployment-strategy: Recreate` is not paced by the budget: its
old DCDs go to 0 at once and its new DCD stays at 0 until they have drained (recreate.py); it counts as
updated only then, so the old DCDs are not deleted, nor the rollout completed, before.

A graph with a multinode service has no managed rollout (reference §2.2 step 3): its workers are
replaced as a whole (workers.py), with one `RollingUpdateNotSupported` Warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.v1alpha1.enums import RollingUpdatePhase as Phase
from dynamo_operator.api.views.v1alpha1 import RollingUpdateStatus
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import (
    ComponentDeployment,
    DcdSpec,
    ForeignObject,
    ServiceSpec,
    StoredDcdSpec,
    component_view,
)
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject
from dynamo_operator.internal.dynamo.rollout import recreate
from dynamo_operator.internal.dynamo.rollout.recreate import Drain
from dynamo_operator.internal.dynamo.rollout.rollingbudget import budget, share_out
from dynamo_operator.internal.dynamo.rollout.workers import service_of

EVENT_STARTED = "RollingUpdateStarted"
EVENT_COMPLETED = "RollingUpdateCompleted"
EVENT_FAILED = "RollingUpdateFailed"
EVENT_NOT_SUPPORTED = "RollingUpdateNotSupported"
EVENT_RECREATE_STARTING = "RecreateStartingNewWorkers"
REASON_IN_PROGRESS = "rolling_update_in_progress"
MESSAGE_IN_PROGRESS = "Rolling update in progress"
PENDING_REQUEUE_SECONDS = 1.0
"""Pending moves to InProgress on the next round; nothing else may bring one soon (no child changed)."""


RUNNING = frozenset({Phase.PENDING, Phase.IN_PROGRESS})
"""Phases of a rollout under way: the graph is reported pending whatever its DCDs say."""


@dataclass(frozen=True, slots=True)
class Event:
    """An Event to record once the status that goes with it has been written."""

    type: str  # Normal | Warning
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class RollingPlan:
    """What one round of the managed rolling update asks of the graph reconciler."""

    status: dict[str, Any] | None  # status.rollingUpdate to write (None: the graph has none)
    keep: frozenset[str] = frozenset()  # old worker DCDs not pruned this round
    new_replicas: Mapping[str, int] = field(default_factory=dict)  # service → its new DCD's replicas
    old_replicas: Mapping[str, int] = field(default_factory=dict)  # old DCD → spec.replicas to patch
    events: tuple[Event, ...] = ()
    serving_hash: str | None = None  # the worker hash the serving pods carry (graph annotation)
    note: str | None = None  # what the rollout waits for, for the Ready condition (Recreate)
    poll_after: float | None = None  # look again this soon: waiting on something not watched

    @property
    def phase(self) -> Phase:
        return Phase((self.status or {}).get("phase") or "")

    @property
    def in_progress(self) -> bool:
        return self.phase in RUNNING

    @property
    def requeue_after(self) -> float | None:
        waits = [self.poll_after] if self.poll_after is not None else []
        if self.phase == Phase.PENDING:
            waits.append(PENDING_REQUEUE_SECONDS)
        return min(waits) if waits else None


# --- reading the cluster --------------------------------------------------------------------------


def _int(value: object, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def desired_replicas(spec: ServiceSpec | DcdSpec | StoredDcdSpec | None) -> int:
    return _int(spec.get("replicas") if spec else None, c.DEFAULT_REPLICAS)


def ready_replicas(dcd: ComponentDeployment | None) -> int:
    """Ready replicas a DCD reports (`status.component.readyReplicas`); 0 for a DCD not seen yet."""
    counts = (dcd.get("status") or {}).get("component") if dcd else None
    return _int(counts.get("readyReplicas") if counts else None)


def old_worker_dcds(
    *, desired: Mapping[str, str], workers: Mapping[str, ServiceSpec], live: Sequence[ForeignObject]
) -> list[ComponentDeployment]:
    """The graph's live DCDs of current worker services that the spec no longer names (not deleting)."""
    wanted = set(desired.values())
    out = []
    for found in live:
        dcd = component_view(found)
        meta = dcd.get("metadata") or {}
        if meta.get("name") in wanted or meta.get("deletionTimestamp") or service_of(dcd) not in workers:
            continue
        out.append(dcd)
    return out


def _hash_of(dcd: ComponentDeployment) -> str | None:
    value = ((dcd.get("metadata") or {}).get("labels") or {}).get(c.LABEL_WORKER_HASH)
    return str(value) if value else None


def _newest_first(dcds: Sequence[ComponentDeployment]) -> list[ComponentDeployment]:
    def key(d: ComponentDeployment) -> tuple[str, str]:
        meta = d.get("metadata") or {}
        return str(meta.get("creationTimestamp") or ""), str(meta.get("name") or "")

    return sorted(dcds, key=key, reverse=True)


# --- the phase machine ----------------------------------------------------------------------------


def next_phase(previous: Phase, *, managed: bool, old_left: bool) -> Phase:
    """The only place that moves `status.rollingUpdate.phase` (one arrow per case, see the docstring).
    Every service being updated does not end the rollout: completion waits for the old DCDs to be
    gone from the cache."""
    match previous:
        case Phase.PENDING | Phase.IN_PROGRESS if not managed:
            return Phase.FAILED
        case Phase.PENDING:
            return Phase.IN_PROGRESS
        case Phase.IN_PROGRESS if not old_left:
            return Phase.COMPLETED
        case Phase.IN_PROGRESS:
            return Phase.IN_PROGRESS
        case _ if managed and old_left:
            return Phase.PENDING
        case _:
            return previous


def plan_rolling_update(
    *,
    previous: RollingUpdateStatus | None,
    desired: Mapping[str, str],
    workers: Mapping[str, ServiceSpec],
    new_hash: str,
    live: Sequence[ForeignObject],
    views: Mapping[str, ForeignObject | None],
    managed: bool,
    now: str,
    graph_annotations: Mapping[str, str] | None = None,
    drains: Mapping[str, Drain] | None = None,
) -> RollingPlan:
    """This round of the managed rolling update.

    `previous` is the status.rollingUpdate last written, `desired` maps each service to its DCD name,
    `workers` the worker services to their specs, `live` the graph's DCDs, `views` the freshest view
    of each new worker DCD by name (None: not created yet), `managed` whether the graph may be rolled
    this way (all services single-node), `now` an RFC 3339 time for start/end stamps,
    `graph_annotations` the graph's `spec.annotations` (under each service's own), `drains` how far
    the old generation of each Recreate service has stopped (recreate.py; a Recreate service with old
    DCDs and no entry is taken as not drained).
    """
    before = Phase((previous.get("phase") if previous else None) or "")
    old = old_worker_dcds(desired=desired, workers=workers, live=live)
    new_views = {name: component_view(v) if v is not None else None for name, v in views.items()}
    old_by_service: dict[str, list[ComponentDeployment]] = {}
    for dcd in old:
        old_by_service.setdefault(str(service_of(dcd)), []).append(dcd)
    shared = graph_annotations or {}
    recreating = recreate.recreate_services(workers, shared)
    drain = {
        svc: (drains or {}).get(svc, recreate.NOT_LOOKED) if svc in old_by_service else recreate.DRAINED
        for svc in recreating
    }
    updated = sorted(
        svc
        for svc, spec in workers.items()
        if ready_replicas(new_views.get(desired[svc])) >= desired_replicas(spec)
        and sum(ready_replicas(d) for d in old_by_service.get(svc, ())) == 0
        and (svc not in drain or drain[svc].drained)
    )
    all_updated = len(updated) == len(workers) > 0
    phase = next_phase(before, managed=managed, old_left=bool(old))
    status: dict[str, Any] | None = dict(previous) if previous else None
    events: list[Event] = []
    match (before, phase):
        case (_, Phase.PENDING) if before != Phase.PENDING:
            status = {"phase": Phase.PENDING.value, "startTime": now}
            events.append(Event("Normal", EVENT_STARTED, _started_message(new_hash, recreating)))
        case (_, Phase.IN_PROGRESS):
            status = {
                **(status or {}),
                "phase": Phase.IN_PROGRESS.value,
                "updatedComponents": updated or None,
            }
        case (_, Phase.COMPLETED) if before != Phase.COMPLETED:
            status = {
                **(status or {}),
                "phase": Phase.COMPLETED.value,
                "endTime": now,
                "updatedComponents": sorted(workers) or None,
            }
            events.append(
                Event("Normal", EVENT_COMPLETED, f"Rolling update of the workers to {new_hash} completed")
            )
        case (_, Phase.FAILED) if before != Phase.FAILED:
            status = {**(status or {}), "phase": Phase.FAILED.value, "endTime": now}
            events.append(
                Event(
                    "Warning",
                    EVENT_FAILED,
                    "a multinode service cannot be rolled by the operator;"
                    " its workers are replaced as a whole",
                )
            )
    if phase not in RUNNING:
        return RollingPlan(status=status, events=tuple(events), serving_hash=new_hash)
    if all_updated:
        # Every service has moved: the old DCDs go (none serves any more), completion follows once
        # the cache no longer shows them.
        return RollingPlan(status=status, events=tuple(events), serving_hash=new_hash)
    new_replicas: dict[str, int] = {}
    old_replicas: dict[str, int] = {}
    for svc, dcds in old_by_service.items():
        spec = workers[svc]
        wanted = desired_replicas(spec)
        if svc in drain:
            # Recreate: the old generation goes at once, the new one waits for it to be gone.
            old_total, new = 0, wanted if drain[svc].drained else 0
            new_replicas[svc] = new
            view = new_views.get(desired[svc])
            if new and view is not None and desired_replicas(view.get("spec")) == 0:
                events.append(_recreate_starting(svc, new, new_hash))
        else:
            share = budget(
                desired=wanted,
                new_ready=ready_replicas(new_views.get(desired[svc])),
                annotations=recreate.service_annotations(spec, shared),
            )
            old_total = share.old
            if share.new:
                new_replicas[svc] = share.new
        current = [(str(d["metadata"]["name"]), desired_replicas(d.get("spec"))) for d in _newest_first(dcds)]
        for name, replicas in share_out(old_total, current).items():
            if replicas != dict(current)[name]:
                old_replicas[name] = replicas
    hashes = {_hash_of(d) for d in old}
    serving = next(iter(hashes)) if len(hashes) == 1 else None
    return RollingPlan(
        status=status,
        keep=frozenset(str(d["metadata"]["name"]) for d in old),
        new_replicas=new_replicas,
        old_replicas=old_replicas,
        events=tuple(events),
        serving_hash=serving,
        note=recreate.waiting_note(drain, new_hash),
        poll_after=recreate.POLL_SECONDS if any(d.waits_on_pods for d in drain.values()) else None,
    )


def _started_message(new_hash: str, recreating: frozenset[str]) -> str:
    message = f"Rolling update of the workers to {new_hash} started"
    if recreating:
        message += (
            f"; Recreate for {', '.join(sorted(recreating))}: their old workers stop before the new"
            " ones start"
        )
    return message


def _recreate_starting(svc: str, replicas: int, new_hash: str) -> Event:
    return Event(
        "Normal",
        EVENT_RECREATE_STARTING,
        f"old workers of {svc} have terminated; starting {replicas} worker(s) {new_hash}",
    )


def with_new_replicas(
    objects: Sequence[GeneratedObject], new_replicas: Mapping[str, int]
) -> list[GeneratedObject]:
    """`objects` with each new worker DCD's `spec.replicas` set to its rollout budget (copies of the
    DCDs touched; everything else as given)."""
    out = []
    for obj in objects:
        svc = service_of(obj) if obj.get("kind") == "DynamoComponentDeployment" else None
        if svc is not None and svc in new_replicas:
            spec = obj.get("spec")
            fields: GeneratedObject = spec if isinstance(spec, dict) else {}
            out.append({**obj, "spec": {**fields, "replicas": new_replicas[svc]}})
        else:
            out.append(obj)
    return out


def not_supported_event(new_hash: str) -> Event:
    """The Warning a multinode graph gets when its workers change (once, when the new ones are made)."""
    return Event(
        "Warning",
        EVENT_NOT_SUPPORTED,
        f"managed rolling update needs every service single-node; workers {new_hash} replace the old"
        " ones as a whole once they are ready",
    )


def supports_managed_rollout(services: Mapping[str, ServiceSpec | None]) -> bool:
    """Whether the graph can be rolled by the operator: no multinode service (reference §2.2 step 3)."""
    return not any(spec.get("multinode") is not None for spec in services.values() if spec)
