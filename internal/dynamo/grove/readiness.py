"""A Grove-pathway graph's readiness, read from the objects Grove makes (reference §2.3.1 step 6, §3.5).

Per service one object tells: the PodClique `<dgd>-0-<svc>` of a single-node service, the
PodCliqueScalingGroup of a multinode one. Either is ready once Grove has observed its latest spec
and every desired replica is ready (PodClique: `readyReplicas`; scaling group: `availableReplicas`,
a replica counting once every clique of the group has its minimum ready), updated, and no surplus
replica is left over from a rollout. A scaling group short of available replicas is explained by its
member cliques (`<group>-<j>-<clique>`, as Grove names them): the message names each one short of
ready pods, e.g. the leader clique whose pod failed. Pure: callers pass the objects they read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class GroveReadiness:
    """The verdict on one service's Grove object and its `status.services` entry."""

    ready: bool
    why: str  # upstream's wording, empty when ready
    service: dict[str, Any]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def member_clique_names(group: Obj) -> list[str]:
    """The PodCliques Grove makes for a scaling group's desired replicas: `<group>-<j>-<clique>`."""
    name = str((group.get("metadata") or {}).get("name") or "")
    spec = group.get("spec") or {}
    return [
        f"{name}-{replica}-{clique}"
        for replica in range(_int(spec.get("replicas")))
        for clique in spec.get("cliqueNames") or ()
    ]


def _short_members(members: Mapping[str, Obj | None]) -> str:
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


def grove_readiness(
    kind: str, name: str, obj: Obj | None, members: Mapping[str, Obj | None] | None = None
) -> GroveReadiness:
    """Readiness of the PodClique or PodCliqueScalingGroup `name` (`obj`: None when it does not exist).
    `members`: a scaling group's member cliques by name (None: not looked up), to say which is short."""
    scaling_group = kind == c.KIND_POD_CLIQUE_SCALING_GROUP
    if obj is None:
        return GroveReadiness(
            False,
            "resource not found",
            {
                "componentKind": kind,
                "componentName": name,
                "componentNames": [name],
                "replicas": 0,
                "updatedReplicas": 0,
            },
        )
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    desired = _int(spec.get("replicas"))
    replicas, updated = _int(status.get("replicas")), _int(status.get("updatedReplicas"))
    counted = _int(status.get("availableReplicas" if scaling_group else "readyReplicas"))
    service: dict[str, Any] = {
        "componentKind": kind,
        "componentName": name,
        "componentNames": [name],
        "replicas": replicas,
        "updatedReplicas": updated,
        ("availableReplicas" if scaling_group else "readyReplicas"): counted,
    }
    observed = status.get("observedGeneration")
    generation = _int((obj.get("metadata") or {}).get("generation"))
    if not isinstance(observed, int):
        return GroveReadiness(False, "observedGeneration is nil", service)
    if observed < generation:
        why = f"spec not yet processed: generation={generation}, observedGeneration={observed}"
        return GroveReadiness(False, why, service)
    if desired == 0:
        return GroveReadiness(True, "", service)
    if counted != desired:
        word = "available" if scaling_group else "ready"
        detail = _short_members(members or {}) if scaling_group else ""
        return GroveReadiness(False, f"desired={desired}, {word}={counted}{detail}", service)
    if updated != desired:
        return GroveReadiness(False, f"desired={desired}, updated={updated}", service)
    if replicas != desired:
        return GroveReadiness(
            False, f"performing rolling update: desired={desired}, replicas={replicas}", service
        )
    return GroveReadiness(True, "", service)


@dataclass(frozen=True, slots=True)
class ServiceObject:
    """Where one service's readiness lives: the kind and name of its Grove object."""

    service: str
    kind: str
    name: str


def _label(kind: str) -> str:
    return "pcsg" if kind == c.KIND_POD_CLIQUE_SCALING_GROUP else "podclique"


def grove_graph_status(
    targets: Sequence[ServiceObject],
    live: Mapping[str, Obj | None],
    members: Mapping[str, Obj | None] | None = None,
) -> GraphStatus:
    """Ready iff every service's Grove object is ready; the message names each one that is not
    (`podclique/<name>: <why>` or `pcsg/<name>: <why>`, sorted by name, joined by `; `). `live`:
    the objects read, by name (a missing name: the object does not exist); `members`: the member
    cliques of the scaling groups read, by name (`member_clique_names`)."""
    out = GraphStatus(ready=True, message="")
    waiting: list[tuple[str, str]] = []
    members = members or {}
    for target in targets:
        obj = live.get(target.name)
        own = (
            {n: members.get(n) for n in member_clique_names(obj)}
            if obj is not None and target.kind == c.KIND_POD_CLIQUE_SCALING_GROUP
            else None
        )
        verdict = grove_readiness(target.kind, target.name, obj, own)
        out.services[target.service] = verdict.service
        if not verdict.ready:
            out.ready = False
            waiting.append((target.name, f"{_label(target.kind)}/{target.name}: {verdict.why}"))
    out.message = "; ".join(m for _, m in sorted(waiting)) if waiting else "All resources are ready"
    return out


def restart_rolled(
    pcs: Obj | None, targets: Sequence[ServiceObject], live: Mapping[str, Obj | None]
) -> dict[str, bool]:
    """Per service: has it rolled to the set's latest spec (for restart progress)? Only once Grove
    observed the PodCliqueSet's generation, then by the service's own readiness."""
    status = (pcs or {}).get("status") or {}
    observed = status.get("observedGeneration")
    generation = _int(((pcs or {}).get("metadata") or {}).get("generation"))
    caught_up = pcs is not None and isinstance(observed, int) and observed >= generation
    return {t.service: caught_up and grove_readiness(t.kind, t.name, live.get(t.name)).ready for t in targets}


def restart_values(pcs: Obj | None) -> dict[str, str | None]:
    """Per service (by the clique's component label): the restart id its live cliques carry."""
    out: dict[str, str | None] = {}
    for clique in (((pcs or {}).get("spec") or {}).get("template") or {}).get("cliques") or ():
        service = (clique.get("labels") or {}).get(c.LABEL_COMPONENT)
        if service:
            out[str(service)] = (clique.get("annotations") or {}).get(c.ANNOTATION_RESTART_AT)
    return out
