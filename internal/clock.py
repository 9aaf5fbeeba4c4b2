"""Time, passed in: the one clock every part of the runtime reads and waits through.

Monotonic seconds (`now`) measure intervals and deadlines; UTC wall time (`wall`) is only for what
is written into objects or compared with timestamps other hosts wrote. Waiting is either a
cancellable `sleep` or a one-shot `call_later` timer. Production code uses `RealClock`; tests use
`FakeClock` and `advance()` it, so a deadline is reached by stepping time, never by sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Timer(Protocol):
    """A scheduled callback that can still be cancelled."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Monotonic and wall time, a sleep and a timer."""

    def now(self) -> float:
        """Monotonic seconds: for intervals and deadlines, never for timestamps."""
        ...

    def wall(self) -> datetime:
        """The current UTC time: for timestamps written into objects."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this clock's time (cancellable)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` once after `delay` seconds of this clock's time (needs a running loop)."""
        ...


class RealClock:
    """The system's time and the running event loop's timers."""

    def now(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)


class _FakeTimer:
    __slots__ = ("cancelled",)

    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told to; timers (and sleeps) end, in deadline order, inside
    `advance()`. Wall time moves with it from `wall_start`."""

    def __init__(self, start: float = 1000.0, *, wall_start: datetime | None = None) -> None:
        self._start = self._now = start
        self._wall_start = wall_start or datetime(2026, 1, 1, tzinfo=UTC)
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _FakeTimer, Callable[[], None]]] = []

    @classmethod
    def at(cls, epoch_seconds: float) -> FakeClock:
        """A fake clock whose wall time starts at `epoch_seconds` (POSIX time)."""
        return cls(wall_start=datetime.fromtimestamp(epoch_seconds, tz=UTC))

    def now(self) -> float:
        return self._now

    def wall(self) -> datetime:
        return self._wall_start + timedelta(seconds=self._now - self._start)

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await woken
        finally:
            timer.cancel()

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
