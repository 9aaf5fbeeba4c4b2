"""Rate limiters: exponential per key, token bucket overall, max-of, and the queue using them."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)


@pytest.mark.parametrize(
    ("failures", "delay"),
    [
        pytest.param(1, 0.005, id="first-retry-is-base"),
        pytest.param(2, 0.010, id="doubles"),
        pytest.param(3, 0.020, id="doubles-again"),
        pytest.param(18, 0.005 * 2**17, id="18th-below-cap"),
        pytest.param(19, 1000.0, id="19th-hits-cap"),
        pytest.param(200, 1000.0, id="stays-capped"),
    ],
)
def test_exponential_backoff_per_failure(failures: int, delay: float) -> None:
    """The n-th consecutive failure waits 5 ms * 2**(n-1), capped at 1000 s."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    got = [limiter.when("k") for _ in range(failures)][-1]
    assert got == pytest.approx(delay)
    assert limiter.num_requeues("k") == failures


def test_exponential_backoff_is_per_key_and_forget_resets_it() -> None:
    """Keys back off independently; forget() restarts a key at the base delay."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    for _ in range(4):
        limiter.when("a")
    assert limiter.when("b") == pytest.approx(0.005)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


def test_bucket_allows_burst_then_spaces_at_qps() -> None:
    """100 retries pass at once; the next ones are spaced 100 ms apart (10 qps)."""
    clock = FakeClock()
    bucket: BucketRateLimiter[str] = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert all(bucket.when(f"k{i}") == 0 for i in range(100))
    assert bucket.when("x") == pytest.approx(0.1)
    assert bucket.when("y") == pytest.approx(0.2)
    clock.advance(0.2)
    assert bucket.when("z") == pytest.approx(0.1)
    assert bucket.num_requeues("x") == 0


def test_bucket_refills_up_to_burst_only() -> None:
    """An idle hour refills the bucket to its burst, not beyond."""
    clock = FakeClock()
    bucket: BucketRateLimiter[str] = BucketRateLimiter(qps=10, burst=100, clock=clock)
    for i in range(100):
        bucket.when(f"k{i}")
    clock.advance(3600)
    assert sum(1 for i in range(150) if bucket.when(f"j{i}") == 0) == 100


@pytest.mark.parametrize(
    ("qps", "burst"),
    [pytest.param(0, 1, id="zero-qps"), pytest.param(1, 0, id="zero-burst")],
)
def test_bucket_rejects_non_positive_settings(qps: float, burst: int) -> None:
    """Nonsense limits are refused up front."""
    with pytest.raises(ValueError):
        BucketRateLimiter[str](qps=qps, burst=burst)


def test_max_of_takes_longest_delay_and_informs_every_limiter() -> None:
    """MaxOf returns the longest delay; every wrapped limiter records the failure and the forget."""
    fast: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(base_delay=0.001)
    slow: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(base_delay=1)
    limiter = MaxOfRateLimiter(fast, slow)
    assert limiter.when("k") == 1
    assert limiter.when("k") == 2
    assert (fast.num_requeues("k"), slow.num_requeues("k"), limiter.num_requeues("k")) == (2, 2, 2)
    limiter.forget("k")
    assert (fast.num_requeues("k"), slow.num_requeues("k")) == (0, 0)


def test_max_of_needs_a_limiter() -> None:
    """An empty MaxOf is a programming error."""
    with pytest.raises(ValueError):
        MaxOfRateLimiter[str]()


def test_default_limiter_is_exponential_until_bucket_runs_dry() -> None:
    """Default: per-key backoff for one key; after 100 distinct failures the bucket dominates."""
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    assert limiter.when("a") == pytest.approx(0.005)
    assert limiter.when("a") == pytest.approx(0.010)
    for i in range(98):
        limiter.when(f"k{i}")
    assert limiter.when("b") == pytest.approx(0.1)


async def test_rate_limited_add_backs_off_and_forget_resets() -> None:
    """The queue delays each retry by the limiter; forget() makes the next retry fast again."""
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    q.add_rate_limited("k")
    assert len(q) == 0
    clock.advance(0.005)
    assert await q.get() == "k"
    q.done("k")
    q.add_rate_limited("k")
    clock.advance(0.009)
    assert len(q) == 0
    clock.advance(0.001)
    assert len(q) == 1
    assert q.num_requeues("k") == 2
    q.forget("k")
    assert q.num_requeues("k") == 0
