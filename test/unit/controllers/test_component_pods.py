"""A component that is not ready says why from its pods, which are listed only then (no Pod watch),
and is looked at again while it stays not ready; a ready one lists nothing and is left alone.

The DCD reconciler against in-memory fakes (pure decision logic; the real chain, scheduler included,
is test/integration/controllers_graph/test_graph_not_ready_reasons.py).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

import pytest
from dynamo_operator.controllers.dynamocomponentdeployment import (
    DynamoComponentDeploymentReconciler,
)
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply.pods import pods_labelled
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.model import ListPage
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.status.readiness import (
    FIRST_STATUS_GRACE_SECONDS,
    NOT_READY_RECHECK_MIN_SECONDS,
)
from unit.apply.fakes import FakeCache, FakeClient, FakeRecorder
from unit.controllers.builder_testlib import informers_asked
from unit.controllers.reconcilers_testlib import component_reconciler

Obj = dict[str, Any]

CREATED = "2026-11-22T08:00:00Z"
BORN = datetime.datetime(2026, 11, 22, 8, 0, 0, tzinfo=datetime.UTC).timestamp()
KEY = "ns/g-worker"
UNSCHEDULABLE = '0/4 nodes are available: persistentvolumeclaim "cache" not found.'

NOT_READY = {"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "unavailableReplicas": 2}
READY = {
    "observedGeneration": 1,
    "replicas": 2,
    "updatedReplicas": 2,
    "readyReplicas": 2,
    "availableReplicas": 2,
    "conditions": [{"type": "Available", "status": "True"}],
}


def dcd() -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {
            "name": "g-worker",
            "namespace": "ns",
            "uid": "u-dcd",
            "generation": 1,
            "creationTimestamp": CREATED,
        },
        "spec": {
            "componentType": "worker",
            "replicas": 2,
            "extraPodSpec": {"mainContainer": {"image": "registry.example/worker:1"}},
        },
    }


def unschedulable_pod(name: str) -> Obj:
    return {
        "metadata": {"name": name, "namespace": "ns", "labels": {consts.LABEL_SELECTOR: "g-worker"}},
        "status": {
            "phase": "Pending",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": UNSCHEDULABLE,
                }
            ],
        },
    }


class Client(FakeClient):
    """Keeps what was applied (to seed the cache with) and every status patch's body."""

    def __init__(self, cache: FakeCache) -> None:
        super().__init__(cache)
        self.applied: dict[tuple[Resource, str], Obj] = {}
        self.patches: list[Any] = []

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = "", force: bool = False
    ) -> Obj:
        await super().apply(resource, obj, field_manager=field_manager, force=force)
        # As the API server answers a create: generation 1, no status from the child's controller yet.
        live = {**obj, "metadata": {**obj["metadata"], "generation": 1}}
        self.applied[(resource, object_key(obj))] = live
        return live

    async def patch(self, resource: Resource, name: str, body: Any, **options: Any) -> Obj:
        self.patches.append(body)
        return await super().patch(resource, name, body, **options)


class Pods:
    """A PodLister that counts its calls; raises `error` when given one."""

    def __init__(self, pods: Sequence[Obj] = (), error: Exception | None = None) -> None:
        self.pods, self.error = list(pods), error
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, namespace: str, component: str) -> Sequence[Obj]:
        self.calls.append((namespace, component))
        if self.error is not None:
            raise self.error
        return self.pods


async def component(workload_status: Obj, pods: Pods, *, now: float) -> tuple[Client, Result]:
    """A DCD whose Deployment and Service exist as generated, the Deployment with `workload_status`;
    returns the client and the result of reconciling it once more."""
    cache = FakeCache()
    cache.objects[(kinds.DCD, KEY)] = dcd()
    client = Client(cache)
    client.server[(kinds.DCD, KEY)] = dcd()  # the owner is confirmed before its children are created
    reconciler = component_reconciler(client, cache, pods=pods, clock=FakeClock.at(now))
    await reconciler.reconcile(KEY)  # creates the children; their controllers have not reported yet
    assert pods.calls == []
    for (resource, key), obj in client.applied.items():
        live = dict(obj)
        if resource == kinds.DEPLOYMENT:
            live["status"] = workload_status
        cache.objects[(resource, key)] = live
        cache.current.add(resource)
    client.calls.clear()
    return client, await reconciler.reconcile(KEY)


