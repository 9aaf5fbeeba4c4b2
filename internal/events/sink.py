"""Where events are written: a two-method seam over the API (a fake in unit tests)."""

from __future__ import annotations

from typing import Any, Protocol

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT

Obj = dict[str, Any]


class EventSink(Protocol):
    async def create(self, event: Obj) -> Obj: ...
    async def patch(self, namespace: str, name: str, body: Obj) -> Obj: ...  # raises NotFound


class ApiEventSink:
    """core/v1 Events through the operator's client."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def create(self, event: Obj) -> Obj:
        return await self._client.create(EVENT, event)

    async def patch(self, namespace: str, name: str, body: Obj) -> Obj:
        return await self._client.patch(EVENT, name, body, namespace=namespace)
