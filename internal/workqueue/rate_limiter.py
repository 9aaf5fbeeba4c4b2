"""Rate limiters: how long a key should wait before its next retry.

A limiter is a three-method Protocol; variants are built by wrapping (`MaxOfRateLimiter`). The
controller default is the larger of a per-key exponential backoff and an overall token bucket, so
one failing key backs off on its own while a storm of failing keys cannot exceed 10 retries/s.
The bucket throttles retries only: fresh events go through `add()` and never meet it.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from dynamo_operator.internal.clock import Clock, RealClock

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[K_contra]):
    """Decides retry delays and remembers per-key failures."""

    def when(self, key: K_contra) -> float: ...  # records a failure; returns the delay in seconds
    def forget(self, key: K_contra) -> None: ...  # the key succeeded: drop its history
    def num_requeues(self, key: K_contra) -> int: ...  # failures recorded since the last forget


class ItemExponentialFailureRateLimiter(Generic[K]):
    """`base * 2**failures`, capped; the first retry waits `base`. 5 ms doubles to the 1000 s cap
    at the 19th consecutive failure."""

    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        self._base = base_delay
        self._max = max_delay
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        if failures >= 64:  # 2**64 * base overflows any sane cap; skip the float arithmetic
            return self._max
        return min(self._base * 2.0**failures, self._max)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter(Generic[K]):
    """An overall token bucket (`qps` refill, `burst` capacity) with no per-key state.

    Each `when` reserves one token; when the bucket is empty the delay is the time until the
    reserved token exists, so a burst of failures is spread at `qps` instead of dropped.
    """

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: Clock | None = None) -> None:
        if qps <= 0 or burst <= 0:
            raise ValueError(f"qps and burst must be positive, got qps={qps} burst={burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock: Clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.now()

    def when(self, key: K) -> float:
        now = self._clock.now()
        self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self._qps

    def forget(self, key: K) -> None:
        pass

    def num_requeues(self, key: K) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """Asks every wrapped limiter; the longest delay and the highest requeue count win."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, key: K) -> float:
        # Every limiter must see the failure, so no short-circuiting max over a generator.
        delays = [limiter.when(key) for limiter in self._limiters]
        return max(delays)

    def forget(self, key: K) -> None:
        for limiter in self._limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return max(limiter.num_requeues(key) for limiter in self._limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> RateLimiter[K]:
    """client-go's controller default: max(per-key 5 ms → 1000 s, bucket 10 qps / burst 100)."""
    return MaxOfRateLimiter[K](
        ItemExponentialFailureRateLimiter[K](base_delay=0.005, max_delay=1000.0),
        BucketRateLimiter[K](qps=10.0, burst=100, clock=clock),
    )
