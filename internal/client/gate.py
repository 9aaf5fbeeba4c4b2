"""A bound on the client's requests in flight, handed out by priority.

Why: an operator at scale has far more requests ready than the API server can serve at once. Sent
all together, every one of them waits in the server (and on the same CPUs), and what finishes
first is whatever the server happened to pick. Held here instead, past `limit` in flight, they
go out in an order the operator chooses: the writes that start the cluster's own work (workloads)
and the status writes that end a user's wait before fan-out and bookkeeping. Nothing that must not
be lost waits at LOW: a long rollout keeps HIGH and NORMAL waiters queued for minutes.

The priority is the caller's context (`request_priority`), so it follows a reconcile into every
task it starts without threading a parameter through each call. `EXEMPT` never waits and holds no
slot: leader election must renew its Lease whatever the load, and the Event senders' own queue is
bounded (held here, it overflows and drops Events); watches are never gated (they are long-lived
and would hold a slot for minutes). A request holds its slot for one attempt: retry backoff waits
outside the gate.
"""

from __future__ import annotations

import asyncio
import enum
import heapq
import itertools
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar


class Priority(enum.IntEnum):
    """Lower goes first."""

    EXEMPT = 0  # never waits for a slot, holds none
    HIGH = 1
    NORMAL = 2
    LOW = 3


_PRIORITY: ContextVar[Priority] = ContextVar("request_priority", default=Priority.NORMAL)


@contextmanager
def request_priority(priority: Priority) -> Iterator[None]:
    """Requests made in this context (and in tasks it starts) wait for a slot at `priority`."""
    token = _PRIORITY.set(priority)
    try:
        yield
    finally:
        _PRIORITY.reset(token)


def current_priority() -> Priority:
    return _PRIORITY.get()


class RequestGate:
    """At most `limit` requests in flight (None: no bound); waiters served by priority, then FIFO."""

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"limit must be >= 1 or None, got {limit}")
        self.limit = limit
        self._in_flight = 0
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    @property
    def in_flight(self) -> int:
        """Slots held now (EXEMPT requests hold none)."""
        return self._in_flight

    @property
    def waiting(self) -> int:
        return sum(1 for *_, f in self._waiters if not f.done())

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the body; waits while `limit` are held."""
        priority = current_priority()
        if self.limit is None or priority is Priority.EXEMPT:
            yield
            return
        await self._acquire(priority)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, priority: Priority) -> None:
        assert self.limit is not None
        # A free slot means nobody waits: `_release` hands a slot to a live waiter before freeing it.
        if self._in_flight < self.limit:
            self._in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (int(priority), next(self._seq), waiter))
        try:
            await waiter  # woken with the slot of the request that finished
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # woken, but we will not use the slot: pass it on
            else:
                waiter.cancel()  # skipped when popped
            raise

    def _release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)  # the slot changes hands; in-flight stays the same
                return
        self._in_flight -= 1
