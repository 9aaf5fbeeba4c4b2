"""A small expiring memo for API-server reviews: bounded size, per-answer lifetimes, one review in
flight per key, an optional bound on reviews in flight, and reviews nobody waits for cancelled.

The single flight matters as much as the expiry: a Prometheus with a cold cache that opens several
connections at once must still cost one review, not one per connection. The rest is about callers
who are not scrapers: a flood of made-up tokens must neither grow memory (every store is bounded,
refusals past the limiter's bound are immediate) nor evict the answers real scrapers depend on
(negative answers live in a store of their own), nor leave reviews running for callers who hung up.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.manager.review_limit import ReviewBusy, ReviewLimiter

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(slots=True)
class _Flight(Generic[V]):
    """One review in progress and how many callers await it now."""

    task: asyncio.Task[V]
    waiters: int = 0


class _Store(Generic[K, V]):
    """Answers with their expiry, oldest first, never more than `limit` (the oldest go first)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def put(self, key: K, expires: float, value: V) -> None:
        self.entries.pop(key, None)
        self.entries[key] = (expires, value)
        while len(self.entries) > self.limit:
            self.entries.popitem(last=False)


class ReviewCache(Generic[K, V]):
    """Maps a key to the last answer for as long as `ttl(answer)` says; failures are never kept.

    Answers for which `negative(answer)` holds are kept apart, in a store of the same bound, so that
    any number of refusals only evicts other refusals. An expired positive answer is never returned,
    but stays until evicted or replaced: its key is *known*, and renewing it may use the limiter's
    reserved slots.

    Invariant: a key is in at most one of the two stores, and `_inflight` holds one `_Flight` per key
    whose review has not finished and still has a caller (or has just been started for one). Each
    flight holds one slot of `limiter` until its task ends, however it ends.
    """

    def __init__(
        self,
        ttl: Callable[[V], float],
        *,
        max_entries: int = 1024,
        clock: Clock | None = None,
        negative: Callable[[V], bool] = lambda _: False,
        limiter: ReviewLimiter | None = None,
    ) -> None:
        self._ttl = ttl
        self._negative = negative
        self._limiter = limiter
        self._clock: Clock = clock or RealClock()
        self._positive: _Store[K, V] = _Store(max_entries)
        self._negatives: _Store[K, V] = _Store(max_entries)
        self._inflight: dict[K, _Flight[V]] = {}
        self.cancelled = 0  # reviews cancelled because their last caller went away

    def __len__(self) -> int:
        return len(self._positive.entries) + len(self._negatives.entries)

    def stored_keys(self) -> list[K]:
        """What the cache holds, oldest first, positive answers before negative ones (for tests)."""
        return [*self._positive.entries, *self._negatives.entries]

    @property
    def in_flight(self) -> int:
        """Reviews started and not yet finished or cancelled (for tests and debugging)."""
        return len(self._inflight)

    def get(self, key: K) -> tuple[V] | None:
        """`(answer,)` while a fresh answer is cached, else None (an answer may itself be None)."""
        for store in (self._positive, self._negatives):
            entry = store.entries.get(key)
            if entry is None:
                continue
            expires, value = entry
            if self._clock.now() >= expires:
                if store is self._negatives:
                    del store.entries[key]  # an expired positive one marks the key as known
                return None
            return (value,)
        return None

    def known(self, key: K) -> bool:
        """Whether `key` had a positive answer (fresh or expired) that is still remembered."""
        return key in self._positive.entries

    def put(self, key: K, value: V) -> None:
        self._positive.entries.pop(key, None)
        self._negatives.entries.pop(key, None)
        store = self._negatives if self._negative(value) else self._positive
        store.put(key, self._clock.now() + self._ttl(value), value)

    async def get_or_review(self, key: K, review: Callable[[], Awaitable[V]]) -> V:
        """The cached answer, else the result of `review()` shared by every concurrent caller.

        Raises ReviewBusy, without waiting, when a new review is needed and the limiter has no slot
        (a known key may take a reserved one).

        The review runs in its own task: a caller that goes away (the client hung up) does not cancel
        it for the others, but when the last caller goes away it is cancelled, and a later caller
        starts afresh. An exception reaches every waiter and nothing is cached.
        """
        if (hit := self.get(key)) is not None:
            return hit[0]
        flight = self._inflight.get(key)
        if flight is None:
            if self._limiter is not None and not self._limiter.try_acquire(known=self.known(key)):
                raise ReviewBusy("too many reviews in flight")
            flight = _Flight(asyncio.ensure_future(self._review_and_store(key, review)))
            # Every waiter may be gone: never "exception was never retrieved".
            flight.task.add_done_callback(self._ended)
            self._inflight[key] = flight
        flight.waiters += 1
        try:
            return await asyncio.shield(flight.task)
        finally:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                # Only a cancelled caller gets here with the task still running: nobody else waits.
                # Forget the flight now, so a caller arriving before the task unwinds starts its own
                # review instead of joining one that is being cancelled.
                if self._inflight.get(key) is flight:
                    del self._inflight[key]
                flight.task.cancel()
                self.cancelled += 1

    async def _review_and_store(self, key: K, review: Callable[[], Awaitable[V]]) -> V:
        try:
            value = await review()
            self.put(key, value)
            return value
        finally:
            flight = self._inflight.get(key)
            if flight is not None and flight.task is asyncio.current_task():
                del self._inflight[key]

    def _ended(self, task: asyncio.Task[V]) -> None:
        if self._limiter is not None:
            self._limiter.release()
        if not task.cancelled():
            task.exception()
