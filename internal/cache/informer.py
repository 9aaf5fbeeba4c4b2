"""A shared informer: one reflector filling one store, fanning changes out to event handlers.

Delivery contract (what handlers may rely on):
- The store is updated first, then every handler is called, synchronously and in registration
  order, so a handler that reads the store sees the change it is told about.
- Events for one object arrive in the order the API server produced them.
- An update whose resourceVersion did not change is not delivered (relists and re-watches replay
  objects we already have; nothing changed).
- A relist diffs against the previous content: new keys are adds, changed ones updates, and keys
  that vanished (deleted while we were not watching) are deletes carrying their last known state.
  A key whose UID changed (deleted and re-created meanwhile) is a delete of the old object and
  an add of the new one, never an update between two different objects.
- A handler added after objects arrived first receives each current object as an add.
- A handler that raises is logged and skipped; it cannot break delivery to others.
- With a `resync_period`, every cached object is re-delivered as an update with old == new,
  about once per period (no API calls): the only updates that carry an unchanged resourceVersion.
  Prefer `Result(requeue_after=...)` for polling; resync is a safety net against lost work.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable, Mapping

import structlog
from dynamo_operator.internal.cache.interface import EventHandler, IndexFunc, Obj
from dynamo_operator.internal.cache.reflector import ListWatcher, Reflector, Scope
from dynamo_operator.internal.cache.store import Store
from dynamo_operator.internal.cache.transform import Transform, intern_strings, strip_managed_fields
from dynamo_operator.internal.client.resource import object_key
from dynamo_operator.internal.clock import Clock, RealClock

log = structlog.get_logger(__name__)

MIN_RESYNC_PERIOD = 1.0  # seconds; shorter would turn the cache into a busy loop


def _uid(obj: Obj) -> str | None:
    uid = obj.get("metadata", {}).get("uid")
    return str(uid) if uid is not None else None


def _rv(obj: Obj) -> str | None:
    rv = obj.get("metadata", {}).get("resourceVersion")
    return str(rv) if rv is not None else None


class SharedInformer:
    """Implements `interface.Informer`; run it with `run()` (the `Cache` does that)."""

    def __init__(
        self,
        source: ListWatcher,
        scope: Scope,
        *,
        transform: Transform | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        resync_period: float | None = None,
    ) -> None:
        if resync_period is not None and resync_period < MIN_RESYNC_PERIOD:
            raise ValueError(f"resync_period must be at least {MIN_RESYNC_PERIOD} s")
        self.scope = scope
        self.transform = transform
        self.resync_period = resync_period
        self._clock = clock or RealClock()
        self._rng = rng or random.Random()
        self._store = Store()
        self._handlers: list[EventHandler] = []
        self._sync_callbacks: list[Callable[[], None]] = []
        self._synced = asyncio.Event()
        self.reflector = Reflector(source, scope, self, clock=self._clock, rng=self._rng)

    # -- Informer protocol -----------------------------------------------------------------------

    @property
    def store(self) -> Store:
        return self._store

    def add_event_handler(self, handler: EventHandler) -> None:
        """Register `handler`; it is first replayed every object already in the store as an add."""
        self._handlers.append(handler)
        for obj in self._store.list():
            self._call(handler.on_add, obj)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self._store.add_indexers(indexers)

    def has_synced(self) -> bool:
        """True once the first complete LIST is in the store (stays true across relists)."""
        return self._synced.is_set()

    # -- extras ----------------------------------------------------------------------------------

    def on_synced(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the first LIST is in the store (at once if it already is)."""
        if self.has_synced():
            callback()
        else:
            self._sync_callbacks.append(callback)

    def is_current(self) -> bool:
        """Whether the store follows the API server at the watch's delivery lag (no gap it may
        still be catching up on): see `Reflector.is_current`."""
        return self.reflector.is_current()

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        """Wait until synced; False when `timeout` seconds passed first."""
        try:
            await asyncio.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def run(self) -> None:
        """List and watch (and resync, if asked) until cancelled."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self.reflector.run())
            if self.resync_period is not None:
                tasks.create_task(self._resync_forever(self.resync_period))

    async def _resync_forever(self, period: float) -> None:
        while True:
            # ±10 % so informers created together do not resync in lock-step.
            await self._clock.sleep(period * self._rng.uniform(0.9, 1.1))
            self.resync()

    def resync(self) -> None:
        """Deliver every cached object to every handler as an update with old == new."""
        if not self.has_synced():
            return
        for obj in self._store.list():
            self._emit_update(obj, obj)

    # -- Sink: called by the reflector -----------------------------------------------------------

    def admit(self, obj: Obj) -> Obj:
        """What the store keeps of `obj`: no managedFields, the transform applied, strings interned."""
        obj = strip_managed_fields(obj)
        if self.transform is not None:
            obj = self.transform(obj)
        interned: Obj = intern_strings(obj)
        return interned

    def replace(self, objects: Iterable[Obj]) -> None:
        """Replace the collection with whole objects (admitted here)."""
        self.replace_admitted([self.admit(obj) for obj in objects])

    def replace_admitted(self, objects: Iterable[Obj]) -> None:
        fresh = list(objects)
        previous = self._store.replace(fresh)
        for obj in fresh:
            old = previous.pop(object_key(obj), None)
            if old is None:
                self._emit_add(obj)
            elif _uid(old) != _uid(obj):
                self._emit_delete(old)
                self._emit_add(obj)
            elif _rv(old) != _rv(obj):
                self._emit_update(old, obj)
        for gone in previous.values():  # deleted while we were not watching
            self._emit_delete(gone)
        if not self._synced.is_set():
            self._synced.set()
            callbacks, self._sync_callbacks = self._sync_callbacks, []
            for callback in callbacks:
                self._call(callback)

    def upsert(self, obj: Obj) -> None:
        obj = self.admit(obj)
        old = self._store.upsert(obj)
        if old is None:
            self._emit_add(obj)
        elif _rv(old) != _rv(obj):
            self._emit_update(old, obj)

    def delete(self, obj: Obj) -> None:
        obj = self.admit(obj)
        self._store.remove(object_key(obj))
        self._emit_delete(obj)

    # -- delivery --------------------------------------------------------------------------------

    def _emit_add(self, obj: Obj) -> None:
        for handler in self._handlers:
            self._call(handler.on_add, obj)

    def _emit_update(self, old: Obj, new: Obj) -> None:
        for handler in self._handlers:
            self._call(handler.on_update, old, new)

    def _emit_delete(self, obj: Obj) -> None:
        for handler in self._handlers:
            self._call(handler.on_delete, obj)

    def _call(self, func: Callable[..., None], *args: Obj) -> None:
        try:
            func(*args)
        except Exception:
            log.exception("informer event handler failed", resource=self.scope.resource.plural)
