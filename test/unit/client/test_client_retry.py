"""Which failures are retried, how often, and how long the client waits (sleep injected)."""

from __future__ import annotations

import random

import pytest
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.retry import RetryPolicy, backoff_seconds, is_retriable, retrying

REFUSED = errors.TransportError("connection refused", sent=False)
RESET = errors.TransportError("connection reset", sent=True)


@pytest.mark.parametrize(
    ("err", "idempotent", "expected"),
    [
        pytest.param(REFUSED, True, True, id="refused-get"),
        pytest.param(REFUSED, False, True, id="refused-post-never-reached-server"),
        pytest.param(RESET, True, True, id="reset-get"),
        pytest.param(RESET, False, False, id="reset-post-may-have-applied"),
        pytest.param(errors.TooManyRequests(429), True, True, id="429-get"),
        pytest.param(errors.TooManyRequests(429), False, True, id="429-post-refused-before-processing"),
        pytest.param(errors.ServerError(503), True, True, id="503-get"),
        pytest.param(errors.ServerError(500), False, False, id="500-post"),
        pytest.param(errors.NotFound(404), True, False, id="404-final"),
        pytest.param(errors.Conflict(409), True, False, id="409-final"),
        pytest.param(errors.Invalid(422), True, False, id="422-final"),
        pytest.param(errors.Gone(410), True, False, id="410-final"),
        pytest.param(ValueError("bug"), True, False, id="bug-not-retried"),
    ],
)
def test_only_transient_failures_are_retried(err: Exception, idempotent: bool, expected: bool) -> None:
    """Connection failures, 429 and 5xx only; a POST only when the server surely did not act."""
    assert is_retriable(err, idempotent=idempotent) is expected


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


async def run(failures: list[Exception], *, idempotent: bool, policy: RetryPolicy) -> tuple[int, Sleeps]:
    """Run an operation that fails with `failures` in turn, then succeeds; return attempts used."""
    sleeps, attempts = Sleeps(), 0
    async for attempt in retrying(idempotent=idempotent, policy=policy, sleep=sleeps, rng=random.Random(1)):
        with attempt:
            attempts += 1
            if attempts <= len(failures):
                raise failures[attempts - 1]
    return attempts, sleeps


async def test_retry_after_is_honoured() -> None:
    """The wait before a retry of a 429 is exactly the server's Retry-After."""
    attempts, sleeps = await run(
        [errors.TooManyRequests(429, retry_after=3.0), errors.TooManyRequests(429, retry_after=1.5)],
        idempotent=True,
        policy=RetryPolicy(attempts=5),
    )
    assert attempts == 3
    assert sleeps.calls == [3.0, 1.5]


async def test_retry_after_is_capped() -> None:
    """A server asking for an hour does not park the caller for an hour."""
    _, sleeps = await run(
        [errors.TooManyRequests(429, retry_after=3600)],
        idempotent=True,
        policy=RetryPolicy(max_retry_after=60),
    )
    assert sleeps.calls == [60.0]


async def test_retries_are_bounded_and_reraise_the_last_error() -> None:
    """After `attempts` tries the last typed error surfaces unchanged."""
    last = errors.ServerError(503, message="still down")
    with pytest.raises(errors.ServerError) as raised:
        await run([errors.ServerError(503)] * 2 + [last], idempotent=True, policy=RetryPolicy(attempts=3))
    assert raised.value is last


async def test_final_errors_are_not_retried() -> None:
    """A 404 surfaces at once, with no sleep."""
    sleeps = Sleeps()
    attempts = 0
    with pytest.raises(errors.NotFound):
        async for attempt in retrying(
            idempotent=True, policy=RetryPolicy(), sleep=sleeps, rng=random.Random()
        ):
            with attempt:
                attempts += 1
                raise errors.NotFound(404)
    assert (attempts, sleeps.calls) == (1, [])


async def test_post_is_not_retried_after_a_reset() -> None:
    """A POST whose connection broke after sending may have been applied: no second try."""
    with pytest.raises(errors.TransportError):
        await run([RESET], idempotent=False, policy=RetryPolicy())


async def test_post_is_retried_when_the_connection_was_refused() -> None:
    attempts, _ = await run([REFUSED, REFUSED], idempotent=False, policy=RetryPolicy())
    assert attempts == 3


def test_own_backoff_grows_and_is_capped() -> None:
    """Without Retry-After the wait doubles per attempt, stays within [ceiling/2, ceiling]."""
    policy = RetryPolicy(base_delay=0.2, max_delay=1.0)
    rng = random.Random(7)
    for attempt, ceiling in [(1, 0.2), (2, 0.4), (3, 0.8), (4, 1.0), (9, 1.0)]:
        wait = backoff_seconds(errors.ServerError(500), attempt, policy, rng)
        assert ceiling / 2 <= wait <= ceiling
