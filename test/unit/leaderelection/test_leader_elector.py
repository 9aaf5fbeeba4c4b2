"""Leader election arrows on a fake Lease store and a fake clock: acquire, renew, expire, release."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from dynamo_operator.internal.client.errors import AlreadyExists, Conflict, ServerError
from dynamo_operator.internal.leaderelection import (
    Ending,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    new_identity,
)
from dynamo_operator.internal.leaderelection.record import format_micro_time, parse_micro_time


class FakeClock:
    """Monotonic and wall time that move together, only when advanced (sleep advances)."""

    def __init__(self) -> None:
        self.mono = 100.0
        self.start = datetime(2026, 1, 1, tzinfo=UTC)

    def now(self) -> float:
        return self.mono

    def wall(self) -> datetime:
        return self.start + timedelta(seconds=self.mono)

    async def sleep(self, seconds: float) -> None:
        self.mono += seconds
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        self.mono += seconds


@dataclass
class FakeLeaseStore:
    """One Lease with resourceVersion semantics; `fail` makes every call raise a 500."""

    record: LeaderElectionRecord | None = None
    rv: int = 0
    fail: bool = False
    writes: list[LeaderElectionRecord] = field(default_factory=list)

    def lock(self) -> FakeLock:
        return FakeLock(self)


class FakeLock:
    def __init__(self, store: FakeLeaseStore) -> None:
        self.store = store

    def _check(self) -> None:
        if self.store.fail:
            raise ServerError(500, "InternalError", "etcd is down", {})

    async def get(self) -> tuple[LeaderElectionRecord, str] | None:
        self._check()
        return None if self.store.record is None else (self.store.record, str(self.store.rv))

    async def create(self, record: LeaderElectionRecord) -> str:
        self._check()
        if self.store.record is not None:
            raise AlreadyExists(409, "AlreadyExists", "exists", {})
        return self._write(record)

    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str:
        self._check()
        if resource_version != str(self.store.rv):
            raise Conflict(409, "Conflict", "the object has been modified", {})
        return self._write(record)

    def _write(self, record: LeaderElectionRecord) -> str:
        self.store.record = record
        self.store.rv += 1
        self.store.writes.append(record)
        return str(self.store.rv)

    def describe(self) -> str:
        return "ns/lease"


def candidate(store: FakeLeaseStore, clock: FakeClock, identity: str) -> LeaderElector:
    config = LeaderElectionConfig(name="lease", namespace="ns", identity=identity)
    return LeaderElector(config, store.lock(), clock=clock)


async def test_first_candidate_creates_the_lease() -> None:
    """No Lease yet → CREATE with us as holder, zero transitions."""
    store, clock = FakeLeaseStore(), FakeClock()
    a = candidate(store, clock, "a")
    assert await a.try_acquire_or_renew()
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == ("a", 0)
    assert store.record.lease_duration_seconds == 15
    assert a.is_leader()


async def test_standby_fails_while_the_lease_is_valid() -> None:
    """A second candidate cannot take a lease that was renewed within lease duration (by its clock)."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b = candidate(store, clock, "a"), candidate(store, clock, "b")
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    clock.advance(14.9)
    assert not await b.try_acquire_or_renew()
    assert not b.is_leader()


async def test_renewal_keeps_acquire_time_and_transitions_and_bumps_renew_time() -> None:
    """The holder's renewals move renewTime only."""
    store, clock = FakeLeaseStore(), FakeClock()
    a = candidate(store, clock, "a")
    await a.try_acquire_or_renew()
    first = store.record
    clock.advance(2)
    assert await a.try_acquire_or_renew()
    assert store.record is not None and first is not None
    assert store.record.acquire_time == first.acquire_time
    assert store.record.lease_transitions == 0
    assert store.record.renew_time == first.renew_time + timedelta(seconds=2)  # type: ignore[operator]


