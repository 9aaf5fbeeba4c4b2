"""A small expiring memo for API-server reviews: bounded size, per-answer lifetimes, one review in
flight per key.

The single flight matters as much as the expiry: a Prometheus with a cold cache that opens several
connections at once must still cost one review, not one per connection.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from dynamo_operator.internal.clock import Clock, RealClock

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ReviewCache(Generic[K, V]):
    """Maps a key to the last answer for as long as `ttl(answer)` says; failures are never kept.

    Invariant: `_entries` is ordered by insertion (oldest first) and never longer than `max_entries`;
    `_inflight` holds one task per key whose review has not finished yet.
    """

    def __init__(
        self,
        ttl: Callable[[V], float],
        *,
        max_entries: int = 1024,
        clock: Clock | None = None,
    ) -> None:
        self._ttl = ttl
        self._max = max_entries
        self._clock: Clock = clock or RealClock()
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._inflight: dict[K, asyncio.Task[V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def stored_keys(self) -> list[K]:
        """What the cache holds, oldest first (for tests and debugging)."""
        return list(self._entries)

    def get(self, key: K) -> tuple[V] | None:
        """`(answer,)` while a fresh answer is cached, else None (an answer may itself be None)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self._clock.now() >= expires:
            del self._entries[key]
            return None
        return (value,)

    def put(self, key: K, value: V) -> None:
        self._entries.pop(key, None)
        self._entries[key] = (self._clock.now() + self._ttl(value), value)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)  # a flood of distinct tokens evicts, never grows memory

    async def get_or_review(self, key: K, review: Callable[[], Awaitable[V]]) -> V:
        """The cached answer, else the result of `review()` shared by every concurrent caller.

        The review runs in its own task so that a caller that goes away (client disconnect) does not
        cancel it for the others; an exception reaches every waiter and nothing is cached.
        """
        if (hit := self.get(key)) is not None:
            return hit[0]
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._review_and_store(key, review))
            task.add_done_callback(_retrieve)  # every waiter may be gone; never "exception not retrieved"
            self._inflight[key] = task
        return await asyncio.shield(task)

    async def _review_and_store(self, key: K, review: Callable[[], Awaitable[V]]) -> V:
        try:
            value = await review()
            self.put(key, value)
            return value
        finally:
            self._inflight.pop(key, None)


def _retrieve(task: asyncio.Task[object]) -> None:
    if not task.cancelled():
        task.exception()
