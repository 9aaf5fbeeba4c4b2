"""Upstream's `dynamo_operator_*` metrics: the same names, types and labels as upstream's
deploy/operator/internal/observability/metrics.go, recorded per reconcile and counted from the cache."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.cache import InformerNotRegistered
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.observability.reconcile_metrics import ObservedReconciler, error_type, observed
from dynamo_operator.operator_metrics import (
    ResourceCounter,
    adapter_state,
    component_state,
    graph_state,
    model_state,
)
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

# Taken from upstream's metrics.go: (name as scraped, type, label names).
UPSTREAM = [
    ("dynamo_operator_reconcile_duration_seconds", "histogram", ("resource_type", "namespace", "result")),
    ("dynamo_operator_reconcile_total", "counter", ("resource_type", "namespace", "result")),
    ("dynamo_operator_reconcile_errors_total", "counter", ("resource_type", "namespace", "error_type")),
    ("dynamo_operator_resources_total", "gauge", ("resource_type", "namespace", "status")),
    ("dynamo_operator_webhook_duration_seconds", "histogram", ("resource_type", "operation")),
    ("dynamo_operator_webhook_requests_total", "counter", ("resource_type", "operation", "result")),
    ("dynamo_operator_webhook_denials_total", "counter", ("resource_type", "operation", "reason")),
]
UPSTREAM_RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]


def scrape() -> dict[str, Any]:
    """The registry as Prometheus scrapes it, by metric family name (counters without `_total`)."""
    return {f.name: f for f in text_string_to_metric_families(generate_latest(REGISTRY).decode())}


def sample_value(name: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


@pytest.mark.parametrize(("name", "mtype", "labels"), [pytest.param(*row, id=row[0]) for row in UPSTREAM])
def test_metric_declared_as_upstream(name: str, mtype: str, labels: tuple[str, ...]) -> None:
    """Each metric is exposed under upstream's name and type; its label names are upstream's exactly."""
    family = name.removesuffix("_total") if mtype == "counter" else name
    found = {f.name: f for f in REGISTRY.collect()}
    metric = found[family]
    assert metric.type == mtype
    collector = REGISTRY._names_to_collectors[name if mtype != "histogram" else f"{name}_bucket"]
    assert tuple(collector._labelnames) == labels


def test_reconcile_histogram_uses_upstreams_buckets() -> None:
    collector = REGISTRY._names_to_collectors["dynamo_operator_reconcile_duration_seconds_bucket"]
    assert [float(b) for b in collector._upper_bounds[:-1]] == UPSTREAM_RECONCILE_BUCKETS


class Fixed:
    """A reconciler that returns or raises what it is told."""

    def __init__(self, outcome: Result | Exception) -> None:
        self.outcome = outcome

    async def reconcile(self, key: str) -> Result:
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


@pytest.mark.parametrize(
    ("outcome", "result"),
    [
        pytest.param(Result(), "success", id="success"),
        pytest.param(Result(requeue_after=5.0), "requeue", id="requeue-after"),
        pytest.param(errors.Conflict(409, "Conflict"), "error", id="error"),
        pytest.param(TerminalError("bad spec"), "error", id="terminal-error"),
    ],
)
async def test_each_reconcile_is_counted_and_timed_by_result(
    outcome: Result | Exception, result: str
) -> None:
    labels = {
        "resource_type": "DynamoGraphDeployment",
        "namespace": f"ns-{result}-{id(outcome)}",
        "result": result,
    }
    wrapped = ObservedReconciler(Fixed(outcome), "DynamoGraphDeployment")
    try:
        await wrapped.reconcile(f"{labels['namespace']}/g")
    except Exception as err:
        assert err is outcome  # re-raised unchanged, for the controller's own accounting
    assert sample_value("dynamo_operator_reconcile_total", **labels) == 1
    assert sample_value("dynamo_operator_reconcile_duration_seconds_count", **labels) == 1


async def test_an_error_is_counted_by_its_category() -> None:
    wrapped = ObservedReconciler(Fixed(errors.Forbidden(403, "Forbidden")), "DynamoModel")
    with pytest.raises(errors.Forbidden):
        await wrapped.reconcile("ns-forbidden/m")
    labels = {"resource_type": "DynamoModel", "namespace": "ns-forbidden", "error_type": "forbidden"}
    assert sample_value("dynamo_operator_reconcile_errors_total", **labels) == 1


async def test_cluster_scoped_keys_have_an_empty_namespace_label() -> None:
    await ObservedReconciler(Fixed(Result()), "Scoped").reconcile("cluster-wide-name")
    labels = {"resource_type": "Scoped", "namespace": "", "result": "success"}
    assert sample_value("dynamo_operator_reconcile_total", **labels) == 1


async def test_observed_records_under_the_kind_of_the_resource() -> None:
    await observed(Fixed(Result()), kinds.DGDSA).reconcile("ns-kind/a")
    labels = {
        "resource_type": "DynamoGraphDeploymentScalingAdapter",
        "namespace": "ns-kind",
        "result": "success",
    }
    assert sample_value("dynamo_operator_reconcile_total", **labels) == 1


@pytest.mark.parametrize(
    ("err", "category"),
    [
        pytest.param(errors.NotFound(404), "not_found", id="not-found"),
        pytest.param(errors.AlreadyExists(409, "AlreadyExists"), "already_exists", id="already-exists"),
        pytest.param(errors.Conflict(409, "Conflict"), "conflict", id="conflict"),
        pytest.param(errors.Invalid(422, "Invalid"), "validation", id="invalid"),
        pytest.param(errors.BadRequest(400), "bad_request", id="bad-request"),
        pytest.param(errors.Unauthorized(401), "unauthorized", id="unauthorized"),
        pytest.param(errors.Forbidden(403), "forbidden", id="forbidden"),
        pytest.param(errors.TooManyRequests(429), "rate_limited", id="throttled"),
        pytest.param(errors.ServerError(504, "Timeout"), "timeout", id="gateway-timeout"),
        pytest.param(errors.ServerError(500, "ServerTimeout"), "server_timeout", id="server-timeout"),
        pytest.param(errors.ServerError(503, "ServiceUnavailable"), "unavailable", id="unavailable"),
        pytest.param(errors.ServerError(500, "InternalError"), "internal", id="server-error"),
        pytest.param(TerminalError("spec"), "internal", id="terminal"),
        pytest.param(ValueError("bug"), "internal", id="anything-else"),
    ],
)
def test_error_type(err: Exception, category: str) -> None:
    assert error_type(err) == category


# --- resource counts ------------------------------------------------------------------------------


def obj(namespace: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": "x"}, "status": status}


AVAILABLE = [{"type": "Available", "status": "True"}]


@pytest.mark.parametrize(
    ("state", "value", "expected"),
    [
        pytest.param(graph_state, obj("n", state="successful"), "successful", id="graph-successful"),
        pytest.param(graph_state, obj("n"), "", id="graph-before-first-status"),
        pytest.param(component_state, obj("n", conditions=AVAILABLE), "ready", id="component-available"),
        pytest.param(component_state, obj("n"), "not_ready", id="component-not-available"),
        pytest.param(
            model_state, obj("n", totalEndpoints=2, readyEndpoints=2), "ready", id="model-all-ready"
        ),
        pytest.param(model_state, obj("n", totalEndpoints=2, readyEndpoints=1), "not_ready", id="model-some"),
        pytest.param(model_state, obj("n"), "not_ready", id="model-no-endpoints"),
        pytest.param(adapter_state, obj("n", selector="a=b", replicas=1), "ready", id="adapter-ready"),
        pytest.param(adapter_state, obj("n", selector="a=b", replicas=0), "not_ready", id="adapter-zero"),
    ],
)
def test_state_of_each_kind(state: Any, value: dict[str, Any], expected: str) -> None:
    assert state(value) == expected


class FakeCache:
    def __init__(self, objects: dict[Resource, list[dict[str, Any]]]) -> None:
        self.objects = objects

    def list(self, resource: Resource) -> list[dict[str, Any]]:
        if resource not in self.objects:
            raise InformerNotRegistered(resource.plural)
        return self.objects[resource]


def test_counts_by_kind_namespace_and_state_and_drops_stale_series() -> None:
    cache = FakeCache(
        {
            kinds.DGD: [
                obj("cnt-a", state="successful"),
                obj("cnt-a", state="successful"),
                obj("cnt-b", state="pending"),
            ],
            kinds.DCD: [obj("cnt-a", conditions=AVAILABLE)],
        }
    )
    counter = ResourceCounter(cache)
    counter.update()
    gauge = "dynamo_operator_resources_total"
    dgd = {"resource_type": "DynamoGraphDeployment"}
    assert sample_value(gauge, **dgd, namespace="cnt-a", status="successful") == 2
    assert sample_value(gauge, **dgd, namespace="cnt-b", status="pending") == 1
    assert (
        sample_value(gauge, resource_type="DynamoComponentDeployment", namespace="cnt-a", status="ready") == 1
    )
    cache.objects[kinds.DGD] = [obj("cnt-a", state="successful")]
    counter.update()
    assert sample_value(gauge, **dgd, namespace="cnt-a", status="successful") == 1
    assert REGISTRY.get_sample_value(gauge, {**dgd, "namespace": "cnt-b", "status": "pending"}) is None


def test_scrape_parses_with_the_upstream_family_names() -> None:
    """What Prometheus reads: every upstream family present (counters' families drop `_total`)."""
    families = scrape()
    for name, mtype, _ in UPSTREAM:
        family = name.removesuffix("_total") if mtype == "counter" else name
        assert families[family].type == mtype, name
