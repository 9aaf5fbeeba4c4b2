"""A component reconciled again with nothing of its own changed (its workload reported progress) is
judged from its children in the cache, without generating them again: generation and hashing were a
sixth of the operator's CPU at 100 graphs (issue #13). Anything generation reads changing, or a
child not as the last sync left it, brings generation and the full sync back.

Against in-memory fakes (pure decision logic); the children's drift, deletion and pruning on a real
API server are test/integration's component tests, which pass through this path.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.api.conversion.preserve import DCD_SPEC
from dynamo_operator.controllers import dynamocomponentdeployment as dcd_controller
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.dynamo.common.context import GenContext
from unit.apply.fakes import FakeCache, LandingClient, edited, stale_copy
from unit.controllers.reconcilers_testlib import component_reconciler

Obj = dict[str, Any]
NOW = 1_800_000_000.0
KEY = "ns/g-worker"
DEPLOYMENT = (kinds.DEPLOYMENT, "ns/g-worker")
SERVICE = (kinds.SERVICE, "ns/g-worker")


def component(generation: int | None = 1, uid: str = "u-dcd") -> Obj:
    meta: Obj = {
        "name": "g-worker",
        "namespace": "ns",
        "uid": uid,
        "creationTimestamp": "2026-11-22T08:00:00Z",
    }
    if generation is not None:
        meta["generation"] = generation
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": meta,
        "spec": {
            "componentType": "frontend",
            "replicas": 1,
            "extraPodSpec": {"mainContainer": {"image": f"registry.example/w:{generation}"}},
        },
    }


class World:
    """A DCD in the cache, a client whose writes land in it, and generation counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, dcd: Obj) -> None:
        self.cache = FakeCache()
        self.cache.current.add(kinds.DCD)
        self.cache.objects[(kinds.DCD, KEY)] = dcd
        self.client = LandingClient(self.cache)
        self.generated = 0
        self.secrets: dict[str, list[str]] = {}
        real = dcd_controller.desired_component_objects

        def counted(raw: Any, ctx: GenContext) -> list[Obj]:
            self.generated += 1
            return real(raw, ctx)

        monkeypatch.setattr(dcd_controller, "desired_component_objects", counted)
        self.reconciler = component_reconciler(
            self.client,
            self.cache,
            gen_context=lambda ns: GenContext(
                namespace=ns, docker_secrets=MappingProxyType(dict(self.secrets))
            ),
            clock=FakeClock.at(NOW),
        )

    async def reconcile(self) -> list[tuple[str, str]]:
        """One reconcile; the requests it sent."""
        self.client.calls.clear()
        await self.reconciler.reconcile(KEY)
        return self.client.calls

    def progress(self, available: int) -> None:
        """The Deployment controller reports on the workload (a status-only change)."""
        dep = self.cache.objects[DEPLOYMENT]
        dep["metadata"]["generation"] = 1
        dep["status"] = {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": available,
            "availableReplicas": available,
        }

    def dcd(self) -> Obj:
        return self.cache.objects[(kinds.DCD, KEY)]


async def created(monkeypatch: pytest.MonkeyPatch, dcd: Obj | None = None) -> World:
    """A component whose first reconcile created its Deployment and Service."""
    world = World(monkeypatch, dcd or component())
    assert [c for c in await world.reconcile() if c[0] == "apply"] == [("apply", "g-worker")] * 2
    assert world.generated == 1
    return world


async def test_workload_progress_is_judged_without_generating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    world.progress(available=0)
    assert await world.reconcile() == [("patch", "g-worker")]  # the status: not ready yet
    world.progress(available=1)
    assert await world.reconcile() == [("patch", "g-worker")]  # the status: ready
    assert world.generated == 1


