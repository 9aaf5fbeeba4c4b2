"""Adds `add_after`: keys wait on a min-heap until their deadline, then are `add()`ed.

Deduplication while waiting: the same key waiting twice keeps the *earlier* deadline. One clock
timer is armed for the earliest deadline; no background task, so tests step a `FakeClock`.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import TypeVar

from dynamo_operator.internal.clock import Clock, Timer
from dynamo_operator.internal.workqueue.queue import Queue

K = TypeVar("K", bound=Hashable)


class DelayingQueue(Queue[K]):
    """A `Queue` plus `add_after(key, delay)`."""

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        super().__init__(name=name, clock=clock)
        self._ready_at: dict[K, float] = {}  # the deadline in force for each waiting key
        # Heap entries whose deadline no longer matches `_ready_at` are stale and skipped; the
        # counter breaks ties, since keys themselves need not be orderable.
        self._heap: list[tuple[float, int, K]] = []
        self._seq = itertools.count()
        self._timer: Timer | None = None
        self._timer_at: float | None = None

    def add_after(self, key: K, delay: float) -> None:
        """Add `key` after `delay` seconds (now if `delay <= 0`); an earlier pending deadline wins."""
        if self.shutting_down:
            return
        self._metrics.retry()
        if delay <= 0:
            self.add(key)
            return
        ready_at = self._clock.now() + delay
        current = self._ready_at.get(key)
        if current is not None and current <= ready_at:
            return
        self._ready_at[key] = ready_at
        heapq.heappush(self._heap, (ready_at, next(self._seq), key))
        self._arm()

    @property
    def waiting_count(self) -> int:
        """Keys waiting for their deadline."""
        return len(self._ready_at)

    def shut_down(self) -> None:
        self._cancel_timer()
        self._ready_at.clear()
        self._heap.clear()
        super().shut_down()

    async def shut_down_with_drain(self) -> None:
        self._cancel_timer()
        self._ready_at.clear()
        self._heap.clear()
        await super().shut_down_with_drain()

    def _arm(self) -> None:
        while self._heap and self._ready_at.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        if not self._heap:
            self._cancel_timer()
            return
        head = self._heap[0][0]
        if self._timer is not None and self._timer_at == head:
            return
        self._cancel_timer()
        self._timer_at = head
        self._timer = self._clock.call_later(head - self._clock.now(), self._fire)

    def _fire(self) -> None:
        self._timer = self._timer_at = None
        now = self._clock.now()
        while self._heap and self._heap[0][0] <= now:
            ready_at, _, key = heapq.heappop(self._heap)
            if self._ready_at.get(key) == ready_at:
                del self._ready_at[key]
                self.add(key)
        # Loop timers may fire a hair early; re-arming covers whatever is not due yet.
        self._arm()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_at = None
