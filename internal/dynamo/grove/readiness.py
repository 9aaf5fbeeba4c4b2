"""A Grove-pathway graph's readiness, read from the objects Grove makes (reference §2.3.1 step 6, §3.5).

Per service one object tells: the PodClique `<dgd>-0-<svc>` of a single-node service, the
PodCliqueScalingGroup of a multinode one. Either is ready once Grove has observed its latest spec
and every desired replica exists, is updated and is ready (PodClique: `readyReplicas`; scaling
group: `availableReplicas`, a replica counting once every clique of the group has its minimum
ready). Pure: callers pass the objects they read.

What is not ready is also classed, as upstream 2a6da14c classes it, into the graph's `Ready` reason
(status/not_ready_reason.py): capacity first, because a rollout or a pod that cannot be placed
waits for nodes, not for time. Grove says so three ways, each checked in turn: pods held at a
scheduling gate (a PodClique's `scheduleGatedReplicas`), its own scheduling condition reporting too
few scheduled pods (a PodClique's `PodCliqueScheduled`, a scaling group's `MinAvailableBreached`
with the reason older Grove releases gave it), and some but not all replicas scheduled. Then a
rollout still running (`updating`), then replicas placed but not ready (`pods_not_ready`); an object
missing or whose latest spec Grove has not acted on cannot be told (`some_resources_are_not_ready`).
One deliberate difference: a scaling group is called `updating` only where Grove's counts show a
rollout (`_rolling`), since Grove counts no unavailable group replica as updated.
Each verdict carries the object's `scheduledReplicas` once Grove has observed its spec (a count
Grove reports as zero when unset, so it is reported as Grove gives it).

A scaling group short of available replicas is explained by its member cliques
(`<group>-<j>-<clique>`, as Grove names them): the message names each one short of ready pods,
e.g. the leader clique whose pod failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, ServiceReplicas
from dynamo_operator.internal.dynamo.grove.live import (
    GroveObject,
    GroveStatus,
    grove_object_view,
    pod_clique_set_view,
)
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import StatusCondition
from dynamo_operator.internal.dynamo.status.not_ready_reason import (
    INSUFFICIENT_CAPACITY,
    PODS_NOT_READY,
    UNCLASSIFIED,
    UPDATING,
    aggregate,
)
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus

# Grove's condition words (operator/api/common/constants at v0.1.0-alpha.12-rc1).
CONDITION_POD_CLIQUE_SCHEDULED: Final = "PodCliqueScheduled"
CONDITION_MIN_AVAILABLE_BREACHED: Final = "MinAvailableBreached"
REASON_INSUFFICIENT_SCHEDULED_PODS: Final = "InsufficientScheduledPods"
# A scaling group's scheduling shortfall as Grove up to alpha.8 reported it (with status False); it
# can still be found on a group's status after Grove was upgraded, so upstream still reads it.
REASON_INSUFFICIENT_SCHEDULED_GROUP_REPLICAS: Final = "InsufficientScheduledPodCliqueScalingGroupReplicas"


@dataclass(frozen=True, slots=True)
class GroveReadiness:
    """The verdict on one service's Grove object and its `status.services` entry."""

    ready: bool
    why: str  # upstream's wording, empty when ready
    service: ServiceReplicas
    # The graph's `Ready` reason this service implies when not ready (not_ready_reason's classes);
    # empty when ready.
    reason: str = ""


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def member_clique_names(obj: ForeignObject) -> list[str]:
    """The PodCliques Grove makes for a scaling group's desired replicas: `<group>-<j>-<clique>`."""
    group = grove_object_view(obj)
    name = str((group.get("metadata") or {}).get("name") or "")
    spec = group.get("spec") or {}
    return [
        f"{name}-{replica}-{clique}"
        for replica in range(_int(spec.get("replicas")))
        for clique in spec.get("cliqueNames") or ()
    ]


def _short_members(members: Mapping[str, GroveObject | None]) -> str:
    """` (podclique/<name>: ready=<r>/<want>, ...)` for each member clique short of ready pods (or
    missing), sorted by name; empty when none is (or none was given)."""
    short = []
    for name, clique in sorted(members.items()):
        if clique is None:
            short.append(f"podclique/{name}: not found")
            continue
        want = _int((clique.get("spec") or {}).get("replicas"))
        ready = _int((clique.get("status") or {}).get("readyReplicas"))
        if ready < want:
            short.append(f"podclique/{name}: ready={ready}/{want}")
    return f" ({', '.join(short)})" if short else ""


