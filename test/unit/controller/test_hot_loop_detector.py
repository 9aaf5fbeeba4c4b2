"""The hot-loop detector: a key reconciled `limit` times within a window is reported once per window."""

from __future__ import annotations

import asyncio

import pytest
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller import Controller, Result
from dynamo_operator.internal.controller.hotloop import HotLoopDetector
from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.workqueue import RateLimitingQueue


def test_a_key_is_reported_when_it_reaches_the_limit() -> None:
    detector = HotLoopDetector(limit=3, window=60.0, clock=FakeClock())
    assert [detector.observe("ns/a") for _ in range(3)] == [False, False, True]


def test_a_hot_key_is_reported_once_per_window() -> None:
    clock = FakeClock()
    detector = HotLoopDetector(limit=2, window=60.0, clock=clock)
    assert [detector.observe("ns/a") for _ in range(5)] == [False, True, False, False, False]
    clock.advance(60.0)
    assert [detector.observe("ns/a") for _ in range(2)] == [False, True]


def test_reconciles_spread_over_windows_are_not_hot() -> None:
    clock = FakeClock()
    detector = HotLoopDetector(limit=3, window=10.0, clock=clock)
    reports = []
    for _ in range(10):
        reports.append(detector.observe("ns/a"))
        clock.advance(5.0)  # two per window: under the limit
    assert not any(reports)


def test_keys_are_counted_separately() -> None:
    detector = HotLoopDetector(limit=2, window=60.0, clock=FakeClock())
    assert [detector.observe(k) for k in ("ns/a", "ns/b", "ns/c")] == [False, False, False]
    assert detector.count("ns/a") == 1


def test_memory_is_bounded_by_the_keys_of_the_current_window() -> None:
    clock = FakeClock()
    detector = HotLoopDetector(limit=5, window=1.0, clock=clock)
    for i in range(5000):
        detector.observe(f"ns/k{i}")
        clock.advance(0.01)  # 100 keys per window
    assert len(detector) <= 1024 + 100


@pytest.mark.parametrize(("limit", "window"), [(0, 60.0), (3, 0.0)])
def test_nonsense_settings_are_refused(limit: int, window: float) -> None:
    with pytest.raises(ValueError):
        HotLoopDetector(limit=limit, window=window)


class Counting:
    """Succeeds every time; the test re-adds the key after each reconcile, as a self-triggering
    watch would (a controller whose own write wakes it up again)."""

    def __init__(self) -> None:
        self.calls = 0

    async def reconcile(self, key: str) -> Result:
        self.calls += 1
        return Result()


async def test_the_worker_counts_a_hot_key_in_its_metric() -> None:
    reconciler = Counting()
    queue: RateLimitingQueue[str] = RateLimitingQueue(name="ctl-hot", clock=FakeClock())
    controller = Controller(
        name="ctl-hot",
        reconciler=reconciler,
        queue=queue,
        hot_loops=HotLoopDetector(limit=5, window=3600.0),
    )
    task = asyncio.create_task(controller.run())
    try:
        for round_ in range(1, 8):
            queue.add("ns/spin")
            for _ in range(500):
                if reconciler.calls >= round_:
                    break
                await asyncio.sleep(0.002)
    finally:
        controller.stop()
        await asyncio.wait_for(task, 5)
    assert reconciler.calls == 7
    assert REGISTRY.get_sample_value("controller_hot_loop_keys_total", {"controller": "ctl-hot"}) == 1
