"""client-go's leader-election algorithm on a Lease.

Expiry is judged by *local observation*: a candidate notes (on its own monotonic clock) when it last
saw the record change, and treats the lease as expired only `leaseDurationSeconds` after that. The
holder's timestamps are never compared with our clock, so clock offsets between hosts do not matter.

`run()` = acquire (retry every `retry_period` with jitter) → `on_started_leading()` → renew every
`retry_period`; if no renewal succeeds within `renew_deadline`, leadership is lost and `run()` ends
with `Ending.LOST`. When cancelled while leading (graceful stop) it releases the Lease first.
`on_stopped_leading()` always runs when a leader stops.
"""

from __future__ import annotations

import asyncio
import enum
import random
from collections.abc import Callable

import structlog
from dynamo_operator.internal.client.errors import AlreadyExists, ApiError, Conflict, TransportError
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.leaderelection import metrics
from dynamo_operator.internal.leaderelection.config import JITTER_FACTOR, LeaderElectionConfig
from dynamo_operator.internal.leaderelection.lock import LeaseLock
from dynamo_operator.internal.leaderelection.record import LeaderElectionRecord

log = structlog.get_logger(__name__)

# What a failed attempt may raise; anything else is a bug and propagates.
_ATTEMPT_ERRORS = (ApiError, TransportError, TimeoutError)


class Ending(enum.Enum):
    LOST = "lost"  # renewal failed past the deadline: stop writing now
    RELEASED = "released"  # graceful stop while leading; the Lease was handed back


