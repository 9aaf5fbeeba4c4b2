"""Status computation from observed children. Pure: callers pass observed objects (and `now` when a
condition timestamp is needed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo import naming

Obj = dict[str, Any]


def _condition_true(obj: Mapping[str, Any], ctype: str) -> bool:
    return any(
        x.get("type") == ctype and x.get("status") == "True"
        for x in (obj.get("status") or {}).get("conditions") or []
    )


def deployment_ready(dep: Mapping[str, Any]) -> bool:
    """Every desired replica of the latest template is updated, available and running (zero is ready)."""
    spec = dep.get("spec") or {}
    status = dep.get("status") or {}
    if spec.get("paused"):
        return False
    desired = spec.get("replicas", c.DEFAULT_REPLICAS)
    if desired == 0:
        return True
    generation = (dep.get("metadata") or {}).get("generation") or 0
    return bool(
        (status.get("observedGeneration") or 0) >= generation
        and (status.get("updatedReplicas") or 0) >= desired
        and (status.get("availableReplicas") or 0) >= desired
        and (status.get("replicas") or 0) == desired
        and _condition_true(dep, "Available")
    )


def leader_worker_set_ready(lws: Mapping[str, Any]) -> bool:
    """All groups ready and the LWS reports Available (zero replicas is ready)."""
    desired = (lws.get("spec") or {}).get("replicas", c.DEFAULT_REPLICAS)
    if desired == 0:
        return True
    generation = (lws.get("metadata") or {}).get("generation") or 0
    status = lws.get("status") or {}
    observed = status.get("observedGeneration")
    if observed is not None and observed < generation:
        return False
    return (status.get("readyReplicas") or 0) >= desired and _condition_true(lws, "Available")


def deployment_replica_status(dep: Mapping[str, Any]) -> Obj:
    """`ServiceReplicaStatus` of a Deployment."""
    status = dep.get("status") or {}
    name = str((dep.get("metadata") or {}).get("name"))
    return {
        "componentKind": "Deployment",
        "componentName": name,
        "componentNames": [name],
        "replicas": status.get("replicas") or 0,
        "updatedReplicas": status.get("updatedReplicas") or 0,
        "readyReplicas": status.get("readyReplicas") or 0,
        "availableReplicas": status.get("availableReplicas") or 0,
    }


def lws_replica_status(sets: Sequence[Mapping[str, Any]]) -> Obj:
    """`ServiceReplicaStatus` summed over a component's LeaderWorkerSets (no availableReplicas)."""
    names = sorted(str((x.get("metadata") or {}).get("name")) for x in sets)
    total = {"replicas": 0, "updatedReplicas": 0, "readyReplicas": 0}
    for x in sets:
        status = x.get("status") or {}
        for key in total:
            total[key] += status.get(key) or 0
    return {
        "componentKind": "LeaderWorkerSet",
        "componentName": names[0] if names else "",
        "componentNames": names,
        **total,
    }


def component_conditions(ready: bool, *, multinode: bool) -> list[Obj]:
    """`Available` and `DynamoComponentReady` for a DCD (without timestamps; see `merge_conditions`)."""
    status = "True" if ready else "False"
    if multinode:
        reason, message = (
            ("AllLeaderWorkerSetsReady", "All LeaderWorkerSets are ready")
            if ready
            else ("SomeLeaderWorkerSetsNotReady", "Some LeaderWorkerSets are not ready")
        )
    else:
        reason, message = (
            ("DeploymentReady", "Deployment is ready")
            if ready
            else ("DeploymentNotReady", "Deployment is not ready")
        )
    comp_reason, comp_message = (
        ("ComponentReady", "DynamoComponent is ready")
        if ready
        else ("ComponentNotReady", "DynamoComponent is not ready")
    )
    return [
        {"type": c.CONDITION_AVAILABLE, "status": status, "reason": reason, "message": message},
        {
            "type": c.CONDITION_COMPONENT_READY,
            "status": status,
            "reason": comp_reason,
            "message": comp_message,
        },
    ]


