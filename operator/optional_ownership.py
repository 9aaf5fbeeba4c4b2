"""Child kinds a controller owns only while their optional API is served.

For each such kind (a DCD's LeaderWorkerSets, PodGroups and VirtualServices, a DGD's InferencePools
and PodCliqueSets) three things exist together or not at all: the kind's informer, the handler that
maps its events to the owner (what `Builder.owns` wires at start-up for fixed kinds), and its place
in the reconciler's `owned` list (what the reconciler prunes). A kind the owner only reads (Grove's
PodCliques, made by Grove, not by us) has an informer and a mapper of its own, and no place in
`owned`. `OptionalOwnership` switches them with the capabilities,
as a subscriber of `OptionalApiWatch`: informers of newly served kinds start and sync before the
new capabilities are published; kinds no longer served leave `owned` and their informers stop after;
then every owner is requeued, so a graph waiting for an API proceeds and one that lost it says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import structlog
from dynamo_operator.internal.cache.interface import Informer, Obj
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.handlers import controller_owner_keys
from dynamo_operator.internal.controller.predicates import Predicate
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.dynamo.common.context import Capabilities

log = structlog.get_logger(__name__)

# How long a newly served kind's informer may take to list before the API is published anyway (the
# reconcilers then start from an empty view of that kind, which server-side apply tolerates).
SYNC_TIMEOUT_SECONDS = 30.0


Mapper = Callable[[Obj], Iterable[str]]


@dataclass(frozen=True, slots=True)
class OptionalKind:
    """A child kind owned only while `needed(capabilities)`; `predicate` filters its events.
    `mapper` (default: the object's controller ownerReference to the owner kind) says which owners an
    event concerns; `owned=False` marks a kind that is only watched, never written nor pruned."""

    resource: Resource
    needed: Callable[[Capabilities], bool]
    predicate: Predicate
    mapper: Mapper | None = None
    owned: bool = True


class OwningReconciler(Protocol):
    """A reconciler that prunes the children of the kinds in `owned`."""

    owned: tuple[Resource, ...]


class OwnerController(Protocol):
    """The owner's controller (internal.controller.Controller): sources attached while it runs."""

    def watch(self, source: Informer, mapper: Mapper, predicates: Sequence[Predicate] = ()) -> None: ...
    def watch_channel(self, channel: Channel[str], mapper: Callable[[str], Iterable[str]]) -> None: ...


class SyncingInformer(Informer, Protocol):
    async def wait_for_sync(self, timeout: float | None = None) -> bool: ...  # noqa: ASYNC109


class Informers(Protocol):
    """The part of the cache this needs (internal.cache.Cache)."""

    def informer(self, resource: Resource, *, namespace: str | None = None) -> SyncingInformer: ...
    async def remove_informer(self, resource: Resource, *, namespace: str | None = None) -> bool: ...
    def list(self, resource: Resource) -> list[Obj]: ...


class OptionalOwnership:
    """The optional child kinds of one controller (see the module docstring)."""

    def __init__(
        self,
        *,
        cache: Informers,
        reconciler: OwningReconciler,
        controller: OwnerController,
        owner: Resource,
        namespace: str | None,
        kinds: Sequence[OptionalKind],
    ) -> None:
        self._cache, self._reconciler, self._controller = cache, reconciler, controller
        self._owners_to_requeue: Channel[str] = Channel()
        controller.watch_channel(self._owners_to_requeue, lambda key: [key])
        self._owner, self._namespace, self._kinds = owner, namespace, tuple(kinds)
        self._base = tuple(r for r in reconciler.owned if r not in {k.resource for k in self._kinds})
        self._attached: set[Resource] = set()

    def start(self, capabilities: Capabilities) -> None:
        """Own what `capabilities` allow, before the manager runs (the manager waits for the sync)."""
        self._attach(capabilities)
        self._set_owned()

    async def prepare(self, capabilities: Capabilities) -> None:
        """Start the informers of newly served kinds and wait, bounded, until they have listed."""
        started = self._attach(capabilities)
        if not started:
            return
        synced = await asyncio.gather(*(i.wait_for_sync(SYNC_TIMEOUT_SECONDS) for i in started))
        if not all(synced):
            log.warning(
                "Informer of a newly served kind did not sync in time; going on",
                owner=self._owner.kind,
                timeout=SYNC_TIMEOUT_SECONDS,
            )

    async def changed(self, old: Capabilities, new: Capabilities) -> None:
        """Own exactly what `new` allows (stopping the informers of the rest), then requeue owners."""
        gone = [k.resource for k in self._kinds if k.resource in self._attached and not k.needed(new)]
        self._attached.difference_update(gone)
        self._set_owned()  # a kind leaves `owned` before its informer stops: nobody prunes from it
        for resource in gone:
            await self._cache.remove_informer(resource, namespace=self._scope(resource))
        for obj in self._cache.list(self._owner):
            self._owners_to_requeue.send(object_key(obj))

    @property
    def attached(self) -> frozenset[Resource]:
        return frozenset(self._attached)

    def _scope(self, resource: Resource) -> str | None:
        return self._namespace if resource.namespaced else None

    def _attach(self, capabilities: Capabilities) -> list[SyncingInformer]:
        started = []
        for kind in self._kinds:
            if kind.resource in self._attached or not kind.needed(capabilities):
                continue
            informer = self._cache.informer(kind.resource, namespace=self._scope(kind.resource))
            mapper = kind.mapper or controller_owner_keys(self._owner)
            self._controller.watch(informer, mapper, (kind.predicate,))
            self._attached.add(kind.resource)
            started.append(informer)
        return started

    def _set_owned(self) -> None:
        optional = [k.resource for k in self._kinds if k.resource in self._attached and k.owned]
        self._reconciler.owned = (*self._base, *optional)
