"""Spotting a key that is reconciled over and over: the signature of a controller fighting itself.

A healthy key is reconciled when something changed, a handful of times a minute at most. A key that
keeps coming back (two writers of one object, a status that never settles, a requeue with no delay)
costs API writes forever while every reconcile "succeeds". The detector counts reconciles per key in
a fixed window and reports a key once per window when it passes the limit; the worker turns that
into a Warning log line and the `controller_hot_loop_keys_total` counter, so a dashboard can alert
on it and a test can assert it stays at zero.
"""

from __future__ import annotations

from dataclasses import dataclass

from dynamo_operator.internal.clock import Clock, RealClock

DEFAULT_LIMIT = 30
DEFAULT_WINDOW_SECONDS = 60.0


@dataclass(slots=True)
class _Window:
    started: float
    count: int = 0
    reported: bool = False


class HotLoopDetector:
    """Counts reconciles per key within `window` seconds; `observe` answers True exactly once per
    window for a key that reached `limit`. Memory stays bounded: windows that ended are dropped
    whenever as many keys as were live at the last sweep have been seen since."""

    def __init__(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        window: float = DEFAULT_WINDOW_SECONDS,
        clock: Clock | None = None,
    ) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("limit must be at least 1 and window positive")
        self._limit, self._window = limit, window
        self._clock: Clock = clock or RealClock()
        self._keys: dict[str, _Window] = {}
        self._sweep_at = 1024

    def observe(self, key: str) -> bool:
        """Record one reconcile of `key`; True when this one makes the key hot in its window."""
        now = self._clock.now()
        entry = self._keys.get(key)
        if entry is None or now - entry.started >= self._window:
            entry = self._keys[key] = _Window(started=now)
        entry.count += 1
        if len(self._keys) >= self._sweep_at:
            self._sweep(now)
        if entry.count >= self._limit and not entry.reported:
            entry.reported = True
            return True
        return False

    def count(self, key: str) -> int:
        """Reconciles of `key` in its current window (0 once the window ended)."""
        entry = self._keys.get(key)
        if entry is None or self._clock.now() - entry.started >= self._window:
            return 0
        return entry.count

    @property
    def window(self) -> float:
        return self._window

    def __len__(self) -> int:
        return len(self._keys)

    def _sweep(self, now: float) -> None:
        self._keys = {k: w for k, w in self._keys.items() if now - w.started < self._window}
        self._sweep_at = max(1024, 2 * len(self._keys))
