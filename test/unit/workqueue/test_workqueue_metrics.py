"""Named queues report client-go's metric names on the operator REGISTRY; unnamed ones report nothing."""

from __future__ import annotations

from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.workqueue import RateLimitingQueue


def sample(metric: str, name: str) -> float | None:
    return REGISTRY.get_sample_value(metric, {"name": name, "controller": name})


async def test_named_queue_counts_adds_depth_durations_and_retries() -> None:
    """Adds, depth, queue/work durations, in-flight gauges and retries move as client-go's do."""
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(name="wq-metrics-test", clock=clock)
    q.add("a")
    q.add("a")
    q.add("b")
    assert sample("workqueue_adds_total", "wq-metrics-test") == 2
    assert sample("workqueue_depth", "wq-metrics-test") == 2
    clock.advance(3)
    await q.get()
    assert sample("workqueue_depth", "wq-metrics-test") == 1
    assert sample("workqueue_queue_duration_seconds_sum", "wq-metrics-test") == 3
    clock.advance(2)
    assert sample("workqueue_unfinished_work_seconds", "wq-metrics-test") == 2
    assert sample("workqueue_longest_running_processor_seconds", "wq-metrics-test") == 2
    q.done("a")
    assert sample("workqueue_work_duration_seconds_count", "wq-metrics-test") == 1
    assert sample("workqueue_unfinished_work_seconds", "wq-metrics-test") == 0
    q.add_rate_limited("c")
    q.add_after("d", 0)
    assert sample("workqueue_retries_total", "wq-metrics-test") == 2


async def test_unnamed_queue_registers_no_series() -> None:
    """A queue without a name stays out of /metrics."""
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=FakeClock())
    q.add("x")
    assert sample("workqueue_adds_total", "") is None
