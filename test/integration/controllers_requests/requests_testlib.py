"""Helpers shared by the request/model controller integration tests (not a test module)."""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.controllers import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import Resource
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER


def graph(
    name: str, namespace: str, *, adapter: bool = True, model: str | None = None, workers: int = 1
) -> Any:
    """A frontend plus one worker (optionally behind a scaling adapter, optionally serving `model`)."""
    return two_service_graph(name, namespace, worker_replicas=workers, adapter=adapter, model=model)


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Apply a manifest as the test's own field manager."""
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


async def get_or_none(api: Client, resource: Resource, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        return await api.get(resource, name, namespace=namespace)
    except NotFound:
        return None


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    """The status condition of that type ({} when absent)."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return {}
