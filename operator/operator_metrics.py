"""Upstream's `dynamo_operator_resources_total`: objects per kind, namespace and state, counted from
the cache every 30 s by `ResourceCounter` (never from the API server), with upstream's name and labels
(no object name: series grow with namespaces and kinds, never with graphs). The per-reconcile metrics
are internal/observability/reconcile_metrics.py, wrapped around every reconciler by the registration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Protocol

import structlog
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.cache import InformerNotRegistered
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Gauge

log = structlog.get_logger(__name__)

RESOURCES_TOTAL = Gauge(
    "dynamo_operator_resources_total",
    "Custom resources in the cache, by kind, namespace and readiness",
    ("resource_type", "namespace", "status"),
    registry=REGISTRY,
)
STATE_READY: Final = "ready"
STATE_NOT_READY: Final = "not_ready"
COUNT_INTERVAL_SECONDS: Final = 30.0
"""Upstream's interval: the gauge is a dashboard's view, not an alerting edge."""


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
