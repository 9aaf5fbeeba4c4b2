"""A graph reconciled again with nothing generation reads changed (a component reported progress) is
judged from its children in the cache, without generating them again (issue #13: a graph is
reconciled four to five times on its way to Ready). Its spec, labels, annotations, a child not as the
last sync left it, or one to prune bring generation and the full sync back.

Against in-memory fakes (pure decision logic); rollouts, restarts and PVCs on a real API server are
test/integration's graph tests, which pass through this path.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
from dynamo_operator.controllers.dynamographdeployment import reconciler as dgd_reconciler
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.dynamo.context import GenContext
from unit.apply.fakes import FakeCache, FakeClient, FakeRecorder

Obj = dict[str, Any]
KEY = "ns/g"
FRONTEND = (kinds.DCD, "ns/g-frontend")
VERSIONS = itertools.count(1)


def graph(generation: int = 1, image: str = "registry.example/f:1") -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "uid": "u-g",
            "generation": generation,
            "resourceVersion": str(next(VERSIONS)),
            "creationTimestamp": "2026-11-22T08:00:00Z",
        },
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "extraPodSpec": {"mainContainer": {"image": image}},
                }
            },
        },
    }


class LandingClient(FakeClient):
    """Writes land in the cache at once, as the API server keeps them (UID, new resourceVersion)."""

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = "", force: bool = False
    ) -> Obj:
        await super().apply(resource, obj, field_manager=field_manager, force=force)
        stored = copy.deepcopy(obj)
        stored["metadata"].update(uid=f"uid-{obj['metadata']['name']}", resourceVersion=str(next(VERSIONS)))
        self.cache.objects[(resource, f"ns/{obj['metadata']['name']}")] = stored
        return stored

    async def patch(self, resource: Resource, name: str, body: Any, **options: Any) -> Obj:
        await super().patch(resource, name, body)
        key = (resource, f"ns/{name}")
        obj = copy.deepcopy(self.cache.objects[key])
        if options.get("subresource") == "status":
            obj["status"] = {**(obj.get("status") or {}), **body["status"]}
        else:
            annotations = obj["metadata"].setdefault("annotations", {})
            annotations.update(body["metadata"]["annotations"])
        obj["metadata"]["resourceVersion"] = str(next(VERSIONS))
        self.cache.objects[key] = obj
        return obj


class World:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cache = FakeCache()
        self.cache.current.update({kinds.DGD, kinds.DCD})
        self.cache.objects[(kinds.DGD, KEY)] = graph()
        self.client = LandingClient(self.cache)
        self.generated = 0
        real = dgd_reconciler.dcd_children

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.generated += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(dgd_reconciler, "dcd_children", counted)
        self.reconciler = DynamoGraphDeploymentReconciler(
            client=self.client,
            cache=self.cache,
            recorder=FakeRecorder(),
            gen_context=lambda ns: GenContext(namespace=ns),
        )

    async def reconcile(self) -> list[tuple[str, str]]:
        self.client.calls.clear()
        await self.reconciler.reconcile(KEY)
        return self.client.calls

    def dgd(self) -> Obj:
        return self.cache.objects[(kinds.DGD, KEY)]

    def edit(self, key: tuple[Resource, str], change: Callable[[Obj], object]) -> None:
        """Someone else changed an object: a new resourceVersion."""
        obj = copy.deepcopy(self.cache.objects[key])
        change(obj)
        obj["metadata"]["resourceVersion"] = str(next(VERSIONS))
        self.cache.objects[key] = obj


def applies(calls: list[tuple[str, str]]) -> list[str]:
    return [name for verb, name in calls if verb == "apply"]


async def settled(monkeypatch: pytest.MonkeyPatch) -> World:
    """A graph whose children exist and whose own annotations are written: nothing left to write."""
    world = World(monkeypatch)
    assert "g-frontend" in applies(await world.reconcile())
    assert applies(await world.reconcile()) == []  # its annotations changed: generated once more
    world.generated = 0
    return world


async def test_component_progress_is_judged_without_generating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    world.edit(
        FRONTEND, lambda dcd: dcd.update(status={"conditions": [{"type": "Available", "status": "False"}]})
    )
    assert applies(await world.reconcile()) == []
    world.edit(
        FRONTEND, lambda dcd: dcd.update(status={"conditions": [{"type": "Available", "status": "True"}]})
    )
    assert applies(await world.reconcile()) == []
    assert world.generated == 0


async def test_a_spec_change_generates_and_writes_the_new_component(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    world.cache.objects[(kinds.DGD, KEY)] = {
        **graph(generation=2, image="registry.example/f:2"),
        "metadata": {**world.dgd()["metadata"], "generation": 2},
    }
    assert "g-frontend" in applies(await world.reconcile())
    assert world.generated == 1
    spec = world.cache.objects[FRONTEND]["spec"]
    assert spec["extraPodSpec"]["mainContainer"]["image"] == "registry.example/f:2"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda dgd: dgd["metadata"].update(labels={"team": "a"}), id="labels"),
        pytest.param(
            lambda dgd: dgd["metadata"]["annotations"].update({"example.com/note": "x"}), id="annotations"
        ),
    ],
)
async def test_a_metadata_change_generates_again(monkeypatch: pytest.MonkeyPatch, change: Any) -> None:
    world = await settled(monkeypatch)
    world.edit((kinds.DGD, KEY), change)
    await world.reconcile()
    assert world.generated == 1


async def test_a_component_deleted_is_created_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    del world.cache.objects[FRONTEND]
    assert "g-frontend" in applies(await world.reconcile())
    assert FRONTEND in world.cache.objects


async def test_a_component_scaled_by_hand_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    world.edit(FRONTEND, lambda dcd: dcd["spec"].update(replicas=4))
    assert "g-frontend" in applies(await world.reconcile())
    assert world.cache.objects[FRONTEND]["spec"]["replicas"] == 1


async def test_a_component_no_longer_desired_is_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    stale = copy.deepcopy(world.cache.objects[FRONTEND])
    stale["metadata"].update(name="g-old", uid="uid-old")
    world.cache.objects[(kinds.DCD, "ns/g-old")] = stale
    assert ("delete", "g-old") in await world.reconcile()
