"""The operator speaks Dynamo's converted kinds in their storage version, v1beta1, so none of its own
requests makes the API server call the conversion webhook (internal/stored_version.py).

Every request the session operator's client opens while a v1beta1 graph is created, becomes Ready, is
scaled and is deleted is recorded by path; the test reads the graph as v1beta1 too.
"""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.stored_version import CONVERTED, older
from testsupport.api import eventually, requests_of
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]


def is_ready(dgd: dict[str, Any]) -> bool:
    status = dgd.get("status") or {}
    return status.get("state") == "successful" and status.get("observedGeneration") == dgd["metadata"].get(
        "generation"
    )


async def gone(api: Client, ns: str) -> bool:
    try:
        await api.get(kinds.DGD, "g", namespace=ns)
    except NotFound:
        return True
    return False


async def test_the_operator_reads_and_writes_only_v1beta1_of_the_kinds_stored_so(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    graph = convert(two_service_graph("g", ns, adapter=True), V1BETA1)
    with requests_of(operator.manager.client) as paths:
        await api.apply(kinds.DGD, graph, field_manager=TEST_FIELD_MANAGER)
        await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=is_ready, timeout=120)
        worker = next(c for c in graph["spec"]["components"] if c["name"] == "Worker")
        worker["replicas"] = 2
        await api.apply(kinds.DGD, graph, field_manager=TEST_FIELD_MANAGER)
        await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=is_ready, timeout=120)
        await api.delete(kinds.DGD, "g", namespace=ns)
        await eventually(lambda: gone(api, ns), timeout=60)

    converted = {f"/{r.plural}" for r in CONVERTED}
    ours = [p for p in paths if p.startswith("/apis/nvidia.com/") and any(c in p for c in converted)]
    assert any(p.startswith("/apis/nvidia.com/v1beta1/") for p in ours), paths
    # The graph's adapter too (read as stored, without a codec): created, watched, its status written.
    assert any(f"/{kinds.DGDSA.plural}" in p for p in ours), paths
    assert [p for p in ours if not p.startswith("/apis/nvidia.com/v1beta1/")] == []


async def test_a_v1beta1_graph_reads_back_through_v1alpha1_as_generation_saw_it(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The operator caches the graph as stored, and the v1alpha1 view a user's old tooling reads
    (through the webhook) is the one generation builds from (graph/lowering.py)."""
    graph = convert(two_service_graph("g", ns), V1BETA1)
    await api.apply(kinds.DGD, graph, field_manager=TEST_FIELD_MANAGER)
    await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=is_ready, timeout=120)
    through_webhook = await api.get(older(kinds.DGD), "g", namespace=ns)
    cached = operator.manager.cache.get(kinds.DGD, f"{ns}/g")
    assert cached is not None
    assert cached["apiVersion"] == kinds.DGD.api_version == V1BETA1
    assert through_webhook["apiVersion"] == V1ALPHA1
    assert lowered_graph(cached)["spec"] == through_webhook["spec"]
