"""Readiness and status from observed objects, for the DCD and DGD reconcilers. Pure: callers pass
the objects they read (and `now` where an age matters); nothing here reads a clock or the cluster.

A DCD is ready when its workload runs its latest spec with every replica updated and available
(`deployment_readiness`, `lws_readiness`); its conditions say so in upstream's reasons, with the
pods' own explanation appended when not. A DGD is ready when every service's DCD has rolled
(`graph_status`). The first status of a new object is held back while it would only say "starting"
(`first_status_delay`, `nothing_to_report_yet`): each status change costs a write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypedDict, cast

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.inputs import (
    ComponentDeployment,
    ForeignObject,
    ObjectMeta,
    ServiceReplicas,
    StoredComponent,
    component_view,
)
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.not_ready_reason import aggregate, component_not_ready_reason
from dynamo_operator.internal.dynamo.status.pod_diagnosis import Diagnosis
from dynamo_operator.internal.dynamo.status.replicas import as_service_replicas
from dynamo_operator.internal.timestamps import epoch_seconds

AVAILABLE = "Available"
COMPONENT_READY = "DynamoComponentReady"
DEPLOYMENT_KIND = "Deployment"
LWS_KIND = "LeaderWorkerSet"
FIRST_STATUS_GRACE_SECONDS = 5.0
"""How long a new component's first status may wait for its pods to simply start."""


# --- component readiness (a DCD's workload) ----------------------------------------------------


class WorkloadSpec(TypedDict, total=False):
    replicas: int
    paused: bool  # a Deployment's


class WorkloadStatus(TypedDict, total=False):
    observedGeneration: int
    replicas: int
    updatedReplicas: int
    readyReplicas: int
    availableReplicas: int
    conditions: list[conditions.StatusCondition]


class Workload(TypedDict, total=False):
    """What readiness reads of a Deployment (apps/v1) or a LeaderWorkerSet (leaderworkerset.x-k8s.io/v1):
    both name these fields alike."""

    kind: str
    metadata: ObjectMeta
    spec: WorkloadSpec
    status: WorkloadStatus


def _workload(obj: ForeignObject) -> Workload:
    # A live workload (or the one generation just built): its API server validated these fields
    # against their schema. The readers below still treat a value of another type as absent.
    return cast(Workload, obj)


@dataclass(frozen=True, slots=True)
class WorkloadReadiness:
    """The verdict on one component's workload plus its replica counts for `status.service`."""

    ready: bool
    message: str
    service: ServiceReplicas
    scaled_to_zero: bool = False
    unobserved: bool = False  # the workload's controller has not yet seen its latest spec


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _desired(spec: WorkloadSpec) -> int:
    value = spec.get("replicas", 1)
    return value if isinstance(value, int) else 1


def deployment_readiness(obj: ForeignObject) -> WorkloadReadiness:
    """Ready ⇔ the Deployment observed its generation and updated = available = replicas = desired.

    Truthful by construction (user reports #3567, #10527): during a rollout old pods meeting the
    count do not make it ready; zero desired replicas is ready once the old pods are gone.
    """
    deployment = _workload(obj)
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    meta = deployment.get("metadata") or {}
    desired = _desired(spec)
    observed = _int(status.get("observedGeneration")) >= _int(meta.get("generation"))
    replicas, updated = _int(status.get("replicas")), _int(status.get("updatedReplicas"))
    ready_n, available = _int(status.get("readyReplicas")), _int(status.get("availableReplicas"))
    service: ServiceReplicas = {
        "componentKind": "Deployment",
        "componentName": meta.get("name", ""),
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready_n,
        "availableReplicas": available,
    }
    if spec.get("paused"):
        return WorkloadReadiness(False, "paused", service)
    if not observed:
        # Not yet seen by the Deployment controller; with pods already running this starts a rollout.
        suffix = ", rolling" if replicas else ""
        message = f"{min(ready_n, desired)}/{desired} ready{suffix}"
        return WorkloadReadiness(False, message, service, unobserved=True)
    if desired == 0:
        if replicas:
            return WorkloadReadiness(False, f"scaling to zero, {replicas} left", service)
        return WorkloadReadiness(True, "scaled to zero", service, scaled_to_zero=True)
    if updated < desired or replicas > desired:
        return WorkloadReadiness(False, f"rolling, {updated}/{desired} updated", service)
    if available < desired or ready_n < desired:
        return WorkloadReadiness(False, f"{min(ready_n, available)}/{desired} ready", service)
    if not conditions.is_true(status.get("conditions"), "Available"):
        return WorkloadReadiness(False, f"{desired}/{desired} ready, not yet available", service)
    return WorkloadReadiness(True, f"{desired}/{desired} ready", service)


