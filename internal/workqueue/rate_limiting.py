"""Adds retries with backoff: `add_rate_limited`, `forget`, `num_requeues` over a `RateLimiter`."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.workqueue.delaying import DelayingQueue
from dynamo_operator.internal.workqueue.rate_limiter import RateLimiter, default_controller_rate_limiter

K = TypeVar("K", bound=Hashable)


class RateLimitingQueue(DelayingQueue[K]):
    """The queue controllers use; satisfies the `WorkQueue` Protocol."""

    def __init__(
        self,
        *,
        name: str | None = None,
        rate_limiter: RateLimiter[K] | None = None,
        clock: Clock | None = None,
    ) -> None:
        clock = clock or RealClock()
        super().__init__(name=name, clock=clock)
        self._limiter: RateLimiter[K] = rate_limiter or default_controller_rate_limiter(clock)

    def add_rate_limited(self, key: K) -> None:
        """Add `key` once the limiter allows; records a failure for it."""
        self.add_after(key, self._limiter.when(key))

    def forget(self, key: K) -> None:
        """Clear `key`'s failure history (backoff restarts at base). Does not replace `done()`."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._limiter.num_requeues(key)
