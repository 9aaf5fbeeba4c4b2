"""The adapter is the single writer of its service's replicas: these functions say what the graph
should hold, and what the adapter's status (read by HPA through the scale subresource) reports.

The graph is read and written as stored (v1beta1): a service is the `spec.components[]` entry of its
name, its running replicas are `status.components[<name>]`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dynamo_operator.api.v1beta1.groupversion import API_VERSION as STORED_API_VERSION
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.inputs import (
    AdapterStatus,
    ScalingAdapter,
    StoredComponent,
    StoredGraph,
)
from dynamo_operator.internal.dynamo.common.objects import GeneratedObject
from dynamo_operator.internal.dynamo.component.backends import Role
from dynamo_operator.internal.dynamo.pod.template import multinode_node_count

# Field manager of the adapter's writes into the DGD: `kubectl get dgd -o yaml --show-managed-fields`
# then names the adapter as the owner of each adapter-managed `replicas`.
FIELD_MANAGER = "dynamo-operator-scaling-adapter"
DEFAULT_REPLICAS = 1


@dataclass(frozen=True, slots=True)
class Target:
    """The service an adapter scales."""

    namespace: str
    dgd: str
    service: str


def target(adapter: ScalingAdapter) -> Target:
    """The graph and component (a v1alpha1 service) `dgdRef` names, in the adapter's namespace."""
    ref = adapter["spec"]["dgdRef"]
    meta = adapter.get("metadata", {})
    return Target(str(meta.get("namespace", "")), str(ref.get("name", "")), str(ref.get("componentName", "")))


def desired_replicas(adapter: ScalingAdapter) -> int:
    """The adapter's spec.replicas; missing means 1 (the graph's own default)."""
    value = adapter["spec"].get("replicas")
    return DEFAULT_REPLICAS if value is None else int(value)


def service_spec(dgd: StoredGraph, service: str) -> StoredComponent | None:
    """The service's entry in the graph, None when the graph has no such component."""
    for entry in dgd.get("spec", {}).get("components") or ():
        if isinstance(entry, Mapping) and entry.get("name") == service:
            return entry
    return None


def component_names(dgd: StoredGraph) -> list[str]:
    """The names of the graph's components, sorted."""
    return sorted(str(e.get("name")) for e in dgd.get("spec", {}).get("components") or () if e.get("name"))


def graph_replicas(dgd: StoredGraph, service: str) -> int | None:
    """What the graph currently asks for (nil counts as 1); None when the service is missing."""
    entry = service_spec(dgd, service)
    if entry is None:
        return None
    value = entry.get("replicas")
    return DEFAULT_REPLICAS if value is None else int(value)


def replicas_apply(t: Target, replicas: int, *, resource_version: str | None = None) -> GeneratedObject:
    """The server-side-apply body that sets only this service's replicas in the graph (the component
    list is a map keyed by name, so the apply owns that one entry's `replicas`); with the
    `resource_version` of the graph it was decided on, the apply conflicts once the graph moved."""
    meta: GeneratedObject = {"name": t.dgd, "namespace": t.namespace}
    if resource_version is not None:
        meta["resourceVersion"] = resource_version
    return {
        "apiVersion": STORED_API_VERSION,
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"components": [{"name": t.service, "replicas": replicas}]},
    }


def selector(dgd: StoredGraph, service: str) -> str:
    """Label selector of the pods that stand for the service's replicas (what HPA averages metrics
    over). For a multinode service only leaders: each replica has exactly one, and only leaders
    serve and export engine metrics."""
    parts = [
        f"{consts.LABEL_GRAPH_DEPLOYMENT_NAME}={dgd['metadata']['name']}",
        f"{consts.LABEL_COMPONENT}={service}",
    ]
    entry = service_spec(dgd, service)
    if entry is not None and multinode_node_count(entry) > 1:
        parts.append(f"{consts.LABEL_ROLE}={Role.LEADER.value}")
    return ",".join(parts)


def observed_replicas(dgd: StoredGraph, service: str) -> int:
    """Replicas actually running for the service, from the graph's status (0 until it reports)."""
    entry = (dgd.get("status", {}).get("components") or {}).get(service)
    value = entry.get("replicas") if entry else None
    return int(value) if value is not None else 0


def status(
    previous: AdapterStatus, dgd: StoredGraph, service: str, *, scaled_at: str | None
) -> AdapterStatus:
    """The status of an adapter that drives its service: observed replicas, pod selector, and the last
    time it changed the graph (kept from `previous`, the status it reported so far, unless it just
    did). Conditions are the caller's (see readiness)."""
    out: AdapterStatus = {
        "replicas": observed_replicas(dgd, service),
        "selector": selector(dgd, service),
    }
    last = scaled_at or previous.get("lastScaleTime")
    if last:
        out["lastScaleTime"] = last
    return out


def metrics_state(adapter: ScalingAdapter) -> str:
    """The `status` label of the resource-count metric: `ready` once the adapter reports a selector and
    running replicas, and no `Ready=False` condition."""
    status = adapter.get("status", {})
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "False":
            return "not_ready"
    return "ready" if status.get("selector") and int(status.get("replicas") or 0) > 0 else "not_ready"
