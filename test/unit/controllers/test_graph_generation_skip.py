"""A graph reconciled again with nothing generation reads changed (a component reported progress) is
judged from its children in the cache, without generating them again (issue #13: a graph is
reconciled four to five times on its way to Ready). Its spec, labels, annotations, a child not as the
last sync left it, or one to prune bring generation and the full sync back.

Against in-memory fakes (pure decision logic); rollouts, restarts and PVCs on a real API server are
test/integration's graph tests, which pass through this path.
"""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeployment import reconciler as dgd_reconciler
from dynamo_operator.internal import kinds
from testsupport.graphs import two_service_graph
from unit.apply.fakes import FakeCache, LandingClient, edited, stale_copy
from unit.controllers.reconcilers_testlib import graph_reconciler

Obj = dict[str, Any]
KEY = "ns/g"
GRAPH = (kinds.DGD, KEY)
FRONTEND = (kinds.DCD, "ns/g-frontend")


def graph(generation: int = 1, frontend_replicas: int = 1) -> Obj:
    """The shared frontend + worker graph, as the API server keeps it (UID, generation)."""
    obj = two_service_graph("g", "ns")
    obj["metadata"].update(uid="u-g", generation=generation, creationTimestamp="2026-11-22T08:00:00Z")
    obj["spec"]["services"]["Frontend"]["replicas"] = frontend_replicas
    return obj


class World:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cache = FakeCache()
        self.cache.current.update({kinds.DGD, kinds.DCD})
        self.cache.objects[GRAPH] = graph()
        self.client = LandingClient(self.cache)
        self.generated = 0
        real = dgd_reconciler.dcd_children

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.generated += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(dgd_reconciler, "dcd_children", counted)
        self.reconciler = graph_reconciler(self.client, self.cache)

    async def reconcile(self) -> list[tuple[str, str]]:
        self.client.calls.clear()
        await self.reconciler.reconcile(KEY)
        return self.client.calls

    def dgd(self) -> Obj:
        return self.cache.objects[GRAPH]


def applies(calls: list[tuple[str, str]]) -> list[str]:
    return [name for verb, name in calls if verb == "apply"]


async def settled(monkeypatch: pytest.MonkeyPatch) -> World:
    """A graph whose children exist and whose own annotations are written: nothing left to write."""
    world = World(monkeypatch)
    assert "g-frontend" in applies(await world.reconcile())
    assert applies(await world.reconcile()) == []  # the event of the annotations it wrote
    world.generated = 0
    return world


async def test_the_annotations_the_reconciler_records_do_not_bring_generation_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first sync ends by recording the origin version, the worker hashes and the pathway on the
    graph; generation was handed all of them, so the event of that write generates nothing."""
    world = World(monkeypatch)
    await world.reconcile()
    recorded = world.dgd()["metadata"]["annotations"]
    assert {"nvidia.com/current-worker-hash-v2", "nvidia.com/workload-provider"} <= set(recorded)
    world.generated = 0
    assert applies(await world.reconcile()) == []
    assert world.generated == 0


async def test_a_recorded_hash_removed_by_hand_is_written_back_without_touching_a_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The recorded hash is not an input of generation; the hash the workers are named with is, and it
    did not change: nothing is generated or applied, and the graph gets its record back."""
    world = await settled(monkeypatch)
    edited(
        world.cache,
        GRAPH,
        lambda dgd: dgd["metadata"]["annotations"].pop("nvidia.com/current-worker-hash-v2"),
    )
    assert applies(await world.reconcile()) == []
    assert world.generated == 0
    assert "nvidia.com/current-worker-hash-v2" in world.dgd()["metadata"]["annotations"]


async def test_component_progress_is_judged_without_generating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    edited(
        world.cache,
        FRONTEND,
        lambda dcd: dcd.update(status={"conditions": [{"type": "Available", "status": "False"}]}),
    )
    assert applies(await world.reconcile()) == []
    edited(
        world.cache,
        FRONTEND,
        lambda dcd: dcd.update(status={"conditions": [{"type": "Available", "status": "True"}]}),
    )
    assert applies(await world.reconcile()) == []
    assert world.generated == 0


async def test_a_spec_change_generates_and_writes_the_new_component(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)

    def three_frontends(dgd: Obj) -> None:
        dgd["spec"] = graph(frontend_replicas=3)["spec"]
        dgd["metadata"]["generation"] = 2  # as the API server bumps it

    edited(world.cache, GRAPH, three_frontends)
    assert "g-frontend" in applies(await world.reconcile())
    assert world.generated == 1
    assert world.cache.objects[FRONTEND]["spec"]["replicas"] == 3


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
    edited(world.cache, GRAPH, change)
    await world.reconcile()
    assert world.generated == 1


async def test_a_component_deleted_is_created_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    del world.cache.objects[FRONTEND]
    assert "g-frontend" in applies(await world.reconcile())
    assert FRONTEND in world.cache.objects


async def test_a_component_scaled_by_hand_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    edited(world.cache, FRONTEND, lambda dcd: dcd["spec"].update(replicas=4))
    assert "g-frontend" in applies(await world.reconcile())
    assert world.cache.objects[FRONTEND]["spec"]["replicas"] == 1


async def test_a_component_no_longer_desired_is_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await settled(monkeypatch)
    stale_copy(world.cache, FRONTEND, "g-old")
    assert ("delete", "g-old") in await world.reconcile()


async def test_a_graph_deleted_is_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing is kept of a graph that is gone: the same graph back (as after a restore) generates."""
    world = await settled(monkeypatch)
    kept = world.dgd()
    del world.cache.objects[GRAPH]
    await world.reconcile()
    world.cache.objects[GRAPH] = kept
    await world.reconcile()
    assert world.generated == 1
