"""The shared-informer factory and the read façade controllers use.

One informer per (resource, namespace, label selector, field selector): every controller asking
for the same scope shares its watch and its memory. Reads by resource go to the unfiltered
informer of that resource, so a reconciler reads what it was triggered by.

Lifecycle: register informers → `start()` runs each as a task (informers registered later start at
once) → `wait_for_sync()` → ... → `stop()` cancels them all and waits. `remove_informer()` stops and
forgets one informer while the rest run on (for a resource whose API went away).
"""

from __future__ import annotations

import asyncio
import builtins
import random
from collections.abc import Mapping

from dynamo_operator.internal.cache.informer import SharedInformer
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import ListWatcher, Scope
from dynamo_operator.internal.cache.store import NAMESPACE_INDEX
from dynamo_operator.internal.cache.transform import Transform, strip_managed_fields
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import Clock, RealClock


class InformerNotRegistered(LookupError):
    """A read for a resource nobody registered an informer for (we never start one implicitly:
    a silent cluster-wide watch is how operators run out of memory)."""


def _labels_match(obj: Obj, labels: Mapping[str, str]) -> bool:
    have = obj.get("metadata", {}).get("labels") or {}
    return all(have.get(k) == v for k, v in labels.items())


def _scope(
    resource: Resource,
    namespace: str | None,
    label_selector: str | None,
    field_selector: str | None,
    metadata_only: bool,
) -> Scope:
    """One scope per distinct watch: "" and None mean the same (no filter)."""
    return Scope(resource, namespace or None, label_selector or None, field_selector or None, metadata_only)


