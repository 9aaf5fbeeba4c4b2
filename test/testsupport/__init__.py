"""Shared test helpers; `eventually` polls a condition with a bound in time (and so in count).

`fn` may assert (an AssertionError means "not yet") or return a value; the condition holds when
`until(value)` is true, or, without `until`, when the value is anything but `False`. Other
exceptions propagate unless listed in `retry_on`. On timeout an AssertionError says what was
awaited and what was last seen.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
DEFAULT_INTERVAL = 0.2

__all__ = ["DEFAULT_INTERVAL", "DEFAULT_TIMEOUT", "eventually", "eventually_sync"]


def _holds(value: Any, until: Callable[[Any], bool] | None) -> bool:
    return until(value) if until is not None else value is not False


def _timed_out(what: str, timeout: float, attempts: int, last: object) -> AssertionError:
    return AssertionError(f"not within {timeout:g} s ({attempts} attempts): {what}; last seen: {last!r}")


def eventually_sync(
    fn: Callable[[], T],
    *,
    until: Callable[[T], bool] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    retry_on: tuple[type[BaseException], ...] = (AssertionError,),
    what: str = "",
) -> T:
    """Call fn every `interval` seconds until its result satisfies the condition; return it."""
    deadline = time.monotonic() + timeout
    attempts = 0
    last: object = None
    cause: BaseException | None = None
    while True:
        attempts += 1
        try:
            value = fn()
        except retry_on as e:
            last, cause = e, e
        else:
            if _holds(value, until):
                return value
            last, cause = value, None
        if time.monotonic() + interval > deadline:
            raise _timed_out(what or getattr(fn, "__name__", "condition"), timeout, attempts, last) from cause
        time.sleep(interval)


@overload
async def eventually(
    fn: Callable[[], Awaitable[T]],
    *,
    until: Callable[[T], bool] | None = None,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    interval: float = DEFAULT_INTERVAL,
    retry_on: tuple[type[BaseException], ...] = (AssertionError,),
    what: str = "",
) -> T: ...


@overload
async def eventually(
    fn: Callable[[], T],
    *,
    until: Callable[[T], bool] | None = None,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    interval: float = DEFAULT_INTERVAL,
    retry_on: tuple[type[BaseException], ...] = (AssertionError,),
    what: str = "",
) -> T: ...


async def eventually(
    fn: Callable[[], Awaitable[T] | T],
    *,
    until: Callable[[T], bool] | None = None,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - a polling bound, not a cancellation scope
    interval: float = DEFAULT_INTERVAL,
    retry_on: tuple[type[BaseException], ...] = (AssertionError,),
    what: str = "",
) -> T:
    """Async twin of eventually_sync: fn may be a coroutine function or a plain callable."""
    deadline = time.monotonic() + timeout
    attempts = 0
    last: object = None
    cause: BaseException | None = None
    while True:
        attempts += 1
        try:
            result = fn()
            value: T = await result if inspect.isawaitable(result) else result
        except retry_on as e:
            last, cause = e, e
        else:
            if _holds(value, until):
                return value
            last, cause = value, None
        if time.monotonic() + interval > deadline:
            raise _timed_out(what or getattr(fn, "__name__", "condition"), timeout, attempts, last) from cause
        await asyncio.sleep(interval)
