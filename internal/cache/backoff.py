"""Exponential backoff with jitter for the list/watch loop, reset after a healthy stretch.

0.8 s doubling to a 30 s cap is what client-go and kube-rs use: against an API server that is down,
every informer settles at about one attempt per 30-60 s, so a fleet of operators cannot stampede it
when it comes back. Jitter 1.0 means each wait is drawn from [d, 2d).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from dynamo_operator.internal.clock import Clock

INITIAL_DELAY = 0.8
MAX_DELAY = 30.0
FACTOR = 2.0
JITTER = 1.0
# Two minutes without needing a backoff counts as healthy again: start over from 0.8 s.
RESET_AFTER = 120.0


@dataclass
class Backoff:
    """Call `next_delay()` each time something failed; the caller sleeps for the returned seconds."""

    clock: Clock
    rng: random.Random = field(default_factory=random.Random)
    initial: float = INITIAL_DELAY
    cap: float = MAX_DELAY
    reset_after: float = RESET_AFTER
    _step: float = 0.0
    _last: float | None = None

    def next_delay(self) -> float:
        now = self.clock.now()
        if self._last is None or now - self._last >= self.reset_after:
            self._step = self.initial
        else:
            self._step = min(self._step * FACTOR, self.cap)
        self._last = now
        return self._step * (1.0 + JITTER * self.rng.random())
