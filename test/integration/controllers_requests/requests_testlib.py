"""Helpers shared by the request/model controller integration tests (not a test module).
`condition` and `get_or_none` come from testsupport.objects and are re-exported for them."""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from testsupport.graphs import two_service_graph
from testsupport.objects import condition, get_or_none
from testsupport.operator import TEST_FIELD_MANAGER

__all__ = ["apply", "condition", "get_or_none", "graph"]


def graph(
    name: str, namespace: str, *, adapter: bool = True, model: str | None = None, workers: int = 1
) -> Any:
    """A frontend plus one worker (optionally behind a scaling adapter, optionally serving `model`)."""
    return two_service_graph(name, namespace, worker_replicas=workers, adapter=adapter, model=model)


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Apply a manifest as the test's own field manager."""
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)
