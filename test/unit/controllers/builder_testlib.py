"""Which informers a controller's `setup()` asks its cache for (not a test module)."""

from __future__ import annotations

from typing import Any, Protocol

from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.builder import Builder


class Reconciler(Protocol):
    def setup(self, b: Builder) -> None: ...
    async def reconcile(self, key: str) -> Any: ...


class _Informer:
    """Takes handlers and indexers, holds no store."""

    def add_event_handler(self, handler: Any) -> None: ...
    def add_indexers(self, indexers: Any) -> None: ...

    @property
    def store(self) -> Any:
        return None


def informers_asked(name: str, reconciler: Reconciler) -> list[tuple[Resource, str | None]]:
    """(resource, label selector) of every informer `reconciler.setup` and the builder's `complete`
    asked for, in order."""
    asked: list[tuple[Resource, str | None]] = []

    class RecordingCache:
        def informer(self, resource: Resource, *, label_selector: str | None = None, **_: Any) -> Any:
            asked.append((resource, label_selector))
            return _Informer()

    b = Builder(name, cache=RecordingCache(), register=lambda _: None)
    reconciler.setup(b)
    b.complete(reconciler)  # type: ignore[arg-type]
    return asked
