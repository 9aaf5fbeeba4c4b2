"""Kubernetes Events with client-go's manners: never block the caller, fold repeats, limit spam.

`EventRecorder.event()` only puts a record on a bounded in-memory queue (dropped, with a log line,
when full). A few background senders (`EventBroadcaster.run()`, `SENDERS` of them: one sender fell
behind by thousands of Events at 1,000 graphs) then, per record, and one record at a time per
correlation key, so a repeat always finds the Event its predecessor created:

1. spam filter: a token bucket per source + object (burst 25, one token per 300 s) drops floods;
2. correlation: a repeat of the same object + type + reason + message + source (kept in an LRU of
   4096 entries) PATCHes the existing Event's `count`/`lastTimestamp` instead of creating a new one;
3. writes with a few bounded retries; an Event that vanished (TTL) is created afresh.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import socket
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from dynamo_operator.internal.client.errors import ApiError, NotFound, TransportError, namespace_going
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.events.sink import EventSink
from dynamo_operator.internal.timestamps import rfc3339

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

QUEUE_SIZE = 1000
LRU_SIZE = 4096
SPAM_BURST = 25
SPAM_REFILL_PER_SECOND = 1 / 300
SEND_ATTEMPTS = 3
SENDERS = 4
MAX_MESSAGE_CHARS = 1024


class EventType(enum.StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


@dataclass(frozen=True, slots=True)
class _Pending:
    involved: Obj  # an ObjectReference
    type: str
    reason: str
    message: str
    component: str
    host: str
    at: datetime

    def correlation_key(self) -> tuple[str, ...]:
        ref = self.involved
        return (
            self.component,
            self.host,
            ref.get("apiVersion", ""),
            ref.get("kind", ""),
            ref.get("namespace", ""),
            ref.get("name", ""),
            ref.get("uid", ""),
            self.type,
            self.reason,
            self.message,
        )

    def spam_key(self) -> tuple[str, ...]:
        ref = self.involved
        return (
            self.component,
            self.host,
            ref.get("kind", ""),
            ref.get("namespace", ""),
            ref.get("name", ""),
            ref.get("uid", ""),
        )


@dataclass(slots=True)
class _Seen:
    namespace: str
    name: str
    count: int
    first_timestamp: str


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


def object_reference(obj: Mapping[str, Any]) -> Obj:
    """The ObjectReference of an object as stored in the cache (apiVersion/kind/metadata)."""
    meta = obj.get("metadata") or {}
    ref = {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "name": meta.get("name", ""),
        "namespace": meta.get("namespace", ""),
        "uid": meta.get("uid", ""),
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    return {k: v for k, v in ref.items() if v}


class EventRecorder:
    """Records Events for one component (the `source.component` / `reportingComponent`)."""

    def __init__(self, broadcaster: EventBroadcaster, component: str) -> None:
        self._broadcaster = broadcaster
        self.component = component

    def event(self, obj: Mapping[str, Any], *, type: str, reason: str, message: str) -> None:
        """Queue an Event about `obj`; returns at once and never raises for API trouble."""
        if type not in (EventType.NORMAL, EventType.WARNING):
            raise ValueError(f"event type must be Normal or Warning, got {type!r}")
        self._broadcaster.submit(
            _Pending(
                involved=object_reference(obj),
                type=type,
                reason=reason,
                message=message[:MAX_MESSAGE_CHARS],
                component=self.component,
                host=self._broadcaster.host,
                at=self._broadcaster.now(),
            )
        )


class EventBroadcaster:
    """The queue and the single sender shared by all recorders of a process."""

    def __init__(
        self,
        sink: EventSink,
        *,
        host: str | None = None,
        clock: Clock | None = None,
        queue_size: int = QUEUE_SIZE,
        retry_delay: float = 1.0,
        senders: int = SENDERS,
    ) -> None:
        self._sink = sink
        self.host = host or socket.gethostname()
        self._clock: Clock = clock or RealClock()
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(maxsize=queue_size)
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        self._buckets: OrderedDict[tuple[str, ...], _Bucket] = OrderedDict()
        self._retry_delay = retry_delay
        self.dropped = 0
        self._senders = max(1, senders)
        self._key_locks: dict[tuple[str, ...], tuple[asyncio.Lock, int]] = {}

    def now(self) -> datetime:
        """The wall time an Event is stamped with."""
        return self._clock.wall()

    def recorder(self, component: str) -> EventRecorder:
        return EventRecorder(self, component)

    def submit(self, pending: _Pending) -> None:
        try:
            self._queue.put_nowait(pending)
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("Event queue full, dropping event", reason=pending.reason, object=pending.involved)

    async def run(self) -> None:
        """Send queued events with `senders` concurrent senders until cancelled.

        Events never wait in the client's gate (`Priority.EXEMPT`): their own queue is bounded and
        drops what does not fit, and behind a long rollout's requests (measured with a gate of 32 at
        1,000 graphs) it overflowed and lost thousands; `SENDERS` already bounds their concurrency."""
        with request_priority(Priority.EXEMPT):
            async with asyncio.TaskGroup() as group:
                for _ in range(self._senders):
                    group.create_task(self._sender())

    async def _sender(self) -> None:
        while True:
            pending = await self._queue.get()
            try:
                async with self._one_at_a_time(pending.correlation_key()):
                    await self._send(pending)
            finally:
                self._queue.task_done()

    @contextlib.asynccontextmanager
    async def _one_at_a_time(self, key: tuple[str, ...]) -> AsyncIterator[None]:
        """Serialise records of one correlation key; the lock lives only while someone holds or
        waits for it, so the map stays as small as the number of records in flight."""
        lock, users = self._key_locks.get(key) or (asyncio.Lock(), 0)
        self._key_locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._key_locks[key]
            if users == 1:
                del self._key_locks[key]
            else:
                self._key_locks[key] = (lock, users - 1)

    async def flush(self, timeout: float) -> bool:  # noqa: ASYNC109
        """Wait (bounded) until everything queued so far was sent or given up on."""
        try:
            async with asyncio.timeout(timeout):
                await self._queue.join()
        except TimeoutError:
            return False
        return True

    # -- one event -------------------------------------------------------------------------------

    def _allow(self, pending: _Pending) -> bool:
        key = pending.spam_key()
        now = self._clock.now()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(SPAM_BURST), now)
        bucket.tokens = min(
            float(SPAM_BURST), bucket.tokens + (now - bucket.updated) * SPAM_REFILL_PER_SECOND
        )
        bucket.updated = now
        self._buckets.move_to_end(key)
        if len(self._buckets) > LRU_SIZE:
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    async def _send(self, pending: _Pending) -> None:
        if not self._allow(pending):
            log.debug("Event dropped by the spam filter", reason=pending.reason, object=pending.involved)
            return
        key = pending.correlation_key()
        seen = self._seen.get(key)
        for attempt in range(1, SEND_ATTEMPTS + 1):
            try:
                if seen is not None:
                    try:
                        seen = await self._bump(pending, seen)
                    except NotFound:
                        seen = None  # expired by the server's event TTL: start a new Event
                        continue
                else:
                    seen = await self._create(pending)
            except (ApiError, TransportError) as err:
                if isinstance(err, ApiError) and err.code < 500 and err.code != 429:
                    # As client-go: an Event of an object whose namespace is being deleted is
                    # refused with it, which is expected and worth no warning.
                    quietly = log.debug if namespace_going(err) else log.warning
                    quietly("Event rejected", reason=pending.reason, error=str(err))
                    return
                if attempt == SEND_ATTEMPTS:
                    log.warning("Giving up on event", reason=pending.reason, error=str(err))
                    return
                await asyncio.sleep(self._retry_delay * attempt)
                continue
            self._seen[key] = seen
            self._seen.move_to_end(key)
            if len(self._seen) > LRU_SIZE:
                self._seen.popitem(last=False)
            return

    async def _create(self, pending: _Pending) -> _Seen:
        ref = pending.involved
        # Events of cluster-scoped objects live in "default", as client-go puts them.
        namespace = ref.get("namespace") or "default"
        stamp = rfc3339(pending.at)
        name = f"{ref.get('name', 'unknown')}.{time.time_ns():x}"
        await self._sink.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": namespace},
                "involvedObject": ref,
                "reason": pending.reason,
                "message": pending.message,
                "type": pending.type,
                "source": {"component": pending.component, "host": pending.host},
                "reportingComponent": pending.component,
                "reportingInstance": pending.host,
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 1,
            }
        )
        return _Seen(namespace=namespace, name=name, count=1, first_timestamp=stamp)

    async def _bump(self, pending: _Pending, seen: _Seen) -> _Seen:
        count = seen.count + 1
        await self._sink.patch(
            seen.namespace,
            seen.name,
            {"count": count, "lastTimestamp": rfc3339(pending.at), "message": pending.message},
        )
        return _Seen(seen.namespace, seen.name, count, seen.first_timestamp)
