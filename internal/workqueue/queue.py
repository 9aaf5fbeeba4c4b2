"""The base work queue: deduplication and in-flight tracking (client-go's `queue.go` semantics).

Three sets of state, one invariant (kept by `add`, `get` and `done`, each a few lines):

* `_lanes`  - three FIFOs of keys ready to hand out, emptied in order: urgent (`add_urgent`), first
  (`add_first`), plain (`add`). A key is in at most one lane (`_lane_of` says which); "queued" below
  means in any of them.
* `_dirty`  - keys that need processing. Every queued key is dirty.
* `_processing` - keys handed to a worker and not yet `done()`. No queued key is processing.

A key that is both dirty and processing is *parked*: it was added while a worker held it, and it
enters the best lane it was asked for (`_parked_lane`, plain by default) when that worker calls
`done()`. Hence a key never reaches two workers at once, and any number of adds during one reconcile
cause exactly one more.

Why lanes: when thousands of objects are created at once, each creation is followed by a stream
of status changes of its children, and in one FIFO those re-syncs queue up in front of the creations
still waiting. A creation handed out first starts its children (and the cluster's work on them)
sooner; the re-syncs lose nothing by waiting, since their adds collapse while queued. The urgent lane
goes before both, for the few events that finish something (a child that just became ready: its
owner's status write ends a wait a user is watching), which would otherwise queue behind every
creation still to come.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from contextlib import suppress
from typing import Generic, TypeVar

from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.workqueue.metrics import QueueMetrics, queue_metrics

K = TypeVar("K", bound=Hashable)


URGENT, FIRST, PLAIN = 0, 1, 2


class Queue(Generic[K]):
    """Deduplicating FIFO whose `get()` waits; `name` turns on the Prometheus metrics."""

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        self.name = name
        self._clock: Clock = clock or RealClock()
        self._metrics: QueueMetrics = queue_metrics(name, clock=self._clock)
        self._lanes: tuple[deque[K], deque[K], deque[K]] = (deque(), deque(), deque())
        self._lane_of: dict[K, int] = {}  # queued keys and their lane
        self._parked_lane: dict[K, int] = {}  # parked keys asked for a better lane than plain
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        # Set when a drain is finished (processing became empty) or aborted by a plain shut_down().
        self._drained: asyncio.Event | None = None

    def add(self, key: K) -> None:
        """Mark `key` as needing work. No-op if already queued or after shutdown."""
        self._add(key, PLAIN)

    def add_first(self, key: K) -> None:
        """Like `add`, but `key` is handed out before every key queued by `add` (FIFO among such
        keys). A key already waiting in the plain lane moves up; a parked key is queued in this lane
        when its worker is done."""
        self._add(key, FIRST)

    def add_urgent(self, key: K) -> None:
        """Like `add_first`, but before the first lane too (FIFO among urgent keys)."""
        self._add(key, URGENT)

    def _add(self, key: K, lane: int) -> None:
        if self._shutting_down:
            return
        if key in self._dirty:
            if key in self._processing:  # parked: done() queues it in the best lane asked for
                if lane < self._parked_lane.get(key, PLAIN):
                    self._parked_lane[key] = lane
                return
            current = self._lane_of[key]
            if current <= lane:
                return
            self._lanes[current].remove(key)  # O(n), but rare: a better lane for a waiting key
        else:
            self._metrics.add(key)
            self._dirty.add(key)
            if key in self._processing:
                if lane < PLAIN:
                    self._parked_lane[key] = lane
                return
        self._enqueue(key, lane)

    def _enqueue(self, key: K, lane: int) -> None:
        self._lanes[lane].append(key)
        self._lane_of[key] = lane
        self._wake_one()

    async def get(self) -> K | None:
        """Wait for a key and mark it processing; None once shut down and empty.

        The caller owns the key until it calls `done(key)`, which it must do exactly once.
        Queued keys are still handed out after `shut_down()`, so workers can drain them.
        """
        while not self._lane_of:
            if self._shutting_down:
                return None
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # we were woken but will not take the key: pass it on
                with suppress(ValueError):
                    self._waiters.remove(waiter)
                raise
        key = next(lane for lane in self._lanes if lane).popleft()
        del self._lane_of[key]
        self._metrics.get(key)
        self._processing.add(key)
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        """Release `key`; if it was added meanwhile it is queued again now."""
        self._metrics.done(key)
        self._processing.discard(key)
        lane = self._parked_lane.pop(key, PLAIN)
        if key in self._dirty:
            self._enqueue(key, lane)
        elif not self._processing and self._drained is not None:
            self._drained.set()

    def shut_down(self) -> None:
        """Refuse further adds and wake every waiting `get()`; an ongoing drain wait is aborted."""
        self._shutting_down = True
        if self._drained is not None:
            self._drained.set()
        self._wake_all()

    async def shut_down_with_drain(self) -> None:
        """Shut down, then wait until every handed-out key is `done()` (workers must keep calling it)."""
        self._shutting_down = True
        self._wake_all()
        if not self._processing:
            return
        self._drained = asyncio.Event()
        await self._drained.wait()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        """Keys waiting to be handed out; informational only, gate nothing on it."""
        return len(self._lane_of)

    @property
    def processing_count(self) -> int:
        """Keys handed out and not yet `done()`."""
        return len(self._processing)

    def _wake_one(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_all(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