class LeaderElector:
    """One candidate for one Lease."""

    def __init__(
        self,
        config: LeaderElectionConfig,
        lock: LeaseLock,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self._lock = lock
        self._clock: Clock = clock or RealClock()
        self._rng = rng or random.Random()
        self._observed: LeaderElectionRecord | None = None
        self._observed_rv: str | None = None
        self._observed_at = 0.0  # monotonic time the observed record last changed
        self._status = metrics.MASTER_STATUS.labels(config.name)
        self._slowpath = metrics.SLOWPATH.labels(config.name)
        self._status.set(0)

    # -- observation -----------------------------------------------------------------------------

    def is_leader(self) -> bool:
        """Whether the last record we saw or wrote names us."""
        return self._observed is not None and self._observed.holder_identity == self.config.identity

    @property
    def observed_record(self) -> LeaderElectionRecord | None:
        return self._observed

    def _lease_valid(self, now: float) -> bool:
        assert self._observed is not None
        return self._observed_at + self._observed.lease_duration_seconds > now

    def _observe(self, record: LeaderElectionRecord, resource_version: str, now: float) -> None:
        self._observed, self._observed_rv, self._observed_at = record, resource_version, now

    # -- one attempt -----------------------------------------------------------------------------

    async def try_acquire_or_renew(self) -> bool:
        """One attempt to become or stay leader; True when we hold the Lease afterwards."""
        now = self._clock.now()
        wall = self._clock.wall()
        desired = LeaderElectionRecord(
            holder_identity=self.config.identity,
            lease_duration_seconds=round(self.config.lease_duration),
            acquire_time=wall,
            renew_time=wall,
            lease_transitions=0,
        )

        # 1. Fast path: we lead and our copy is fresh, so update from it without a GET.
        if self.is_leader() and self._lease_valid(now):
            assert self._observed is not None and self._observed_rv is not None
            renewed = desired.with_(
                acquire_time=self._observed.acquire_time, lease_transitions=self._observed.lease_transitions
            )
            try:
                rv = await self._lock.update(renewed, self._observed_rv)
            except _ATTEMPT_ERRORS as err:
                log.info(
                    "Lease fast-path renewal failed, trying the slow path",
                    lease=self._lock.describe(),
                    error=str(err),
                )
                self._slowpath.inc()
            else:
                self._observe(renewed, rv, self._clock.now())
                return True

        # 2. Read the Lease; create it when absent (a concurrent creator makes this AlreadyExists).
        current = await self._lock.get()
        if current is None:
            try:
                rv = await self._lock.create(desired)
            except AlreadyExists:
                return False
            self._observe(desired, rv, self._clock.now())
            return True
        record, rv = current

        # 3. Note when the record last changed, by our clock: that is what expiry is measured from.
        if record != self._observed:
            self._observe(record, rv, now)
        else:
            self._observed_rv = rv

        # 4. Another holder whose lease has not expired (by our observation): not our turn.
        if (
            record.holder_identity
            and record.holder_identity != self.config.identity
            and self._lease_valid(now)
        ):
            return False

        # 5. Same holder keeps its acquire time and count; a takeover starts a new term.
        if record.holder_identity == self.config.identity:
            desired = desired.with_(
                acquire_time=record.acquire_time, lease_transitions=record.lease_transitions
            )
        else:
            desired = desired.with_(lease_transitions=record.lease_transitions + 1)

        # 6. Conditional update on the resourceVersion we read: a racing writer gets Conflict.
        try:
            new_rv = await self._lock.update(desired, rv)
        except Conflict:
            return False
        self._observe(desired, new_rv, self._clock.now())
        return True

    async def _attempt(self) -> bool:
        try:
            async with asyncio.timeout(self.config.request_timeout):
                return await self.try_acquire_or_renew()
        except _ATTEMPT_ERRORS as err:
            log.warning(
                "Lease attempt failed", lease=self._lock.describe(), error=str(err) or type(err).__name__
            )
            return False

    # -- loops -----------------------------------------------------------------------------------

    async def acquire(self) -> None:
        """Return once we hold the Lease (cancellable)."""
        log.info(
            "Attempting to acquire leader lease", lease=self._lock.describe(), identity=self.config.identity
        )
        while not await self._attempt():
            holder = self._observed.holder_identity if self._observed else ""
            log.debug("Lease held by another candidate", lease=self._lock.describe(), holder=holder)
            await self._clock.sleep(self.config.retry_period * self._rng.uniform(1.0, JITTER_FACTOR))
        self._status.set(1)
        log.info("Successfully acquired lease", lease=self._lock.describe(), identity=self.config.identity)

    async def hold(self) -> None:
        """Renew every `retry_period`; return when no renewal succeeded within `renew_deadline`."""
        while True:
            deadline = self._clock.now() + self.config.renew_deadline
            while not await self._attempt():
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    self._status.set(0)
                    log.error("Failed to renew lease within the deadline", lease=self._lock.describe())
                    return
                await self._clock.sleep(min(self.config.retry_period, remaining))
            await self._clock.sleep(self.config.retry_period)

    async def release(self) -> bool:
        """Hand the Lease back: empty holder and a 1 s duration, so a standby takes it at its next try."""
        self._status.set(0)
        if not self.is_leader() or self._observed_rv is None:
            return False
        assert self._observed is not None
        wall = self._clock.wall()
        released = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=wall,
            renew_time=wall,
            lease_transitions=self._observed.lease_transitions,
        )
        try:
            async with asyncio.timeout(self.config.request_timeout):
                rv = await self._lock.update(released, self._observed_rv)
        except _ATTEMPT_ERRORS as err:
            log.error("Failed to release lease", lease=self._lock.describe(), error=str(err))
            return False
        self._observe(released, rv, self._clock.now())
        log.info("Released leader lease", lease=self._lock.describe())
        return True

    async def run(
        self, *, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[Ending], None]
    ) -> Ending:
        """Acquire, lead until the Lease is lost or we are cancelled; see the module docstring.

        The Lease's requests never wait behind the operator's own (`Priority.EXEMPT`): a leader
        that cannot renew under load would stop leading because it is busy. Only the elector's calls
        carry it; `on_started_leading` runs in the caller's context.
        """
        with request_priority(Priority.EXEMPT):
            await self.acquire()
        ending = Ending.LOST
        try:
            on_started_leading()
            with request_priority(Priority.EXEMPT):
                await self.hold()
        except asyncio.CancelledError:
            ending = Ending.RELEASED
            if self.config.release_on_cancel:
                with request_priority(Priority.EXEMPT):
                    await self.release()
            raise
        finally:
            self._status.set(0)
            on_stopped_leading(ending)
        return ending
