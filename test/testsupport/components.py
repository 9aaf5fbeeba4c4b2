"""Finding a graph service's DCD and workload by labels: worker names carry the worker hash, which a
test should not have to compute (and which changes with every worker spec edit)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource

GRAPH_LABEL = "nvidia.com/dynamo-graph-deployment-name"
COMPONENT_LABEL = "nvidia.com/dynamo-component"
WORKER_HASH_LABEL = "nvidia.com/dynamo-worker-hash"


def selector(graph: str, service: str) -> str:
    return f"{GRAPH_LABEL}={graph},{COMPONENT_LABEL}={service}"


async def of_service(
    api: Client, resource: Resource, namespace: str, graph: str, service: str
) -> list[dict[str, Any]]:
    """Every `resource` object labelled as `service` of `graph` (two while old workers still serve)."""
    found = await api.list(resource, namespace=namespace, label_selector=selector(graph, service))
    return [o for o in found if not o["metadata"].get("deletionTimestamp")]


async def dcd_of(api: Client, namespace: str, graph: str, service: str) -> dict[str, Any] | None:
    """The service's DCD when exactly one exists, else None (not yet created, or mid-rollout)."""
    found = await of_service(api, kinds.DCD, namespace, graph, service)
    return found[0] if len(found) == 1 else None


async def deployment_of(api: Client, namespace: str, graph: str, service: str) -> dict[str, Any] | None:
    """The service's Deployment when exactly one exists, else None."""
    found = await of_service(api, kinds.DEPLOYMENT, namespace, graph, service)
    return found[0] if len(found) == 1 else None


def name(obj: dict[str, Any] | None) -> str:
    assert obj is not None
    return str(obj["metadata"]["name"])
