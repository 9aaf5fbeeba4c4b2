"""The contract between informers and their consumers (controllers, indexers, reconcilers).

Objects are plain dicts exactly as the API server sent them, minus `metadata.managedFields`.
Consumers must treat them as read-only: the same dict is shared by every reader of the store.
Handlers run on the event loop, synchronously, in watch order; they must not block or await.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any, Protocol

Obj = dict[str, Any]
# Maps one object to the index values it is filed under (e.g. its namespace, its owner's UID).
IndexFunc = Callable[[Obj], list[str]]


class EventHandler(Protocol):
    """Receives every change an informer observes. During the initial list each object is an add."""

    def on_add(self, obj: Obj) -> None: ...
    def on_update(self, old: Obj, new: Obj) -> None: ...
    def on_delete(self, obj: Obj) -> None: ...


class StoreReader(Protocol):
    """Read side of an informer's store. Results may lag the API server: the cache is eventually
    consistent, so a reconciler acts on what it sees and is re-triggered when that changes."""

    def get(self, key: str) -> Obj | None: ...  # key: "namespace/name" or "name"
    def list(self) -> builtins.list[Obj]: ...
    def keys(self) -> builtins.list[str]: ...
    def by_index(self, index: str, value: str) -> builtins.list[Obj]: ...


class Informer(Protocol):
    """One list+watch of a resource (optionally one namespace / label / field selector), shared by
    every consumer that asks for the same key."""

    @property
    def store(self) -> StoreReader: ...
    def add_event_handler(self, handler: EventHandler) -> None: ...
    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None: ...
    def has_synced(self) -> bool: ...