async def test_expired_lease_is_taken_over_with_a_transition() -> None:
    """After lease duration without a change seen, the standby takes over: transitions + 1."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b = candidate(store, clock, "a"), candidate(store, clock, "b")
    await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()  # b observes the record now
    clock.advance(15.01)
    assert await b.try_acquire_or_renew()
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_transitions) == ("b", 1)
    assert store.record.acquire_time == clock.wall()


async def test_expiry_is_measured_from_local_observation_not_the_holders_timestamps() -> None:
    """A renewTime far in the past (skewed holder clock) does not make a freshly seen lease expired."""
    old = datetime(2000, 1, 1, tzinfo=UTC)
    store = FakeLeaseStore(record=LeaderElectionRecord("a", 15, old, old, 3), rv=7)
    clock = FakeClock()
    b = candidate(store, clock, "b")
    assert not await b.try_acquire_or_renew()
    clock.advance(15.01)
    assert await b.try_acquire_or_renew()
    assert store.record is not None and store.record.lease_transitions == 4


async def test_a_renewed_lease_restarts_the_standbys_expiry_timer() -> None:
    """Every change the standby sees pushes its expiry out by a full lease duration."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b = candidate(store, clock, "a"), candidate(store, clock, "b")
    await a.try_acquire_or_renew()
    for _ in range(5):
        clock.advance(10)
        await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()


async def test_conflicting_update_means_not_leader_this_round() -> None:
    """Two standbys racing for an expired lease: the second update carries a stale RV → Conflict → False."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b, c = (candidate(store, clock, x) for x in "abc")
    await a.try_acquire_or_renew()
    await b.try_acquire_or_renew()
    await c.try_acquire_or_renew()
    clock.advance(16)

    original_get = FakeLock.get
    snapshot = await store.lock().get()

    async def stale_get(self: FakeLock) -> tuple[LeaderElectionRecord, str] | None:
        return snapshot  # both read the same version before either writes

    FakeLock.get = stale_get  # type: ignore[method-assign]
    try:
        results = [await b.try_acquire_or_renew(), await c.try_acquire_or_renew()]
    finally:
        FakeLock.get = original_get  # type: ignore[method-assign]
    assert results == [True, False]
    assert store.record is not None and store.record.holder_identity == "b"


async def test_concurrent_create_loses_with_already_exists() -> None:
    """If someone else created the Lease between our GET and CREATE, we are not leader."""
    store, clock = FakeLeaseStore(), FakeClock()
    b = candidate(store, clock, "b")

    original_get = FakeLock.get

    async def racing_get(self: FakeLock) -> tuple[LeaderElectionRecord, str] | None:
        result = await original_get(self)
        store.record, store.rv = LeaderElectionRecord("a", 15, None, None), 1
        return result

    FakeLock.get = racing_get  # type: ignore[method-assign]
    try:
        assert not await b.try_acquire_or_renew()
    finally:
        FakeLock.get = original_get  # type: ignore[method-assign]


async def test_release_clears_holder_and_standby_takes_over_immediately() -> None:
    """Release writes an empty holder with a 1 s lease; the standby's next attempt wins."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b = candidate(store, clock, "a"), candidate(store, clock, "b")
    await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    assert await a.release()
    assert store.record is not None
    assert (store.record.holder_identity, store.record.lease_duration_seconds) == ("", 1)
    assert not a.is_leader()
    assert await b.try_acquire_or_renew()
    assert store.record.lease_transitions == 1


async def test_release_when_not_leader_writes_nothing() -> None:
    """A standby's release is a no-op."""
    store, clock = FakeLeaseStore(), FakeClock()
    a, b = candidate(store, clock, "a"), candidate(store, clock, "b")
    await a.try_acquire_or_renew()
    await b.try_acquire_or_renew()
    writes = len(store.writes)
    assert not await b.release()
    assert len(store.writes) == writes


async def test_hold_returns_when_renewal_fails_past_the_deadline() -> None:
    """With the API failing, hold() gives up after renew_deadline (10 s), before lease duration."""
    store, clock = FakeLeaseStore(), FakeClock()
    a = candidate(store, clock, "a")
    await a.acquire()
    store.fail = True
    started = clock.now()
    await asyncio.wait_for(a.hold(), 5)
    lost_after = clock.now() - started
    assert 10 <= lost_after < 15


