"""Once the API server refused a create because the namespace is being deleted, the graph and
component reconcilers leave that namespace's objects alone: the namespace controller deletes each
child before its owner, and each deletion would otherwise bring the owner back to re-create its
children, one refused request each (30 requests per graph while a namespace of 100 graphs went).

Against in-memory fakes (pure decision logic; the real deletion is
test/integration/controllers_graph/test_graph_namespace_deletion.py).
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import TerminatingNamespaces
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller.result import Result
from unit.apply.fakes import FakeCache, RefusingClient, terminating_namespace
from unit.controllers.reconcilers_testlib import component_reconciler, graph_reconciler

Obj = dict[str, Any]

NOW = 1_800_000_000.0
CREATED = "2026-11-22T08:00:00Z"  # long before NOW
WORKER = {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "registry.example/w:1"}}}


def meta(name: str, uid: str) -> Obj:
    return {"name": name, "namespace": "ns", "uid": uid, "generation": 1, "creationTimestamp": CREATED}


def component() -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": meta("g-worker", "u-dcd"),
        "spec": {**WORKER, "replicas": 1},
    }


def graph() -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta("g", "u-dgd"),
        "spec": {"backendFramework": "vllm", "services": {"W": WORKER}},
    }


def world(resource: Any, obj: Obj) -> tuple[FakeCache, RefusingClient]:
    """The owner in the cache (current, so no live read confirms it) and a client whose every apply
    the API server refuses: the namespace is being deleted."""
    cache = FakeCache()
    cache.objects[(resource, f"ns/{obj['metadata']['name']}")] = obj
    cache.current.add(resource)
    return cache, RefusingClient(cache, terminating_namespace())


async def test_a_component_in_a_namespace_being_deleted_is_left_alone_after_the_first_refusal() -> None:
    cache, client = world(kinds.DCD, component())
    terminating = TerminatingNamespaces(clock=FakeClock.at(NOW))
    reconciler = component_reconciler(client, cache, clock=FakeClock.at(NOW), terminating=terminating)
    assert await reconciler.reconcile("ns/g-worker") == Result()
    refused = len(client.calls)
    assert refused > 0
    for _ in range(3):  # its Deployment deleted, its Service deleted, its pods gone...
        assert await reconciler.reconcile("ns/g-worker") == Result()
    assert len(client.calls) == refused


async def test_a_graph_in_a_namespace_being_deleted_is_left_alone_after_the_first_refusal() -> None:
    cache, client = world(kinds.DGD, graph())
    reconciler = graph_reconciler(client, cache, terminating=TerminatingNamespaces(clock=FakeClock.at(NOW)))
    assert await reconciler.reconcile("ns/g") == Result()
    refused = len(client.calls)
    assert refused > 0
    for _ in range(3):  # each of its components deleted
        assert await reconciler.reconcile("ns/g") == Result()
    assert len(client.calls) == refused


async def test_a_graph_created_after_the_refusal_is_reconciled() -> None:
    """Nothing can be created in a namespace being deleted: a graph created later is in a new
    namespace of the same name, and gets its children."""
    cache, client = world(kinds.DGD, graph())
    terminating = TerminatingNamespaces(clock=FakeClock.at(NOW))
    terminating.refused("ns")
    newer = graph()
    newer["metadata"]["creationTimestamp"] = "2027-01-15T08:00:01Z"  # NOW + 1 s
    cache.objects[(kinds.DGD, "ns/g")] = newer
    reconciler = graph_reconciler(client, cache, terminating=terminating)
    await reconciler.reconcile("ns/g")
    assert client.calls != []