class Cache:
    """Shared informers for one client, plus reads by resource."""

    def __init__(
        self,
        client: ListWatcher,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        resync_period: float | None = None,
    ) -> None:
        self._client = client
        self._resync_period = resync_period  # for every informer; None: never (the default)
        self._clock = clock or RealClock()
        self._rng = rng
        self._informers: dict[Scope, SharedInformer] = {}
        # `reader`'s answer per resource, cleared whenever the set of informers changes: every cache
        # read goes through it, and a scan of every informer per read added up at scale.
        self._readers: dict[Resource, SharedInformer] = {}
        self._shapes: dict[Resource, Transform] = {}
        self._tasks: dict[Scope, asyncio.Task[None]] = {}
        self._started = False

    def set_shape(self, resource: Resource, transform: Transform) -> None:
        """The transform every informer of `resource` gets unless it names its own (metadata-only
        scopes excepted): the one place that decides what of a kind the process keeps, so a
        controller registering the informer first cannot make another's copy fat. Call it before
        any informer of `resource` exists."""
        if any(scope.resource == resource for scope in self._informers):
            raise ValueError(f"informers of {resource.plural}.{resource.group} exist already")
        self._shapes[resource] = transform

    def shape(self, resource: Resource, obj: Obj) -> Obj:
        """What an informer of `resource` (without a transform of its own) keeps of `obj`: for those
        who stand in for the cache, e.g. a memory of our own writes the cache has not shown yet."""
        shape = self._shapes.get(resource)
        obj = strip_managed_fields(obj)
        return shape(obj) if shape is not None else obj

    def informer(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = None,
        metadata_only: bool = False,
    ) -> SharedInformer:
        """The informer for this scope, created on first request (and started if the cache runs).

        `metadata_only` asks the server for metadata alone (a separate scope: its store holds
        another shape of object). The `transform` is fixed when the informer is created: asking
        again with a different one is an error; asking with none accepts whatever is registered.
        """
        scope = _scope(resource, namespace, label_selector, field_selector, metadata_only)
        if transform is None and not metadata_only:
            transform = self._shapes.get(resource)
        existing = self._informers.get(scope)
        if existing is not None:
            if transform is not None and existing.transform is not transform:
                raise ValueError(f"informer for {scope} already exists with another transform")
            return existing
        informer = SharedInformer(
            self._client,
            scope,
            transform=transform,
            clock=self._clock,
            rng=self._rng,
            resync_period=self._resync_period,
        )
        self._informers[scope] = informer
        self._readers.clear()
        if self._started:
            self._run(scope, informer)
        return informer

    def informers(self) -> builtins.list[SharedInformer]:
        return list(self._informers.values())

    async def remove_informer(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> bool:
        """Stop the informer of this scope and forget it, with its store and handlers; False when none
        was registered. For a resource whose API is no longer served: its reflector would otherwise
        retry forever, and a later `informer()` for the scope starts a fresh one (reads of the resource
        in between raise InformerNotRegistered). Consumers must register their handlers again there."""
        scope = _scope(resource, namespace, label_selector, field_selector, metadata_only)
        self._readers.clear()
        if self._informers.pop(scope, None) is None:
            return False
        task = self._tasks.pop(scope, None)
        if task is not None:
            task.cancel()
            # Its own CancelledError is expected; a cancellation of our caller still propagates.
            await asyncio.gather(task, return_exceptions=True)
        return True

    # -- reads -----------------------------------------------------------------------------------

    def reader(self, resource: Resource) -> SharedInformer:
        """The informer reads of `resource` go to: the one without selectors (cluster-wide preferred).

        A filtered informer (selector, metadata-only) never serves these reads: a reader asking for
        "all ConfigMaps" would silently see only another consumer's subset. Read such an informer
        through its own handle instead.
        """
        found = self._readers.get(resource)
        if found is None:
            found = self._readers[resource] = self._find_reader(resource)
        return found

    def _find_reader(self, resource: Resource) -> SharedInformer:
        candidates = [i for s, i in self._informers.items() if s.resource == resource]
        unfiltered = [
            i
            for i in candidates
            if not (i.scope.label_selector or i.scope.field_selector or i.scope.metadata_only)
        ]
        if not unfiltered:
            what = "only filtered informers" if candidates else "no informer"
            raise InformerNotRegistered(
                f"{what} registered for {resource.plural}.{resource.group}; read a filtered one by its handle"
            )
        cluster_wide = [i for i in unfiltered if i.scope.namespace is None]
        return (cluster_wide or unfiltered)[0]

    def get(self, resource: Resource, key: str) -> Obj | None:
        """The cached object under `namespace/name` (or `name`), None when absent."""
        return self.reader(resource).store.get(key)

    def list(
        self, resource: Resource, *, namespace: str | None = None, labels: Mapping[str, str] | None = None
    ) -> builtins.list[Obj]:
        """Cached objects, optionally of one namespace and carrying all of `labels`."""
        store = self.reader(resource).store
        objects = store.by_index(NAMESPACE_INDEX, namespace) if namespace else store.list()
        if labels:
            objects = [o for o in objects if _labels_match(o, labels)]
        return objects

    def by_index(self, resource: Resource, index: str, value: str) -> builtins.list[Obj]:
        return self.reader(resource).store.by_index(index, value)

    def is_current(self, resource: Resource) -> bool:
        """Whether reads of `resource` follow the API server at the watch's delivery lag (False
        when nothing caches it): see `SharedInformer.is_current`."""
        try:
            return self.reader(resource).is_current()
        except InformerNotRegistered:
            return False

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start every registered informer (and, from now on, each one registered later)."""
        self._started = True
        for scope, informer in self._informers.items():
            if scope not in self._tasks:
                self._run(scope, informer)

    def _run(self, scope: Scope, informer: SharedInformer) -> None:
        name = f"informer:{scope.resource.plural}:{scope.namespace or '*'}"
        self._tasks[scope] = asyncio.create_task(informer.run(), name=name)

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until every informer registered so far has synced; False on timeout."""
        pending = [i.wait_for_sync() for i in self._informers.values() if not i.has_synced()]
        if not pending:
            return True
        try:
            async with asyncio.timeout(timeout):
                await asyncio.gather(*pending)
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        """Cancel every informer task and wait for them; idempotent."""
        self._started = False
        tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            task.cancel()
        # return_exceptions: the tasks' own CancelledErrors are expected; ours would still propagate.
        await asyncio.gather(*tasks, return_exceptions=True)