def _capacity_shortfall(scaling_group: bool, status: GroveStatus, desired: int) -> str:
    """What Grove says of replicas it could not place, in upstream's words; empty when it says
    nothing of the kind. A scheduled count of zero alone says nothing: Grove may not have counted."""
    scheduled = _int(status.get("scheduledReplicas"))
    if not scaling_group:
        gated = _int(status.get("scheduleGatedReplicas"))
        if gated > 0:
            return f"schedule-gated replicas: {gated}"
        cond: StatusCondition = (
            conditions.find(status.get("conditions"), CONDITION_POD_CLIQUE_SCHEDULED) or {}
        )
        if cond.get("status") == "False" and cond.get("reason") == REASON_INSUFFICIENT_SCHEDULED_PODS:
            return f"scheduling condition {cond.get('reason')}: {cond.get('message') or ''}"
    else:
        cond = conditions.find(status.get("conditions"), CONDITION_MIN_AVAILABLE_BREACHED) or {}
        if (
            cond.get("status") == "False"
            and cond.get("reason") == REASON_INSUFFICIENT_SCHEDULED_GROUP_REPLICAS
        ):
            return f"min-available breached ({cond.get('reason')}): {cond.get('message') or ''}"
    if 0 < scheduled < desired:
        return f"insufficient scheduled replicas: scheduled={scheduled}/{desired}"
    return ""


def _rolling(scaling_group: bool, status: GroveStatus, *, desired: int, updated: int, available: int) -> bool:
    """Whether replicas of an older spec are still being replaced. A PodClique's updated count is
    its pods of the latest template. Grove counts a scaling-group replica as updated only once it
    is also available (its reconcilestatus), so a group short of available replicas is short of
    updated ones too, rollout or not: there a rollout shows as available replicas of an older spec
    (fewer updated than available), or as Grove's update progress without an end. Upstream reads
    `updated < desired` for both kinds and so calls a group whose leader failed `updating`."""
    if not scaling_group:
        return updated != desired
    progress = status.get("updateProgress")
    running = isinstance(progress, Mapping) and not progress.get("updateEndedAt")
    return updated < available or running


def grove_readiness(
    kind: str, name: str, obj: GroveObject | None, members: Mapping[str, GroveObject | None] | None = None
) -> GroveReadiness:
    """Readiness of the PodClique or PodCliqueScalingGroup `name` (`obj`: None when it does not exist).
    `members`: a scaling group's member cliques by name (None: not looked up), to say which is short."""
    scaling_group = kind == c.KIND_POD_CLIQUE_SCALING_GROUP
    component_kind: Final = "PodCliqueScalingGroup" if scaling_group else "PodClique"
    if obj is None:
        return GroveReadiness(
            False,
            "resource not found",
            {
                "componentKind": component_kind,
                "componentName": name,
                "componentNames": [name],
                "replicas": 0,
                "updatedReplicas": 0,
            },
            UNCLASSIFIED,
        )
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    desired = _int(spec.get("replicas"))
    replicas, updated = _int(status.get("replicas")), _int(status.get("updatedReplicas"))
    word = "available" if scaling_group else "ready"
    counted = _int(status.get("availableReplicas") if scaling_group else status.get("readyReplicas"))
    service: ServiceReplicas = {
        "componentKind": component_kind,
        "componentName": name,
        "componentNames": [name],
        "replicas": replicas,
        "updatedReplicas": updated,
    }
    if scaling_group:
        service["availableReplicas"] = counted
    else:
        service["readyReplicas"] = counted
    observed = status.get("observedGeneration")
    generation = _int((obj.get("metadata") or {}).get("generation"))
    if not isinstance(observed, int):
        return GroveReadiness(False, "observedGeneration is nil", service, UNCLASSIFIED)
    if observed < generation:
        why = f"spec not yet processed: generation={generation}, observedGeneration={observed}"
        return GroveReadiness(False, why, service, UNCLASSIFIED)
    # Only from here: before Grove observed the spec its count belongs to an older one.
    service["scheduledReplicas"] = _int(status.get("scheduledReplicas"))
    if desired == 0 or replicas == updated == counted == desired:
        # Whole first, so a ready object Grove left without a scheduled count is not called short.
        return GroveReadiness(True, "", service)
    detail = _short_members(members or {}) if scaling_group and counted < desired else ""
    shortfall = _capacity_shortfall(scaling_group, status, desired)
    if shortfall:
        return GroveReadiness(False, shortfall + detail, service, INSUFFICIENT_CAPACITY)
    if _rolling(scaling_group, status, desired=desired, updated=updated, available=counted):
        return GroveReadiness(False, f"desired={desired}, updated={updated}", service, UPDATING)
    if replicas != desired:
        why = f"performing rolling update: desired={desired}, replicas={replicas}"
        return GroveReadiness(False, why, service, UPDATING)
    return GroveReadiness(False, f"scheduled but {word}={counted}/{desired}{detail}", service, PODS_NOT_READY)