async def test_run_reports_lost_and_calls_callbacks_in_order() -> None:
    """run(): started callback, then stopped(LOST) when renewal fails."""
    store, clock = FakeLeaseStore(), FakeClock()
    a = candidate(store, clock, "a")
    events: list[str] = []

    def started() -> None:
        events.append("started")
        store.fail = True

    ending = await asyncio.wait_for(
        a.run(on_started_leading=started, on_stopped_leading=lambda e: events.append(e.value)), 5
    )
    assert ending is Ending.LOST
    assert events == ["started", "lost"]


async def test_cancelled_leader_releases_the_lease() -> None:
    """Cancelling run() while leading releases the Lease and reports RELEASED."""
    store, clock = FakeLeaseStore(), FakeClock()
    a = candidate(store, clock, "a")
    stopped: list[Ending] = []
    task = asyncio.create_task(a.run(on_started_leading=lambda: None, on_stopped_leading=stopped.append))
    for _ in range(50):
        if a.is_leader():
            break
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped == [Ending.RELEASED]
    assert store.record is not None and store.record.holder_identity == ""


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "identity"),
    [
        pytest.param(10, 10, 2, "a", id="lease-not-above-renew"),
        pytest.param(15, 2.4, 2, "a", id="renew-not-above-jittered-retry"),
        pytest.param(15, 10, 0, "a", id="zero-retry"),
        pytest.param(15, 10, 2, "", id="empty-identity"),
    ],
)
def test_invalid_timings_are_rejected_up_front(
    lease: float, renew: float, retry: float, identity: str
) -> None:
    """lease > renew > 1.2 * retry and a non-empty identity, checked when the config is built."""
    with pytest.raises(ValueError):
        LeaderElectionConfig(
            name="l",
            namespace="ns",
            identity=identity,
            lease_duration=lease,
            renew_deadline=renew,
            retry_period=retry,
        )


def test_defaults_and_identity_shape() -> None:
    """client-go defaults 15/10/2 s; identity is hostname_uuid."""
    config = LeaderElectionConfig(name="l", namespace="ns", identity=new_identity("host-1"))
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    assert config.request_timeout == 5
    host, _, uid = config.identity.partition("_")
    assert host == "host-1" and len(uid) == 36


def test_micro_time_has_six_fractional_digits_and_round_trips() -> None:
    """Lease times are RFC 3339 with microseconds, in UTC."""
    when = datetime(2026, 3, 4, 5, 6, 7, 89, tzinfo=UTC)
    text = format_micro_time(when)
    assert text == "2026-03-04T05:06:07.000089Z"
    assert parse_micro_time(text) == when
    record = LeaderElectionRecord("a", 15, when, when, 2)
    assert LeaderElectionRecord.from_lease({"spec": record.to_spec()}) == record


async def test_lease_requests_never_wait_behind_the_operators_own() -> None:
    """Acquire and renew run at Priority.EXEMPT (the client's gate lets them through at once);
    what the operator starts when it leads runs at its own priority."""
    from dynamo_operator.internal.client.gate import Priority, current_priority

    store, clock = FakeLeaseStore(), FakeClock()
    elector = candidate(store, clock, "a")
    seen: list[Priority] = []
    original = elector._lock.update

    async def update(record: LeaderElectionRecord, rv: str) -> str:
        seen.append(current_priority())
        return await original(record, rv)

    elector._lock.update = update  # type: ignore[method-assign]
    started: list[Priority] = []
    task = asyncio.create_task(
        elector.run(
            on_started_leading=lambda: started.append(current_priority()), on_stopped_leading=lambda _e: None
        )
    )
    for _ in range(50):
        clock.advance(3)
        await asyncio.sleep(0)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert started == [Priority.NORMAL]
    assert seen and set(seen) == {Priority.EXEMPT}


def test_a_lease_time_that_is_no_timestamp_is_refused_and_an_unset_one_is_none() -> None:
    """Lease times are read by the shared RFC 3339 reader (internal/timestamps.py)."""
    assert parse_micro_time(None) is None and parse_micro_time("") is None
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        parse_micro_time("yesterday")
