"""Manager lifecycle with a fake cache (no API server): start order, graceful stop, failures."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP
from dynamo_operator.internal.controller import Result
from dynamo_operator.internal.leaderelection import Ending
from dynamo_operator.internal.manager import Manager, ManagerError, ManagerOptions
from dynamo_operator.internal.manager.manager import Phase


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Any] = []

    @property
    def store(self) -> Any:
        raise NotImplementedError

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def add_indexers(self, indexers: Any) -> None:
        pass

    def has_synced(self) -> bool:
        return True


class FakeCache:
    """Records lifecycle calls; syncs when `synced` is set."""

    def __init__(self, log: list[str], *, syncs: bool = True) -> None:
        self.log = log
        self.synced = asyncio.Event()
        if syncs:
            self.synced.set()
        self.informers: dict[str, FakeInformer] = {}

    def informer(self, resource: Any, *, namespace: str | None = None) -> FakeInformer:
        return self.informers.setdefault(resource.plural, FakeInformer())

    async def start(self) -> None:
        self.log.append("cache-start")

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        try:
            await asyncio.wait_for(self.synced.wait(), timeout)
        except TimeoutError:
            return False
        self.log.append("cache-synced")
        return True

    async def stop(self) -> None:
        self.log.append("cache-stop")


class SlowReconciler:
    def __init__(self, log: list[str]) -> None:
        self.log = log
        self.started = asyncio.Event()

    async def reconcile(self, key: str) -> Result:
        self.started.set()
        self.log.append(f"reconcile-start {key}")
        await asyncio.sleep(0.05)
        self.log.append(f"reconcile-end {key}")
        return Result()


def make(log: list[str], **opts: Any) -> tuple[Manager, FakeCache]:
    cache = FakeCache(log, syncs=opts.pop("syncs", True))
    options = ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", **opts)
    lost: list[str] = []
    mgr = Manager(
        cast(Client, object()),
        options=options,
        cache=cast(Any, cache),
        on_lost_leadership=lambda: lost.append("lost"),
    )
    mgr.lost = lost  # type: ignore[attr-defined]
    return mgr, cache


async def test_stop_finishes_in_flight_reconcile_before_runnables_and_cache_stop() -> None:
    """Order: cache start → sync → runnables/controllers; at stop the reconcile ends before
    runnables are cancelled and the cache stops."""
    log: list[str] = []
    mgr, cache = make(log)
    rec = SlowReconciler(log)
    mgr.builder("ctl").for_(CONFIG_MAP).complete(rec)

    async def runnable() -> None:
        log.append("runnable-start")
        try:
            await asyncio.Event().wait()
        finally:
            log.append("runnable-cancelled")

    mgr.add_runnable(runnable, needs_leader=False, name="side")
    task = asyncio.create_task(mgr.run())
    await asyncio.wait_for(_until(lambda: mgr.leading), 5)
    for handler in cache.informers["configmaps"].handlers:
        handler.on_add({"metadata": {"name": "a", "namespace": "ns"}})
    await asyncio.wait_for(rec.started.wait(), 5)
    mgr.stop()
    await asyncio.wait_for(task, 5)
    assert log.index("cache-start") < log.index("cache-synced") < log.index("runnable-start")
    assert log.index("reconcile-end ns/a") < log.index("runnable-cancelled") < log.index("cache-stop")
    assert not mgr.leading and not mgr.ready


async def test_stop_before_sync_returns_without_starting_controllers() -> None:
    """A stop while caches are still syncing ends run() cleanly; nothing leads."""
    log: list[str] = []
    mgr, _ = make(log, syncs=False)
    task = asyncio.create_task(mgr.run())
    await asyncio.sleep(0.01)
    assert not mgr.ready
    mgr.stop()
    await asyncio.wait_for(task, 5)
    assert not mgr.leading and "cache-stop" in log


async def test_cache_sync_timeout_is_a_manager_error() -> None:
    """Informers that never sync within cache_sync_timeout fail start-up."""
    mgr, _ = make([], syncs=False, cache_sync_timeout=0.05)
    with pytest.raises(ManagerError, match="sync"):
        await asyncio.wait_for(mgr.run(), 5)


async def test_failing_runnable_stops_the_manager_with_its_error() -> None:
    """A runnable that raises makes run() stop and raise ManagerError."""
    mgr, _ = make([])

    async def broken() -> None:
        raise RuntimeError("side task died")

    mgr.add_runnable(broken, needs_leader=False)
    with pytest.raises(ManagerError, match="side task died"):
        await asyncio.wait_for(mgr.run(), 5)


async def test_graceful_timeout_cancels_a_stuck_reconcile() -> None:
    """A reconcile that outlives graceful_shutdown_timeout is cancelled; run() still returns."""
    mgr, cache = make([], graceful_shutdown_timeout=0.1)
    started = asyncio.Event()

    class Stuck:
        async def reconcile(self, key: str) -> Result:
            started.set()
            await asyncio.Event().wait()
            return Result()

    mgr.builder("stuck").for_(CONFIG_MAP).complete(Stuck())
    task = asyncio.create_task(mgr.run())
    await asyncio.wait_for(_until(lambda: mgr.leading), 5)
    cache.informers["configmaps"].handlers[0].on_add({"metadata": {"name": "a", "namespace": "ns"}})
    await asyncio.wait_for(started.wait(), 5)
    mgr.stop()
    await asyncio.wait_for(task, 5)


def test_lost_lease_calls_the_exit_handler_but_a_graceful_stop_does_not() -> None:
    """LOST while running → the exit handler; RELEASED, or LOST during stop → nothing."""
    mgr, _ = make([])
    mgr._stopped_leading(Ending.RELEASED)
    assert mgr.lost == []  # type: ignore[attr-defined]
    mgr._stopped_leading(Ending.LOST)
    assert mgr.lost == ["lost"]  # type: ignore[attr-defined]


def test_controller_names_are_unique() -> None:
    """Two controllers with one name would share metrics; refused."""
    mgr, _ = make([])
    mgr.builder("same").for_(CONFIG_MAP).complete(SlowReconciler([]))
    with pytest.raises(ValueError, match="already in use"):
        mgr.builder("same").for_(CONFIG_MAP).complete(SlowReconciler([]))


def record_phases(mgr: Manager) -> list[Phase]:
    seen: list[Phase] = []
    enter = mgr._enter

    def recording(phase: Phase) -> None:
        enter(phase)
        seen.append(phase)

    mgr._enter = recording  # type: ignore[method-assign]
    return seen


async def test_a_run_passes_every_phase_in_order() -> None:
    """Without election: NEW → STARTING → SYNCED → LEADING, and at stop → STOPPING → STOPPED."""
    mgr, _ = make([])
    seen = record_phases(mgr)
    assert mgr.phase is Phase.NEW
    task = asyncio.create_task(mgr.run())
    await asyncio.wait_for(_until(lambda: mgr.leading), 5)
    mgr.stop()
    await asyncio.wait_for(task, 5)
    assert seen == [Phase.STARTING, Phase.SYNCED, Phase.LEADING, Phase.STOPPING, Phase.STOPPED]


async def test_a_failing_runnable_stops_in_order_and_no_task_outlives_run() -> None:
    """A runnable that raises does not tear the TaskGroup down at once: the manager walks STOPPING
    (other runnables cancelled, cache stopped) and every task it started has ended when run() raises."""
    log: list[str] = []
    mgr, _ = make(log)
    seen = record_phases(mgr)
    failed = asyncio.Event()

    async def long_running() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            log.append("long-running-cancelled")

    async def broken() -> None:
        await asyncio.sleep(0.01)
        failed.set()
        raise RuntimeError("side task died")

    mgr.add_runnable(long_running, needs_leader=False, name="long")
    mgr.add_runnable(broken, needs_leader=True, name="broken")
    with pytest.raises(ManagerError, match="side task died"):
        await asyncio.wait_for(mgr.run(), 5)
    assert failed.is_set() and seen[-2:] == [Phase.STOPPING, Phase.STOPPED]
    assert log.index("long-running-cancelled") < log.index("cache-stop")
    assert [t for t in asyncio.all_tasks() if t.get_name() in ("long", "broken", "event-sender")] == []


def test_the_phase_table_refuses_an_arrow_it_does_not_have() -> None:
    """Leading before the caches synced, or starting twice, is a bug, refused loudly."""
    mgr, _ = make([])
    with pytest.raises(AssertionError, match="NEW to LEADING"):
        mgr._enter(Phase.LEADING)


async def test_a_manager_runs_once() -> None:
    mgr, _ = make([])
    mgr.stop()
    await asyncio.wait_for(mgr.run(), 5)
    assert mgr.phase is Phase.STOPPED
    with pytest.raises(RuntimeError, match="runs once"):
        await mgr.run()


async def _until(predicate: Any) -> None:
    for _ in range(5000):
        if predicate():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition not reached")
