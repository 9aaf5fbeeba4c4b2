"""Queue metrics behind a hooks interface, so `queue.py` never sees Prometheus.

An unnamed queue gets `NOOP_METRICS`. A named queue reports client-go's series, labelled like
controller-runtime's (`name` and `controller` both carry the queue name), on the operator REGISTRY.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol

from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.workqueue.clock import Clock
from prometheus_client import Counter, Gauge, Histogram


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
_DURATION_BUCKETS = tuple(10.0**exp for exp in range(-8, 4))
_LABELS = ("name", "controller")

DEPTH = Gauge("workqueue_depth", "Current depth of the workqueue.", _LABELS, registry=REGISTRY)
ADDS = Counter("workqueue_adds", "Total number of adds handled by the workqueue.", _LABELS, registry=REGISTRY)
QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long in seconds an item stays in the workqueue before being requested.",
    _LABELS,
    buckets=_DURATION_BUCKETS,
    registry=REGISTRY,
)
WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long in seconds processing an item from the workqueue takes.",
    _LABELS,
    buckets=_DURATION_BUCKETS,
    registry=REGISTRY,
)
UNFINISHED_WORK = Gauge(
    "workqueue_unfinished_work_seconds",
    "Seconds of work in progress not yet observed by work_duration; large values mean stuck threads.",
    _LABELS,
    registry=REGISTRY,
)
LONGEST_RUNNING = Gauge(
    "workqueue_longest_running_processor_seconds",
    "Seconds the longest running processor of the workqueue has been running.",
    _LABELS,
    registry=REGISTRY,
)
RETRIES = Counter(
    "workqueue_retries", "Total number of retries handled by the workqueue.", _LABELS, registry=REGISTRY
)


class PrometheusQueueMetrics:
    """client-go's queue metrics for one named queue.

    The two in-flight gauges are computed at scrape time from the start times kept here, instead of
    by client-go's 500 ms ticker: no background task, and the value is never stale.
    """

    def __init__(self, name: str, *, clock: Clock) -> None:
        self._clock = clock
        labels = (name, name)
        self._depth = DEPTH.labels(*labels)
        self._adds = ADDS.labels(*labels)
        self._queue_duration = QUEUE_DURATION.labels(*labels)
        self._work_duration = WORK_DURATION.labels(*labels)
        self._retries = RETRIES.labels(*labels)
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}
        UNFINISHED_WORK.labels(*labels).set_function(self._unfinished_work)
        LONGEST_RUNNING.labels(*labels).set_function(self._longest_running)
        self._depth.set(0)

    def add(self, key: Hashable) -> None:
        self._adds.inc()
        self._depth.inc()
        # The first add counts: queue duration is measured from when the work was first wanted.
        self._added_at.setdefault(key, self._clock.now())

    def get(self, key: Hashable) -> None:
        now = self._clock.now()
        self._depth.dec()
        if (added := self._added_at.pop(key, None)) is not None:
            self._queue_duration.observe(now - added)
        self._started_at[key] = now

    def done(self, key: Hashable) -> None:
        if (started := self._started_at.pop(key, None)) is not None:
            self._work_duration.observe(self._clock.now() - started)

    def retry(self) -> None:
        self._retries.inc()

    def _unfinished_work(self) -> float:
        now = self._clock.now()
        return sum(now - started for started in self._started_at.values())

    def _longest_running(self) -> float:
        if not self._started_at:
            return 0.0
        return self._clock.now() - min(self._started_at.values())


def queue_metrics(name: str | None, *, clock: Clock) -> QueueMetrics:
    """Prometheus hooks for a named queue, no-ops for an unnamed one."""
    return PrometheusQueueMetrics(name, clock=clock) if name else NOOP_METRICS
