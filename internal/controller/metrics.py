"""controller-runtime's reconcile metrics, declared once on the operator REGISTRY."""

from __future__ import annotations

from dynamo_operator.internal.controller.settle import Outcome
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Gauge, Histogram

# controller-runtime's buckets: dense below a second, where healthy reconciles land.
_TIME_BUCKETS = (
    0.005,
    0.01,
    0.025,
    0.05,
    *(round(0.1 + 0.05 * i, 2) for i in range(9)),  # 0.1 .. 0.5
    *(round(0.6 + 0.1 * i, 1) for i in range(5)),  # 0.6 .. 1.0
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    3.5,
    4.0,
    4.5,
    5.0,
    6.0,
    7.0,
    8.0,
    9.0,
    10.0,
    15.0,
    20.0,
    25.0,
    30.0,
    40.0,
    50.0,
    60.0,
)

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile",
    "Total number of reconciliations per controller",
    ("controller", "result"),
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total number of reconciliation errors per controller",
    ("controller",),
    registry=REGISTRY,
)
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors",
    "Total number of terminal reconciliation errors per controller",
    ("controller",),
    registry=REGISTRY,
)
# Kept, at zero, for dashboards built on controller-runtime: Python has no panic to recover. A
# KeyboardInterrupt or SystemExit in a reconcile ends the process, as it should.
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics",
    "Total number of reconciliation panics per controller",
    ("controller",),
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconciliation per controller",
    ("controller",),
    buckets=_TIME_BUCKETS,
    registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers",
    "Number of currently used workers per controller",
    ("controller",),
    registry=REGISTRY,
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Maximum number of concurrent reconciles per controller",
    ("controller",),
    registry=REGISTRY,
)

HOT_LOOP_KEYS = Counter(
    "controller_hot_loop_keys",
    "Keys reconciled at least the hot-loop limit of times within one window, per controller"
    " (each key counted once per window): a controller fighting itself",
    ("controller",),
    registry=REGISTRY,
)

RECONCILE_TIMEOUTS = Counter(
    "controller_reconcile_timeouts",
    "Reconciles cancelled for outliving the controller's reconcile timeout (counted as errors too)",
    ("controller",),
    registry=REGISTRY,
)


def init_metrics(controller: str, *, max_concurrent_reconciles: int) -> None:
    """Create every series of `controller` at zero, so rate() works from the first scrape."""
    for outcome in Outcome:
        RECONCILE_TOTAL.labels(controller, outcome.value)
    counters = (
        RECONCILE_ERRORS,
        TERMINAL_RECONCILE_ERRORS,
        RECONCILE_PANICS,
        RECONCILE_TIMEOUTS,
        HOT_LOOP_KEYS,
    )
    for counter in counters:
        counter.labels(controller)
    RECONCILE_TIME.labels(controller)
    ACTIVE_WORKERS.labels(controller).set(0)
    MAX_CONCURRENT_RECONCILES.labels(controller).set(max_concurrent_reconciles)
