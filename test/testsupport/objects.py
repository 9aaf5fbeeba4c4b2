"""Reading objects in tests: one that may not exist yet, and a status condition of one."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import Resource


async def get_or_none(api: Client, resource: Resource, name: str, namespace: str) -> dict[str, Any] | None:
    """The object, or None while it does not exist."""
    try:
        return await api.get(resource, name, namespace=namespace)
    except NotFound:
        return None


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    """The status condition of that type ({} when absent, or when there is no object)."""
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return {}
