"""Queue metrics behind a hooks interface, so `queue.py` never sees Prometheus.

An unnamed queue gets `NOOP_METRICS`. A named queue reports client-go's series, labelled like
controller-runtime's (`name` and `controller` both carry the queue name), on the operator REGISTRY.

The hot path only bumps plain integers (the event loop is single-threaded, so no locks); one
collector turns them into Prometheus families at scrape time. prometheus_client's own metric
objects take a lock per update and made the queue about four times slower.
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterator
from typing import Protocol

from dynamo_operator.internal.clock import Clock
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


class QueueMetrics(Protocol):
    """Hooks the queue layers call; each call happens with the queue's state already updated."""

    def add(self, key: Hashable) -> None: ...  # a non-deduplicated add (including a parked one)
    def get(self, key: Hashable) -> None: ...  # key handed to a worker
    def done(self, key: Hashable) -> None: ...  # worker finished with key
    def retry(self) -> None: ...  # every add_after, as client-go counts it


class _NoopMetrics:
    def add(self, key: Hashable) -> None:
        pass

    def get(self, key: Hashable) -> None:
        pass

    def done(self, key: Hashable) -> None:
        pass

    def retry(self) -> None:
        pass


NOOP_METRICS: QueueMetrics = _NoopMetrics()

# client-go's buckets: 10 ns to 1000 s, one per decade.
DURATION_BUCKETS = tuple(10.0**exp for exp in range(-8, 4))


class _Histogram:
    """Per-bucket counts (not cumulative), sum and count; `observe` is one bisect."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(DURATION_BUCKETS) + 1)  # last slot: above the largest bound
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(DURATION_BUCKETS, value)] += 1
        self.sum += value

    def buckets(self) -> list[tuple[str, float]]:
        out, running = [], 0
        for bound, count in zip((*DURATION_BUCKETS, float("inf")), self.counts, strict=True):
            running += count
            out.append(("+Inf" if bound == float("inf") else repr(bound), float(running)))
        return out


class PrometheusQueueMetrics:
    """client-go's queue metrics for one named queue.

    Depth counts +1 per non-deduplicated add (parked ones included) and -1 per get. The two
    in-flight gauges are computed at scrape time from the start times kept here, instead of by
    client-go's 500 ms ticker: no background task, and the value is never stale.
    """

    def __init__(self, name: str, *, clock: Clock) -> None:
        self.name = name
        self.clock = clock
        self.depth = 0
        self.adds = 0
        self.retries = 0
        self.queue_duration = _Histogram()
        self.work_duration = _Histogram()
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}

    def add(self, key: Hashable) -> None:
        self.adds += 1
        self.depth += 1
        # The first add counts: queue duration is measured from when the work was first wanted.
        if key not in self._added_at:
            self._added_at[key] = self.clock.now()

    def get(self, key: Hashable) -> None:
        now = self.clock.now()
        self.depth -= 1
        if (added := self._added_at.pop(key, None)) is not None:
            self.queue_duration.observe(now - added)
        self._started_at[key] = now

    def done(self, key: Hashable) -> None:
        if (started := self._started_at.pop(key, None)) is not None:
            self.work_duration.observe(self.clock.now() - started)

    def retry(self) -> None:
        self.retries += 1

    def unfinished_work(self) -> float:
        now = self.clock.now()
        return sum(now - started for started in self._started_at.values())

    def longest_running(self) -> float:
        if not self._started_at:
            return 0.0
        return self.clock.now() - min(self._started_at.values())


class _WorkqueueCollector(Collector):
    """Exposes every named queue's numbers in client-go's metric families."""

    def __init__(self) -> None:
        self.queues: dict[str, PrometheusQueueMetrics] = {}

    def collect(self) -> Iterator[Metric]:
        labels = ["name", "controller"]
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of the workqueue.", labels=labels)
        adds = CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by the workqueue.", labels=labels
        )
        queue_duration = HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in the workqueue before being requested.",
            labels=labels,
        )
        work_duration = HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from the workqueue takes.",
            labels=labels,
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers.",
            labels=labels,
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "Seconds the longest running processor of the workqueue has been running.",
            labels=labels,
        )
        retries = CounterMetricFamily(
            "workqueue_retries", "Total number of retries handled by the workqueue.", labels=labels
        )
        for name, q in sorted(self.queues.items()):
            values = [name, name]
            depth.add_metric(values, q.depth)
            adds.add_metric(values, q.adds)
            queue_duration.add_metric(values, q.queue_duration.buckets(), q.queue_duration.sum)
            work_duration.add_metric(values, q.work_duration.buckets(), q.work_duration.sum)
            unfinished.add_metric(values, q.unfinished_work())
            longest.add_metric(values, q.longest_running())
            retries.add_metric(values, q.retries)
        yield from (depth, adds, queue_duration, work_duration, unfinished, longest, retries)


_COLLECTOR = _WorkqueueCollector()
REGISTRY.register(_COLLECTOR)


def queue_metrics(name: str | None, *, clock: Clock) -> QueueMetrics:
    """Prometheus hooks for a named queue, no-ops for an unnamed one.

    Names are unique per process in production (one queue per controller); a later queue with the
    same name (tests, a re-created controller) takes over the series and starts them afresh.
    """
    if not name:
        return NOOP_METRICS
    metrics = _COLLECTOR.queues[name] = PrometheusQueueMetrics(name, clock=clock)
    return metrics