async def test_a_ready_component_lists_no_pods_and_is_not_requeued() -> None:
    pods = Pods()
    client, result = await component(READY, pods, now=BORN + 60)
    assert pods.calls == []
    assert result == Result()
    assert client.calls == [("patch", "g-worker")]  # the Ready status


async def test_a_not_ready_component_lists_its_pods_says_why_and_is_looked_at_again() -> None:
    pods = Pods([unschedulable_pod("p1"), unschedulable_pod("p2")])
    client, result = await component(NOT_READY, pods, now=BORN + 60)
    assert pods.calls == [("ns", "g-worker")]
    conditions = {c["type"]: c for c in client.patches[-1]["status"]["conditions"]}
    assert conditions["Available"]["reason"] == "PodsUnschedulable"
    assert "2 pods unschedulable" in conditions["Available"]["message"]
    assert result.requeue_after == NOT_READY_RECHECK_MIN_SECONDS


async def test_a_new_component_within_its_grace_lists_no_pods_and_writes_nothing() -> None:
    pods = Pods([unschedulable_pod("p1")])
    client, result = await component(NOT_READY, pods, now=BORN + 1)
    assert pods.calls == []
    assert client.patches == []
    assert result.requeue_after == pytest.approx(FIRST_STATUS_GRACE_SECONDS - 1)


@pytest.mark.parametrize(
    "error",
    [errors.Forbidden(403, "Forbidden"), errors.TransportError("connection reset", sent=True)],
    ids=["refused", "transport"],
)
async def test_pods_that_cannot_be_listed_leave_the_workloads_counts_and_a_recheck(error: Exception) -> None:
    client, result = await component(NOT_READY, Pods(error=error), now=BORN + 60)
    conditions = {c["type"]: c for c in client.patches[-1]["status"]["conditions"]}
    assert conditions["Available"]["status"] == "False"
    assert "0/2 ready" in conditions["Available"]["message"]
    assert result.requeue_after == NOT_READY_RECHECK_MIN_SECONDS


class PodReader:
    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def list_page(self, resource: Resource, **options: Any) -> ListPage:
        self.asked.append({"resource": resource, **options})
        return ListPage(items=[unschedulable_pod("p1")], resource_version="9", continue_token=None)


async def test_the_lister_asks_for_the_components_pods_from_the_watch_cache() -> None:
    reader = PodReader()
    assert [
        p["metadata"]["name"] for p in await pods_labelled(reader, consts.LABEL_SELECTOR)("ns", "g-worker")
    ] == ["p1"]
    assert reader.asked == [
        {
            "resource": kinds.POD,
            "namespace": "ns",
            "label_selector": f"{consts.LABEL_SELECTOR}=g-worker",
            "resource_version": "0",
        }
    ]


def test_the_component_controller_watches_no_pods() -> None:
    """setup() asks the cache for informers of the DCD and its children, never of Pods: the API server
    encodes every pod event for a watcher, and the operator needs pods only for a component that is
    not ready."""
    reconciler = DynamoComponentDeploymentReconciler(
        client=FakeClient(FakeCache()),
        cache=FakeCache(),
        recorder=FakeRecorder(),
        gen_context=lambda ns: GenContext(namespace=ns),
        pods=Pods(),
    )
    asked = [resource for resource, _ in informers_asked("dynamocomponentdeployment", reconciler)]
    assert kinds.DCD in asked and kinds.DEPLOYMENT in asked
    assert kinds.POD not in asked


async def test_a_consistent_lister_reads_past_the_watch_cache() -> None:
    """A drained generation must not miss a pod still running: no resourceVersion, a quorum read."""
    reader = PodReader()
    await pods_labelled(reader, consts.LABEL_SELECTOR, consistent=True)("ns", "g-worker")
    assert reader.asked[0]["resource_version"] is None
