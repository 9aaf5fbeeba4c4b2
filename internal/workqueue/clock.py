"""Injected time for everything that waits: the delaying queue, rate limiters, metrics.

Production code uses `RealClock` (the event loop's monotonic timers); tests use `FakeClock` and
`advance()` it, so a deadline is reached by stepping time, never by sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    """A scheduled callback that can still be cancelled."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Monotonic seconds plus one-shot timers; the only source of time in the workqueue."""

    def now(self) -> float: ...
    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...


class RealClock:
    """The running event loop's monotonic clock (`call_later` needs a running loop)."""

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)


class _FakeTimer:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told to; timers fire, in deadline order, inside `advance()`."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _FakeTimer, Callable[[], None]]] = []

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = _FakeTimer()
        heapq.heappush(self._timers, (self._now + max(delay, 0.0), next(self._seq), timer, callback))
        return timer

    def advance(self, seconds: float) -> None:
        """Move time forward, firing every timer whose deadline is reached (at its own deadline)."""
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            deadline, _, timer, callback = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, deadline)
            callback()
        self._now = target

    @property
    def pending_timers(self) -> int:
        """Timers not yet fired nor cancelled (tests assert the queue keeps at most one)."""
        return sum(1 for _, _, t, _ in self._timers if not t.cancelled)
