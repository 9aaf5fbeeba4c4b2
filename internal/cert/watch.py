"""Follow one object by name: a LIST and WATCH narrowed to `metadata.name`, so RBAC can grant exactly
that object (`resourceNames`), restarted with backoff whenever the stream ends or fails."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import structlog
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, TransportError
from dynamo_operator.internal.client.model import Obj
from dynamo_operator.internal.client.resource import Resource

log = structlog.get_logger(__name__)

OnChange = Callable[[Obj | None], None]
_BACKOFF_FIRST = 0.5
_BACKOFF_MAX = 30.0
# Short server-side timeouts: a quiet stream is renewed every few minutes anyway.
_WATCH_SECONDS = 300


async def follow(
    client: Client,
    resource: Resource,
    name: str,
    on_change: OnChange,
    *,
    namespace: str | None = None,
) -> None:
    """Call `on_change(object)` for the object's current state and every change, `on_change(None)`
    while it does not exist; runs until cancelled."""
    selector = f"metadata.name={name}"
    backoff = _BACKOFF_FIRST
    while True:
        try:
            page = await client.list_page(resource, namespace=namespace, field_selector=selector, limit=1)
            on_change(page.items[0] if page.items else None)
            backoff = _BACKOFF_FIRST
            async with client.watch(
                resource,
                namespace=namespace,
                resource_version=page.resource_version,
                field_selector=selector,
                timeout_seconds=_WATCH_SECONDS,
            ) as events:
                async for event in events:
                    if event.type in ("ADDED", "MODIFIED"):
                        on_change(event.object)
                    elif event.type == "DELETED":
                        on_change(None)
                    elif event.type == "ERROR":
                        break  # mostly 410 Gone: list again
        except (ApiError, TransportError) as err:
            log.info("Watch of one object failed; retrying", kind=resource.kind, name=name, error=str(err))
            await asyncio.sleep(backoff * (1 + random.random() / 2))
            backoff = min(backoff * 2, _BACKOFF_MAX)