def workload_ready(workload: ForeignObject) -> bool:
    """One Deployment or LeaderWorkerSet judged ready (False for any other kind)."""
    kind = workload.get("kind")
    if kind == DEPLOYMENT_KIND:
        return deployment_readiness(workload).ready
    if kind == LWS_KIND:
        return lws_readiness(workload).ready
    return False


def became_ready(old: ForeignObject, new: ForeignObject) -> bool:
    """A workload's update that makes it ready: its owner's status write finishes a wait."""
    return workload_ready(new) and not workload_ready(old)


def dcd_became_rolled(old: Mapping[str, object], new: Mapping[str, object]) -> bool:
    """A DCD's update that makes it rolled (`dcd_rolled`): its graph may be ready now."""
    return dcd_rolled(component_view(new)) and not dcd_rolled(component_view(old))


def lws_readiness(obj: ForeignObject | None) -> WorkloadReadiness:
    """Ready ⇔ the component's one LeaderWorkerSet has every group updated, ready and Available, and
    no group beyond the desired count left (zero desired groups: ready once none is left). None
    (not created yet) is not ready."""
    lws = _workload(obj) if obj is not None else None
    spec, status = (lws or {}).get("spec") or {}, (lws or {}).get("status") or {}
    name = str(((lws or {}).get("metadata") or {}).get("name", ""))
    desired = _desired(spec)
    ready_n, updated = _int(status.get("readyReplicas")), _int(status.get("updatedReplicas"))
    service: ServiceReplicas = {
        "componentKind": "LeaderWorkerSet",
        "componentName": name,
        "componentNames": [name] if name else [],
        "replicas": _int(status.get("replicas")),
        "updatedReplicas": updated,
        "readyReplicas": ready_n,
    }
    if lws is None:
        return WorkloadReadiness(False, f"0/{desired} groups ready", service)
    replicas = _int(status.get("replicas"))
    if replicas > desired:
        # Groups beyond the desired count still run: a scale-down is not over (as for Deployments).
        return WorkloadReadiness(False, f"scaling down to {desired}, {replicas} groups left", service)
    if desired == 0:
        return WorkloadReadiness(True, "scaled to zero", service, scaled_to_zero=True)
    available = conditions.is_true(status.get("conditions"), "Available")
    if ready_n < desired or updated < desired or not available:
        # Never `unobserved`: without a LeaderWorkerSet controller no status would ever come.
        return WorkloadReadiness(False, f"{min(ready_n, desired)}/{desired} groups ready", service)
    return WorkloadReadiness(True, f"{desired}/{desired} groups ready", service)


def first_status_delay(verdict: WorkloadReadiness, *, created: str | None, now: float) -> float:
    """Seconds to hold back a brand-new component's first, not-ready status (0: write it now).

    Pods that are merely starting usually turn Ready within a few seconds; writing "0/1 ready" first
    and "1/1 ready" a moment later costs two status writes (and a graph status write each) where one
    says the same. Nothing is held once `FIRST_STATUS_GRACE_SECONDS` have passed since the DCD's
    creation; a problem the pods show (unschedulable, image pull, crash loop) is then told with it.
    """
    born = epoch_seconds(created)
    if verdict.ready or born is None:
        return 0.0
    # A skewed clock can make the age negative: never wait longer than the grace itself.
    return min(max(FIRST_STATUS_GRACE_SECONDS - (now - born), 0.0), FIRST_STATUS_GRACE_SECONDS)


NOT_READY_RECHECK_MIN_SECONDS = 10.0
NOT_READY_RECHECK_MAX_SECONDS = 120.0


def not_ready_recheck(since: str | None, now: float) -> float:
    """Seconds until a component that is not ready has its pods looked at again.

    Pods can go wrong without their workload's status moving (an image pull failing, a container
    crash-looping before it was ever ready), and the operator does not watch pods: it lists a
    component's pods when it reports it not ready. Half the time the component has been not ready
    (`since`: its Available condition's lastTransitionTime), between 10 s and 2 min: a fresh rollout
    is looked at again soon, a lasting problem costs one small LIST every 2 min.
    """
    changed = epoch_seconds(since)
    age = 0.0 if changed is None else now - changed
    return min(max(age / 2, NOT_READY_RECHECK_MIN_SECONDS), NOT_READY_RECHECK_MAX_SECONDS)


def ready_conditions(verdict: WorkloadReadiness, why: Diagnosis | None = None) -> list[Condition]:
    """`Available` and `DynamoComponentReady`, both saying the same thing in upstream's reasons.

    When not ready, `why` (what the pods show) is appended to both messages and becomes the reason
    of `Available`; `DynamoComponentReady` keeps upstream's reason, which tools match on.
    """
    kind = verdict.service.get("componentKind")
    noun = "LeaderWorkerSet" if kind == LWS_KIND else "Deployment"
    if verdict.ready:
        reason = "ScaledToZero" if verdict.scaled_to_zero else f"{kind}Ready"
        return [
            Condition(AVAILABLE, "True", reason, f"{noun} is ready: {verdict.message}"),
            Condition(COMPONENT_READY, "True", "ComponentReady", verdict.message),
        ]
    message = f"{verdict.message} ({why.message})" if why else verdict.message
    reason = why.reason if why else f"{kind}NotReady"
    return [
        Condition(AVAILABLE, "False", reason, f"{noun} is not ready: {message}"),
        Condition(COMPONENT_READY, "False", "ComponentNotReady", message),
    ]


