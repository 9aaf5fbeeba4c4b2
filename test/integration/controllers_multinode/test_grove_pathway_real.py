"""Our Grove pathway end to end with Grove (its stand-in, and its real operator when GROVE_OPERATOR is
set: the `grove` fixture, see conftest.py): a graph becomes one
PodCliqueSet, Grove makes its PodCliques and pods, kwok runs them, Grove reports them ready, and the
graph's status, read back from Grove's objects, says Ready. Scaling goes through a PodClique's scale
subresource and Grove adds the pod. No status here is written by a test."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from integration.controllers_multinode.multinode_testlib import GroveBackend, apply, wait_graph
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.addons("grove")]

TIMEOUT = 180.0


async def ready_pods(api: Client, ns: str) -> list[dict[str, Any]]:
    pods = await api.list(kinds.POD, namespace=ns)
    return [
        p
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in p["status"].get("conditions") or ()
        )
    ]


async def test_a_graph_runs_through_grove_and_reports_ready_from_grove(
    api: Client,
    operator: RunningOperator,
    grove: GroveBackend,
    short_ns: str,
) -> None:
    ns = short_ns
    await apply(api, two_service_graph("g", ns))
    dgd = await wait_graph(api, ns, "g")
    assert set(dgd["status"]["services"]) == {"Frontend", "Worker"}
    assert await api.get(kinds.POD_CLIQUE_SET, "g", namespace=ns)
    assert await api.list(kinds.DCD, namespace=ns) == []
    assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []
    assert len(await ready_pods(api, ns)) == 2


async def test_scaling_a_service_on_grove_resizes_its_podclique(
    api: Client,
    operator: RunningOperator,
    grove: GroveBackend,
    short_ns: str,
) -> None:
    ns = short_ns
    await apply(api, two_service_graph("g", ns))
    await wait_graph(api, ns, "g")
    await apply(api, two_service_graph("g", ns, worker_replicas=2))
    clique = await eventually(
        lambda: api.get(kinds.POD_CLIQUE, "g-0-worker", namespace=ns),
        until=lambda c: (c.get("spec") or {}).get("replicas") == 2,
        timeout=TIMEOUT,
    )
    assert clique["spec"]["replicas"] == 2
    pods = await eventually(lambda: ready_pods(api, ns), until=lambda ps: len(ps) == 3, timeout=TIMEOUT)
    assert len(pods) == 3
    await wait_graph(api, ns, "g")  # Ready again once Grove reports the second worker ready
