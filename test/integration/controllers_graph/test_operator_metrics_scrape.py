"""Upstream's `dynamo_operator_*` metrics after real reconciles: what /metrics serves (the registry's
exposition text) carries per-kind, per-namespace series, and their number does not grow with graphs."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

GRAPHS = ("alpha", "beta", "gamma")
UPSTREAM_LABELS = {
    "dynamo_operator_reconcile_total": {"resource_type", "namespace", "result"},
    "dynamo_operator_reconcile_duration_seconds_count": {"resource_type", "namespace", "result"},
    "dynamo_operator_reconcile_errors_total": {"resource_type", "namespace", "error_type"},
    "dynamo_operator_resources_total": {"resource_type", "namespace", "status"},
}


def series(namespace: str) -> list[tuple[str, dict[str, str], float]]:
    """(sample name, labels, value) of every dynamo_operator sample of `namespace`, as scraped."""
    text = generate_latest(REGISTRY).decode()
    out = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name.startswith("dynamo_operator_") and s.labels.get("namespace") == namespace:
                out.append((s.name, dict(s.labels), s.value))
    return out


def ready(dgd: dict[str, Any]) -> bool:
    return (dgd.get("status") or {}).get("state") == "successful"


async def test_reconciles_and_counts_are_scraped_with_upstreams_labels_only(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Three graphs reconcile: reconcile_total counts DGD and DCD reconciles under the namespace with
    upstream's labels and nothing naming a graph; resources_total reports 3 successful DGDs (within
    the counter's 30 s period); the series are bounded by kinds x results, not by graphs."""
    for name in GRAPHS:
        await api.apply(
            kinds.DGD, copy.deepcopy(two_service_graph(name, ns)), field_manager=TEST_FIELD_MANAGER
        )
    for name in GRAPHS:
        await eventually(lambda name=name: api.get(kinds.DGD, name, namespace=ns), until=ready, timeout=120)

    def reconciles(kind: str) -> float:
        return sum(
            v
            for n, labels, v in series(ns)
            if n == "dynamo_operator_reconcile_total" and labels["resource_type"] == kind
        )

    assert reconciles("DynamoGraphDeployment") >= len(GRAPHS)
    assert reconciles("DynamoComponentDeployment") >= 2 * len(GRAPHS)

    def dgd_count() -> float:
        return sum(
            v
            for n, labels, v in series(ns)
            if n == "dynamo_operator_resources_total"
            and labels == {"resource_type": "DynamoGraphDeployment", "namespace": ns, "status": "successful"}
        )

    await eventually(dgd_count, until=lambda n: n == len(GRAPHS), timeout=75, interval=1.0)

    samples = series(ns)
    for name, labels, _ in samples:
        if name in UPSTREAM_LABELS:
            assert set(labels) == UPSTREAM_LABELS[name], (name, labels)
        assert not any(graph in value for value in labels.values() for graph in GRAPHS), labels
    reconcile_series = {
        (labels["resource_type"], labels["result"])
        for n, labels, _ in samples
        if n == "dynamo_operator_reconcile_total"
    }
    assert len(reconcile_series) <= 5 * 3  # five kinds x success/error/requeue, however many graphs