def failed_conditions(reason: str, message: str) -> list[Condition]:
    return [
        Condition(AVAILABLE, "False", reason, message),
        Condition(COMPONENT_READY, "False", reason, message),
    ]


# --- graph readiness (a DGD's components) ------------------------------------------------------


def dcd_rolled(dcd: ComponentDeployment) -> bool:
    """The DCD's controller has seen its latest spec and reports it Available."""
    meta, status = dcd.get("metadata") or {}, dcd.get("status") or {}
    observed = status.get("observedGeneration")
    caught_up = isinstance(observed, int) and observed >= int(meta.get("generation") or 0)
    return caught_up and conditions.is_true(status.get("conditions"), "Available")


def _service_message(dcd: ComponentDeployment | None, replicas: int) -> str:
    # New components say "0/N ready" from the first moment, so the message (and hence the status)
    # changes only when something real happens: each change costs a status write.
    if dcd is None:
        return f"0/{replicas} ready"
    status = dcd.get("status") or {}
    if not status:
        return f"0/{replicas} ready"
    cond = conditions.find(status.get("conditions"), "DynamoComponentReady")
    message = str((cond or {}).get("message") or "")
    observed = status.get("observedGeneration")
    if not isinstance(observed, int) or observed < int((dcd.get("metadata") or {}).get("generation") or 0):
        counts = status.get("component")
        return "rolling" if counts and counts.get("replicas") else f"0/{replicas} ready"
    return message or "not ready"


@dataclass(slots=True)
class GraphStatus:
    """What the DGD status should say about its services."""

    ready: bool
    message: str
    services: dict[str, ServiceReplicas] = field(default_factory=dict)
    # The `Ready` reason when not ready (not_ready_reason.py); "" lets the status writer use its
    # generic one (a pathway that does not classify).
    reason: str = ""


def graph_status(
    services: Mapping[str, StoredComponent], dcds: Mapping[str, Mapping[str, object] | None]
) -> GraphStatus:
    """Ready iff every service's DCD has rolled; the message names each service that has not, and
    the reason classes them (capacity, updating, pods not ready: `not_ready_reason`). `services`:
    the graph's components as stored, by name."""
    out = GraphStatus(ready=True, message="")
    waiting: list[str] = []
    classes: list[str] = []
    zero: list[str] = []
    for svc in sorted(services):
        spec = services[svc] or {}
        found = dcds.get(svc)
        dcd = component_view(found) if found is not None else None
        replicas = spec.get("replicas", consts.DEFAULT_REPLICAS)
        replicas = replicas if isinstance(replicas, int) else consts.DEFAULT_REPLICAS
        live = (dcd.get("status") or {}).get("component") if dcd is not None else None
        out.services[svc] = as_service_replicas(live) if live else _placeholder(svc, spec, dcd)
        if dcd is not None and dcd_rolled(dcd):
            if replicas == 0:
                zero.append(svc)
            continue
        out.ready = False
        waiting.append(f"{svc}: {_service_message(dcd, replicas)}")
        classes.append(component_not_ready_reason(dcd))
    if waiting:
        out.message = "; ".join(waiting)
        out.reason = aggregate(classes)
    else:
        out.message = "All resources are ready" + (f"; scaled to zero: {', '.join(zero)}" if zero else "")
    return out


def nothing_to_report_yet(
    status: Mapping[str, object], verdict: GraphStatus, dcds: Mapping[str, Mapping[str, object] | None]
) -> bool:
    """A new graph (no status yet) whose components have not all reported, and none that did
    reports a problem: its first status would only say "0/N ready" and be rewritten a moment later.
    Holding it back saves status writes per graph; it is bounded, because every component reports
    within the DCD controller's first-status grace, and any not-ready report ends the wait."""
    if status or verdict.ready:
        return False
    reported = [component_view(d) for d in dcds.values() if d is not None and d.get("status")]
    return len(reported) < len(dcds) and all(dcd_rolled(d) for d in reported)


def _placeholder(svc: str, spec: StoredComponent, dcd: ComponentDeployment | None) -> ServiceReplicas:
    name = str((dcd.get("metadata") or {}).get("name") or svc) if dcd is not None else svc
    if spec.get("multinode"):
        return {
            "componentKind": "LeaderWorkerSet",
            "componentName": name,
            "replicas": 0,
            "updatedReplicas": 0,
        }
    return {"componentKind": "Deployment", "componentName": name, "replicas": 0, "updatedReplicas": 0}