async def test_a_spec_change_generates_and_writes_the_new_workload(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    world.cache.objects[(kinds.DCD, KEY)] = component(generation=2)
    assert ("apply", "g-worker") in await world.reconcile()
    assert world.generated == 2
    assert world.cache.objects[DEPLOYMENT]["spec"]["template"]["spec"]["containers"][0]["image"].endswith(
        ":2"
    )


async def test_a_restart_id_stamped_without_a_generation_bump_generates_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """v1beta1 keeps a DCD's `spec.annotations` outside its spec, so stamping a restart id bumps no
    generation: the spec as read still brings generation back, and the pods carry the id."""
    world = await created(monkeypatch)
    restarted = component(generation=1)
    restarted["spec"]["annotations"] = {"nvidia.com/restartAt": "r1"}
    world.cache.objects[(kinds.DCD, KEY)] = restarted
    assert ("apply", "g-worker") in await world.reconcile()
    assert world.generated == 2
    template = world.cache.objects[DEPLOYMENT]["spec"]["template"]
    assert template["metadata"]["annotations"]["nvidia.com/restartAt"] == "r1"


async def test_a_context_change_generates_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pull secret for the image's registry appeared: the pods must name it."""
    world = await created(monkeypatch)
    world.secrets["registry.example"] = ["regcred"]
    await world.reconcile()
    assert world.generated == 2
    pod = world.cache.objects[DEPLOYMENT]["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]


async def test_an_equal_context_built_anew_counts_as_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """The context is rebuilt on every reconcile; equal is what matters, not identical."""
    world = await created(monkeypatch)
    world.secrets = {}  # a new, equal mapping
    await world.reconcile()
    assert world.generated == 1


async def test_a_new_parent_graph_generates_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    world.dcd()["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "name": "g",
            "uid": "u-g",
            "controller": True,
        }
    ]
    await world.reconcile()
    assert world.generated == 2


@pytest.mark.parametrize(
    ("child", "change"),
    [
        pytest.param(DEPLOYMENT, lambda obj: obj["spec"].update(replicas=3), id="workload scaled by hand"),
        pytest.param(DEPLOYMENT, lambda obj: obj["metadata"]["annotations"].clear(), id="workload rewritten"),
        pytest.param(SERVICE, lambda obj: obj["metadata"]["annotations"].clear(), id="service rewritten"),
    ],
)
async def test_a_child_edited_by_someone_else_is_put_back(
    monkeypatch: pytest.MonkeyPatch, child: tuple[Resource, str], change: Callable[[Obj], object]
) -> None:
    world = await created(monkeypatch)
    edited(world.cache, child, change)
    assert ("apply", "g-worker") in await world.reconcile()
    assert world.generated == 2


@pytest.mark.parametrize("child", [DEPLOYMENT, SERVICE], ids=["workload", "service"])
async def test_a_child_deleted_is_created_again(
    monkeypatch: pytest.MonkeyPatch, child: tuple[Resource, str]
) -> None:
    world = await created(monkeypatch)
    del world.cache.objects[child]
    assert ("apply", "g-worker") in await world.reconcile()
    assert child in world.cache.objects


async def test_an_owned_child_no_longer_desired_is_pruned(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    stale_copy(world.cache, DEPLOYMENT, "g-worker-old")
    assert ("delete", "g-worker-old") in await world.reconcile()


async def test_a_component_recreated_under_its_name_generates_again(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    world.cache.objects[(kinds.DCD, KEY)] = component(uid="u-dcd-2")
    await world.reconcile()
    assert world.generated == 2


async def test_a_component_deleted_is_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch)
    del world.cache.objects[(kinds.DCD, KEY)]
    await world.reconcile()
    world.cache.objects[(kinds.DCD, KEY)] = component()
    await world.reconcile()
    assert world.generated == 2


async def test_a_component_without_a_generation_generates_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    world = await created(monkeypatch, component(generation=None))
    world.progress(available=1)
    await world.reconcile()
    assert world.generated == 2


def _stored(annotations: dict[str, str]) -> Obj:
    """The component as the operator reads it (v1beta1), written as v1alpha1 with `spec.annotations`:
    a field v1beta1 has no place for, kept in the reserved annotation."""
    alpha = component()
    alpha["spec"]["annotations"] = annotations
    stored = dict(convert(alpha, V1BETA1))
    assert "annotations" not in stored["spec"] and DCD_SPEC in stored["metadata"]["annotations"]
    return stored


async def test_a_field_only_the_reserved_annotation_holds_edited_generates_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = await created(monkeypatch, _stored({"team": "a"}))
    world.cache.objects[(kinds.DCD, KEY)] = _stored({"team": "b"})  # same generation, same spec
    assert ("apply", "g-worker") in await world.reconcile()
    assert world.generated == 2
    assert world.cache.objects[DEPLOYMENT]["spec"]["template"]["metadata"]["annotations"]["team"] == "b"


def test_an_edit_of_the_reserved_annotation_alone_passes_the_components_watch() -> None:
    before, after = _stored({"team": "a"}), _stored({"team": "b"})
    assert (before["spec"], before["metadata"].get("generation")) == (
        after["spec"],
        after["metadata"].get("generation"),
    )
    assert dcd_controller.SAVED_FIELDS_CHANGED.update(before, after)
    assert not dcd_controller.SAVED_FIELDS_CHANGED.update(before, _stored({"team": "a"}))