def merge_conditions(
    previous: Sequence[Mapping[str, Any]],
    updates: Sequence[Mapping[str, Any]],
    *,
    now: str,
    generation: int | None = None,
) -> list[Obj]:
    """Upsert conditions by type; lastTransitionTime moves only when the status flips, so an
    unchanged status serialises identically (and costs no write)."""
    by_type = {str(x["type"]): dict(x) for x in previous}
    for update in updates:
        old = by_type.get(str(update["type"]))
        new = dict(update)
        if generation is not None:
            new["observedGeneration"] = generation
        new["lastTransitionTime"] = (
            old["lastTransitionTime"]
            if old and old.get("status") == new["status"] and old.get("lastTransitionTime")
            else now
        )
        by_type[str(update["type"])] = new
    return [by_type[t] for t in sorted(by_type)]


def dcd_available(dcd: Mapping[str, Any] | None) -> bool:
    """A DCD is ready when its controller observed the latest generation and reports Available."""
    if not dcd:
        return False
    generation = (dcd.get("metadata") or {}).get("generation") or 0
    observed = (dcd.get("status") or {}).get("observedGeneration") or 0
    return observed >= generation and _condition_true(dcd, c.CONDITION_AVAILABLE)


def graph_status(dgd: Mapping[str, Any], dcds: Mapping[str, Mapping[str, Any] | None]) -> Obj:
    """`state`, the `Ready` condition (no timestamp) and `services` for a graph, given its services'
    observed DCDs (None: not created yet). The message names every resource that is not ready."""
    dgd_name = str((dgd.get("metadata") or {}).get("name"))
    services = sorted(((dgd.get("spec") or {}).get("services") or {}).keys())
    not_ready: list[tuple[str, str]] = []
    replica_status: dict[str, Obj] = {}
    for svc in services:
        dcd = dcds.get(svc)
        name = naming.dcd_name(dgd_name, svc)
        if dcd is None:
            not_ready.append((name, "not created yet"))
            continue
        service_status = (dcd.get("status") or {}).get("service")
        if service_status:
            replica_status[svc] = dict(service_status)
        if not dcd_available(dcd):
            not_ready.append((name, _dcd_reason(dcd)))
    if not_ready:
        detail = "; ".join(f"{name}: {why}" for name, why in sorted(not_ready))
        ready = {
            "type": c.CONDITION_READY,
            "status": "False",
            "reason": c.REASON_SOME_NOT_READY,
            "message": f"Resources not ready: {detail}",
        }
        state = c.DGD_STATE_PENDING
    else:
        ready = {
            "type": c.CONDITION_READY,
            "status": "True",
            "reason": c.REASON_ALL_READY,
            "message": "All resources are ready",
        }
        state = c.DGD_STATE_SUCCESSFUL
    out: Obj = {"state": state, "conditions": [ready]}
    if replica_status:
        out["services"] = replica_status
    return out


def failed_graph_status(reason: str, message: str) -> Obj:
    """Status of a graph that cannot be reconciled (semantic error, missing API)."""
    return {
        "state": c.DGD_STATE_FAILED,
        "conditions": [{"type": c.CONDITION_READY, "status": "False", "reason": reason, "message": message}],
    }


def _dcd_reason(dcd: Mapping[str, Any]) -> str:
    generation = (dcd.get("metadata") or {}).get("generation") or 0
    status = dcd.get("status") or {}
    observed = status.get("observedGeneration") or 0
    if observed < generation:
        return f"spec not yet processed: generation={generation}, observedGeneration={observed}"
    service = status.get("service") or {}
    for cond in status.get("conditions") or []:
        if cond.get("type") == c.CONDITION_AVAILABLE and cond.get("status") != "True":
            desired = service.get("replicas")
            ready = service.get("readyReplicas")
            counts = f" (replicas={desired}, ready={ready})" if desired is not None else ""
            return f"{cond.get('message') or 'Available condition not true'}{counts}"
    return "Component deployment not ready - Available condition not true"
