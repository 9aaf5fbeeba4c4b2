"""Upstream's per-reconcile `dynamo_operator_*` metrics, with its names, types, labels and buckets, so
its Grafana dashboard and alerts read this operator unchanged: duration, total and errors per resource
kind, namespace and result (`success`, `error` or `requeue`; errors by upstream's categories), recorded
by `ObservedReconciler` around each kind's reconciler (`builder.complete(observed(reconciler, KIND))`).

The webhook metrics are declared for completeness: this operator has no admission webhook (the CRD
schema and CEL refuse bad input), so they never get a series. Labels are upstream's and nothing more:
no object name, so series grow with namespaces and kinds, never with graphs. The resource counts are
the wiring's (operator/operator_metrics.py): they read Dynamo's status conventions.
"""

from __future__ import annotations

from typing import Final

from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, split_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Histogram

_RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_WEBHOOK_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

RECONCILE_DURATION = Histogram(
    "dynamo_operator_reconcile_duration_seconds",
    "Seconds one reconcile took, by kind, namespace and outcome",
    ("resource_type", "namespace", "result"),
    buckets=_RECONCILE_BUCKETS,
    registry=REGISTRY,
)
RECONCILE_TOTAL = Counter(
    "dynamo_operator_reconcile",
    "Reconciles run, by kind, namespace and outcome",
    ("resource_type", "namespace", "result"),
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "dynamo_operator_reconcile_errors",
    "Reconciles that failed, by kind, namespace and error category",
    ("resource_type", "namespace", "error_type"),
    registry=REGISTRY,
)
WEBHOOK_DURATION = Histogram(
    "dynamo_operator_webhook_duration_seconds",
    "Seconds an admission webhook call took (no webhook is served here: always empty)",
    ("resource_type", "operation"),
    buckets=_WEBHOOK_BUCKETS,
    registry=REGISTRY,
)
WEBHOOK_REQUESTS = Counter(
    "dynamo_operator_webhook_requests",
    "Admission webhook calls (no webhook is served here: always empty)",
    ("resource_type", "operation", "result"),
    registry=REGISTRY,
)
WEBHOOK_DENIALS = Counter(
    "dynamo_operator_webhook_denials",
    "Admission webhook denials (no webhook is served here: always empty)",
    ("resource_type", "operation", "reason"),
    registry=REGISTRY,
)

RESULT_SUCCESS: Final = "success"
RESULT_ERROR: Final = "error"
RESULT_REQUEUE: Final = "requeue"


def error_type(err: BaseException) -> str:
    """Upstream's error categories (Kubernetes status reasons), `internal` for anything else."""
    match err:
        case errors.NotFound():
            return "not_found"
        case errors.AlreadyExists():
            return "already_exists"
        case errors.Conflict():
            return "conflict"
        case errors.Invalid():
            return "validation"
        case errors.BadRequest():
            return "bad_request"
        case errors.Unauthorized():
            return "unauthorized"
        case errors.Forbidden():
            return "forbidden"
        case errors.TooManyRequests():
            return "rate_limited"
        case errors.ServerError(reason="ServerTimeout"):
            return "server_timeout"
        case errors.ServerError(code=504) | errors.ServerError(reason="Timeout") | TimeoutError():
            return "timeout"
        case errors.ServerError(code=503):
            return "unavailable"
        case _:
            return "internal"


class ObservedReconciler:
    """Wraps one kind's reconciler and records upstream's reconcile metrics for each call."""

    def __init__(self, inner: Reconciler, resource_type: str, *, clock: Clock | None = None) -> None:
        self._inner, self._type = inner, resource_type
        self._clock: Clock = clock or RealClock()  # its monotonic `now`: durations

    async def reconcile(self, key: str) -> Result:
        namespace = split_key(key)[0] or ""
        start = self._clock.now()
        try:
            result = await self._inner.reconcile(key)
        except Exception as err:
            RECONCILE_ERRORS.labels(self._type, namespace, error_type(err)).inc()
            self._observe(namespace, RESULT_ERROR, start)
            raise
        self._observe(namespace, RESULT_REQUEUE if result.requeue_after else RESULT_SUCCESS, start)
        return result

    def _observe(self, namespace: str, result: str, start: float) -> None:
        RECONCILE_DURATION.labels(self._type, namespace, result).observe(max(self._clock.now() - start, 0.0))
        RECONCILE_TOTAL.labels(self._type, namespace, result).inc()


def observed(reconciler: Reconciler, resource: Resource) -> Reconciler:
    """`reconciler` recording upstream's metrics under its kind (e.g. `DynamoGraphDeployment`)."""
    return ObservedReconciler(reconciler, resource.kind)
