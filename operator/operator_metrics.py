"""Upstream's `dynamo_operator_*` metrics, with its names, types, labels and buckets, so its Grafana
dashboard and alerts read this operator unchanged. They sit beside controller-runtime's metrics
(internal/controller/metrics.py), on the same registry.

- reconcile duration / total / errors per resource kind, namespace and result, recorded by
  `ObservedReconciler` around each kind's reconciler (result `success`, `error` or `requeue`;
  errors by upstream's categories);
- `dynamo_operator_resources_total`: objects per kind, namespace and state, counted from the cache
  every 30 s by `ResourceCounter` (never from the API server);
- the webhook metrics are declared for completeness: this operator has no admission webhook (the CRD
  schema and CEL refuse bad input), so they never get a series.

Labels are upstream's and nothing more: no object name, so series grow with namespaces and kinds,
never with graphs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

import structlog
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.cache import InformerNotRegistered
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, split_key
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo import conditions
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Gauge, Histogram

log = structlog.get_logger(__name__)

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
RESOURCES_TOTAL = Gauge(
    "dynamo_operator_resources_total",
    "Custom resources in the cache, by kind, namespace and readiness",
    ("resource_type", "namespace", "status"),
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
STATE_READY: Final = "ready"
STATE_NOT_READY: Final = "not_ready"
COUNT_INTERVAL_SECONDS: Final = 30.0
"""Upstream's interval: the gauge is a dashboard's view, not an alerting edge."""


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

    def __init__(
        self, inner: Reconciler, resource_type: str, *, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self._inner, self._type, self._clock = inner, resource_type, clock

    def __getattr__(self, name: str) -> Any:
        # The controller and the optional-ownership wiring read attributes (e.g. `owned`) of the
        # reconciler they were given: the wrapper is transparent to them.
        return getattr(self._inner, name)

    async def reconcile(self, key: str) -> Result:
        namespace = split_key(key)[0] or ""
        start = self._clock()
        try:
            result = await self._inner.reconcile(key)
        except Exception as err:
            RECONCILE_ERRORS.labels(self._type, namespace, error_type(err)).inc()
            self._observe(namespace, RESULT_ERROR, start)
            raise
        self._observe(namespace, RESULT_REQUEUE if result.requeue_after else RESULT_SUCCESS, start)
        return result

    def _observe(self, namespace: str, result: str, start: float) -> None:
        RECONCILE_DURATION.labels(self._type, namespace, result).observe(max(self._clock() - start, 0.0))
        RECONCILE_TOTAL.labels(self._type, namespace, result).inc()


def observed(reconciler: Any, resource: Resource) -> Any:
    """`reconciler` recording upstream's metrics under its kind (e.g. `DynamoGraphDeployment`)."""
    return ObservedReconciler(reconciler, resource.kind)


# --- resource counts -----------------------------------------------------------------------------


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _ready(ok: bool) -> str:
    return STATE_READY if ok else STATE_NOT_READY


def graph_state(obj: Mapping[str, Any]) -> str:
    """A DGD's (and a DGDR's) `status.state`, as upstream reports it ("" before the first status)."""
    return str(_status(obj).get("state") or "")


def component_state(obj: Mapping[str, Any]) -> str:
    return _ready(conditions.is_true(_status(obj).get("conditions"), "Available"))


def model_state(obj: Mapping[str, Any]) -> str:
    total, ready = _status(obj).get("totalEndpoints") or 0, _status(obj).get("readyEndpoints") or 0
    return _ready(bool(total) and ready >= total)


def adapter_state(obj: Mapping[str, Any]) -> str:
    return _ready(bool(_status(obj).get("selector")) and bool(_status(obj).get("replicas")))


STATE_OF: Final[tuple[tuple[Resource, Callable[[Mapping[str, Any]], str]], ...]] = (
    (kinds.DGD, graph_state),
    (kinds.DCD, component_state),
    (kinds.DYNAMO_MODEL, model_state),
    (kinds.DGDR, graph_state),
    (kinds.DGDSA, adapter_state),
)


def count_by_state(
    objects: Iterable[Mapping[str, Any]], state: Callable[[Mapping[str, Any]], str]
) -> dict[tuple[str, str], int]:
    """(namespace, state) → number of objects."""
    out: dict[tuple[str, str], int] = {}
    for obj in objects:
        key = (str((obj.get("metadata") or {}).get("namespace") or ""), state(obj))
        out[key] = out.get(key, 0) + 1
    return out


class CacheLister(Protocol):
    def list(self, resource: Resource) -> list[dict[str, Any]]: ...


class ResourceCounter:
    """Sets `dynamo_operator_resources_total` from the cache, now and every `interval` seconds. Series
    of a (namespace, state) that no longer has objects are removed, so counts never go stale."""

    def __init__(self, cache: CacheLister, *, interval: float = COUNT_INTERVAL_SECONDS) -> None:
        self._cache, self._interval = cache, interval
        self._set: set[tuple[str, str, str]] = set()

    def update(self) -> None:
        seen: set[tuple[str, str, str]] = set()
        for resource, state in STATE_OF:
            try:
                objects = self._cache.list(resource)
            except InformerNotRegistered:
                continue  # this operator does not watch the kind (e.g. a trimmed install)
            for (namespace, status), n in count_by_state(objects, state).items():
                RESOURCES_TOTAL.labels(resource.kind, namespace, status).set(n)
                seen.add((resource.kind, namespace, status))
        for labels in self._set - seen:
            RESOURCES_TOTAL.remove(*labels)
        self._set = seen

    async def run(self) -> None:
        """Count until cancelled."""
        while True:
            try:
                self.update()
            except Exception:  # a bad object must not stop the dashboard's counts for good
                log.exception("counting resources failed")
            await asyncio.sleep(self._interval)
