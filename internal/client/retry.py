"""Which failed requests are retried, and how long to wait: bounded, and only when it is safe.

A retry is safe when repeating the request cannot apply it twice. Idempotent verbs (GET, PUT with a
resourceVersion, merge/apply PATCH, DELETE) may be repeated after any transient failure; a POST only
when the server surely never processed it: the connection was refused, or API Priority and Fairness
answered 429 (a refusal issued before the request is handled).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from dynamo_operator.internal.client.errors import ServerError, TooManyRequests, TransportError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Attempts in total (first try included) and the backoff between them."""

    attempts: int = 5
    base_delay: float = 0.2  # first wait when the server gave no Retry-After
    max_delay: float = 5.0  # cap of our own backoff
    max_retry_after: float = 60.0  # never sleep longer than this, whatever the server asks


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(attempts=1)


def is_retriable(err: BaseException, *, idempotent: bool) -> bool:
    """The one decision of what to retry."""
    match err:
        case TransportError(sent=False):
            return True  # never reached the server
        case TooManyRequests():
            return True  # refused before processing, by definition of 429 under APF
        case TransportError() | ServerError():
            return idempotent  # may or may not have been applied
        case _:
            return False  # 4xx answers are final; cancellation and bugs propagate


def backoff_seconds(
    err: BaseException | None, attempt: int, policy: RetryPolicy, rng: random.Random
) -> float:
    """Retry-After when the server sent one (bounded), else capped exponential (upper half jittered)."""
    retry_after = getattr(err, "retry_after", None)
    if isinstance(retry_after, int | float):
        return min(float(retry_after), policy.max_retry_after)
    ceiling = min(policy.max_delay, policy.base_delay * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def retrying(
    *,
    idempotent: bool,
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[None]],
    rng: random.Random,
) -> AsyncRetrying:
    """A tenacity controller for one request; re-raises the last error unchanged when exhausted."""

    def wait(state: RetryCallState) -> float:
        err = state.outcome.exception() if state.outcome is not None else None
        return backoff_seconds(err, state.attempt_number, policy, rng)

    return AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception(lambda e: is_retriable(e, idempotent=idempotent)),
        sleep=sleep,
        reraise=True,
    )