@dataclass(frozen=True, slots=True)
class ServiceObject:
    """Where one service's readiness lives: the kind and name of its Grove object."""

    service: str
    kind: str
    name: str


def _label(kind: str) -> str:
    return "pcsg" if kind == c.KIND_POD_CLIQUE_SCALING_GROUP else "podclique"


def _view(obj: ForeignObject | None) -> GroveObject | None:
    return grove_object_view(obj) if obj is not None else None


def _verdicts(
    targets: Sequence[ServiceObject],
    live: Mapping[str, ForeignObject | None],
    members: Mapping[str, ForeignObject | None],
) -> list[tuple[ServiceObject, GroveReadiness]]:
    out = []
    for target in targets:
        obj = _view(live.get(target.name))
        own = (
            {n: _view(members.get(n)) for n in member_clique_names(obj)}
            if obj is not None and target.kind == c.KIND_POD_CLIQUE_SCALING_GROUP
            else None
        )
        out.append((target, grove_readiness(target.kind, target.name, obj, own)))
    return out


def not_ready_cliques(
    targets: Sequence[ServiceObject],
    live: Mapping[str, ForeignObject | None],
    members: Mapping[str, ForeignObject | None] | None = None,
) -> dict[str, list[str]]:
    """For each service object that is not ready (and exists), the PodCliques whose pods may say
    why: the clique itself, or a scaling group's member cliques."""
    out: dict[str, list[str]] = {}
    for target, verdict in _verdicts(targets, live, members or {}):
        obj = live.get(target.name)
        if verdict.ready or obj is None:
            continue
        scaling = target.kind == c.KIND_POD_CLIQUE_SCALING_GROUP
        out[target.name] = member_clique_names(obj) if scaling else [target.name]
    return out


def grove_graph_status(
    targets: Sequence[ServiceObject],
    live: Mapping[str, ForeignObject | None],
    members: Mapping[str, ForeignObject | None] | None = None,
    pods_say: Mapping[str, str] | None = None,
) -> GraphStatus:
    """Ready iff every service's Grove object is ready; the message names each one that is not
    (`podclique/<name>: <why>` or `pcsg/<name>: <why>`, sorted by name, joined by `; `) and the
    reason is their classes aggregated (one shared class, else `mixed_not_ready_reasons`). `live`:
    the objects read, by name (a missing name: the object does not exist); `members`: the member
    cliques of the scaling groups read, by name (`member_clique_names`); `pods_say`: what the pods
    of a not-ready object say (pod_diagnosis), by the object's name, appended to its line."""
    out = GraphStatus(ready=True, message="")
    waiting: list[tuple[str, str]] = []
    classes: list[str] = []
    pods_say = pods_say or {}
    for target, verdict in _verdicts(targets, live, members or {}):
        out.services[target.service] = verdict.service
        if not verdict.ready:
            out.ready = False
            said = f" ({pods_say[target.name]})" if target.name in pods_say else ""
            waiting.append((target.name, f"{_label(target.kind)}/{target.name}: {verdict.why}{said}"))
            classes.append(verdict.reason)
    out.message = "; ".join(m for _, m in sorted(waiting)) if waiting else "All resources are ready"
    if waiting:
        out.reason = aggregate(classes)
    return out


def restart_rolled(
    obj: ForeignObject | None, targets: Sequence[ServiceObject], live: Mapping[str, ForeignObject | None]
) -> dict[str, bool]:
    """Per service: has it rolled to the set's latest spec (for restart progress)? Only once Grove
    observed the PodCliqueSet's generation, then by the service's own readiness."""
    pcs = pod_clique_set_view(obj if obj is not None else {})
    status = pcs.get("status") or {}
    observed = status.get("observedGeneration")
    generation = _int((pcs.get("metadata") or {}).get("generation"))
    caught_up = obj is not None and isinstance(observed, int) and observed >= generation
    return {
        t.service: caught_up and grove_readiness(t.kind, t.name, _view(live.get(t.name))).ready
        for t in targets
    }


def restart_values(obj: ForeignObject | None) -> dict[str, str | None]:
    """Per service (by the clique's component label): the restart id its live cliques carry."""
    out: dict[str, str | None] = {}
    pcs = pod_clique_set_view(obj if obj is not None else {})
    for clique in ((pcs.get("spec") or {}).get("template") or {}).get("cliques") or ():
        service = (clique.get("labels") or {}).get(c.LABEL_COMPONENT)
        if service:
            out[str(service)] = (clique.get("annotations") or {}).get(c.ANNOTATION_RESTART_AT)
    return out
