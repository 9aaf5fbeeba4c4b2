"""What the apply machinery needs of its surroundings, each a few methods wide."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from dynamo_operator.internal.client.resource import Resource

Obj = dict[str, Any]


@runtime_checkable
class WireForms(Protocol):
    """A client that may speak a resource in another version on the wire (internal/client/codec.py)."""

    def to_wire(self, resource: Resource, obj: Obj) -> Obj: ...


class StatusClient(Protocol):
    """The one write a status writer sends (a subset of internal.client.Client)."""

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        namespace: str | None = ...,
        subresource: str | None = ...,
    ) -> Obj: ...


class ChildClient(StatusClient, Protocol):
    """The writes a child syncer sends (a subset of internal.client.Client)."""

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = ..., force: bool = ...
    ) -> Obj: ...
    async def create(self, resource: Resource, obj: Obj) -> Obj: ...
    async def get(self, resource: Resource, name: str, *, namespace: str | None = ...) -> Obj: ...
    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = ...,
        propagation_policy: str = ...,
        preconditions: Mapping[str, Any] | None = ...,
    ) -> None: ...


class ChildReader(Protocol):
    """The cache reads this package needs (a subset of internal.cache.Cache)."""

    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]: ...
    def shape(self, resource: Resource, obj: Obj) -> Obj:
        """What this cache would keep of `obj` (its per-kind transform): the write memory, which
        stands in for the cache, holds the same shape and is read the same way."""
        ...

    def is_current(self, resource: Resource) -> bool:
        """Whether reads of `resource` follow the API server at the watch's delivery lag."""
        ...


class HashStamp(Protocol):
    """How a child records the desired content it was written from, so an unchanged child costs
    no request. The hash must be stable across restarts and versions of the operator, and must not
    depend on the stamp itself."""

    def content(self, obj: Mapping[str, Any]) -> str:
        """The hash of what would be sent for `obj`."""
        ...

    def stamp(self, obj: Obj) -> Obj:
        """Record `content(obj)` in `obj`'s metadata (in place; nothing outside metadata) and return it."""
        ...

    def recorded(self, obj: Mapping[str, Any]) -> str | None:
        """The hash a live object was last written with; None when it carries none."""
        ...
