"""The orphan collector's decisions against in-memory fakes: who becomes a suspect, when, and what
is deleted (only a child whose owner of our kinds a live read shows gone, exactly as judged)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, Resource
from dynamo_operator.internal.controller.orphans import OrphanCollector

DGD = Resource("nvidia.com", "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")
DCD = Resource("nvidia.com", "v1alpha1", "dynamocomponentdeployments", "DynamoComponentDeployment")
GRACE = 15.0
Obj = dict[str, Any]


def owner(resource: Resource, name: str, uid: str) -> Obj:
    return {
        "apiVersion": resource.api_version,
        "kind": resource.kind,
        "metadata": {"name": name, "namespace": "ns", "uid": uid},
    }


def child(
    name: str,
    *,
    owner_kind: str = "DynamoComponentDeployment",
    owner_api: str = "nvidia.com/v1alpha1",
    owner_name: str = "c",
    owner_uid: str = "dead",
    controller: bool = True,
    rv: str = "7",
) -> Obj:
    ref = {"apiVersion": owner_api, "kind": owner_kind, "name": owner_name, "uid": owner_uid}
    if controller:
        ref["controller"] = True
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "ownerReferences": [ref],
        }
    }


def with_second_owner(obj: Obj) -> Obj:
    """A further, non-controller owner: the garbage collector keeps the object while it lives."""
    extra = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "name": "r",
        "uid": "r1",
    }
    obj["metadata"]["ownerReferences"].append(extra)
    return obj


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Any] = []
        self.synced = True

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def has_synced(self) -> bool:
        return self.synced


class FakeCache:
    """Cache reads and informers in one: objects by (resource, key)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], Obj] = {}
        self.informers: dict[Resource, FakeInformer] = {}

    def put(self, resource: Resource, obj: Obj) -> None:
        self.objects[(resource, f"ns/{obj['metadata']['name']}")] = obj

    def get(self, resource: Resource, key: str) -> Obj | None:
        return self.objects.get((resource, key))

    def list(self, resource: Resource) -> list[Obj]:
        return [o for (r, _), o in self.objects.items() if r == resource]

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        assert index == "controller"
        return [
            o
            for o in self.list(resource)
            if any(ref.get("controller") and ref["uid"] == value for ref in o["metadata"]["ownerReferences"])
        ]

    def informer(self, resource: Resource, *, namespace: str | None = None) -> FakeInformer:
        return self.informers.setdefault(resource, FakeInformer())


class FakeQueue:
    def __init__(self) -> None:
        self.delayed: list[tuple[str, float]] = []

    def add_after(self, key: str, delay: float) -> None:
        self.delayed.append((key, delay))


class FakeClient:
    """The API server as the collector sees it: GETs find `server`, deletes are recorded."""

    def __init__(self) -> None:
        self.server: dict[tuple[Resource, str], Obj] = {}
        self.gets: list[str] = []
        self.deletes: list[tuple[str, Mapping[str, str] | None]] = []
        self.delete_error: Exception | None = None

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        self.gets.append(f"{resource.kind}/{name}")
        obj = self.server.get((resource, name))
        if obj is None:
            raise errors.NotFound(404, "NotFound")
        return obj

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> None:
        if self.delete_error is not None:
            raise self.delete_error
        self.deletes.append((f"{resource.kind}/{name}", preconditions))


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        self.events.append((obj["metadata"]["name"], type, reason))


class World:
    def __init__(self) -> None:
        self.cache, self.client, self.queue, self.recorder = (
            FakeCache(),
            FakeClient(),
            FakeQueue(),
            FakeRecorder(),
        )
        self.collector = OrphanCollector(
            client=self.client, cache=self.cache, recorder=self.recorder, owners=[DGD, DCD], grace=GRACE
        )
        self.collector.add_children([DEPLOYMENT, CONFIG_MAP, DCD])
        self.collector.bind(self.cache, self.queue, namespace=None)  # type: ignore[arg-type]

    def add_child(self, resource: Resource, obj: Obj) -> None:
        """The child arrives in the cache (and on the server); handlers see an add."""
        self.cache.put(resource, obj)
        self.client.server[(resource, obj["metadata"]["name"])] = obj
        for handler in self.cache.informers[resource].handlers:
            handler.on_add(obj)

    def delete_owner(self, resource: Resource, obj: Obj) -> None:
        self.cache.objects.pop((resource, f"ns/{obj['metadata']['name']}"), None)
        self.client.server.pop((resource, obj["metadata"]["name"]), None)
        for handler in self.cache.informers[resource].handlers:
            handler.on_delete(obj)


def test_child_whose_owner_the_cache_shows_is_not_suspected() -> None:
    """The normal case costs nothing: owner cached with the same UID, no key queued."""
    w = World()
    w.cache.put(DCD, owner(DCD, "c", "live"))
    w.add_child(DEPLOYMENT, child("d", owner_uid="live"))
    assert w.queue.delayed == []


def test_child_whose_owner_the_cache_lacks_is_suspected_after_the_grace() -> None:
    """The garbage collector gets the grace first."""
    w = World()
    w.add_child(DEPLOYMENT, child("d"))
    assert w.queue.delayed == [("ns/deployments.apps/d", GRACE)]


def test_child_of_a_replaced_owner_is_suspected() -> None:
    """Same owner name in the cache but another UID: not our owner."""
    w = World()
    w.cache.put(DCD, owner(DCD, "c", "new"))
    w.add_child(DEPLOYMENT, child("d", owner_uid="old"))
    assert [k for k, _ in w.queue.delayed] == ["ns/deployments.apps/d"]


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(child("d", owner_kind="ReplicaSet", owner_api="apps/v1"), id="foreign-kind"),
        pytest.param(child("d", owner_api="example.com/v1"), id="same-kind-other-group"),
        pytest.param(child("d", controller=False), id="not-a-controller-reference"),
        pytest.param(with_second_owner(child("d")), id="another-owner-may-keep-it"),
    ],
)
def test_children_not_controlled_by_our_kinds_are_never_suspected(obj: Obj) -> None:
    w = World()
    w.add_child(DEPLOYMENT, obj)
    assert w.queue.delayed == []
    assert w.collector.sweep() == 0


def test_before_the_owner_cache_synced_the_sweep_decides() -> None:
    """A child listed before its owner's informer synced is judged by the sweep, not the handler."""
    w = World()
    w.cache.informers[DCD].synced = False
    w.cache.put(DCD, owner(DCD, "c", "live"))
    w.add_child(DEPLOYMENT, child("alive", owner_uid="live"))
    w.add_child(DEPLOYMENT, child("orphan"))
    assert w.queue.delayed == []
    w.cache.informers[DCD].synced = True
    assert w.collector.sweep() == 1
    assert [k for k, _ in w.queue.delayed] == ["ns/deployments.apps/orphan"]


def test_owner_deletion_suspects_its_cached_children() -> None:
    """Children the garbage collector should remove are checked once the grace has passed."""
    w = World()
    dcd = owner(DCD, "c", "u1")
    w.cache.put(DCD, dcd)
    w.add_child(DEPLOYMENT, child("d", owner_uid="u1"))
    w.add_child(CONFIG_MAP, child("other", owner_uid="u2"))  # another owner's child: no
    w.queue.delayed.clear()
    w.delete_owner(DCD, dcd)
    assert w.queue.delayed == [("ns/deployments.apps/d", GRACE)]


async def test_orphan_of_a_deleted_owner_is_deleted_exactly_as_judged() -> None:
    """Owner 404, child still controlled by it: deleted with UID and resourceVersion preconditions,
    one Warning Event on the child."""
    w = World()
    w.add_child(DEPLOYMENT, child("d", rv="42"))
    await w.collector.reconcile("ns/deployments.apps/d")
    assert w.client.gets == ["DynamoComponentDeployment/c", "Deployment/d"]
    assert w.client.deletes == [("Deployment/d", {"uid": "uid-d", "resourceVersion": "42"})]
    assert w.recorder.events == [("d", "Warning", "OrphanDeleted")]


async def test_orphan_of_a_replaced_owner_is_deleted() -> None:
    """The owner's name now belongs to another object: the child's owner is gone all the same."""
    w = World()
    w.client.server[(DCD, "c")] = owner(DCD, "c", "successor")
    w.add_child(DEPLOYMENT, child("d"))
    await w.collector.reconcile("ns/deployments.apps/d")
    assert [name for name, _ in w.client.deletes] == ["Deployment/d"]


async def test_owner_present_on_the_server_saves_the_child() -> None:
    """Our cache lagged: the live read finds the owner with the child's UID, nothing is deleted."""
    w = World()
    w.client.server[(DCD, "c")] = owner(DCD, "c", "dead")
    w.add_child(DEPLOYMENT, child("d"))
    await w.collector.reconcile("ns/deployments.apps/d")
    assert w.client.deletes == []
    assert w.recorder.events == []


async def test_owner_being_deleted_is_left_to_the_garbage_collector() -> None:
    """Foreground deletion in progress: the owner still exists, so the child is not an orphan."""
    w = World()
    dying = owner(DCD, "c", "dead")
    dying["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    w.client.server[(DCD, "c")] = dying
    w.add_child(DEPLOYMENT, child("d"))
    await w.collector.reconcile("ns/deployments.apps/d")
    assert w.client.deletes == []


async def test_owner_back_in_the_cache_costs_no_request() -> None:
    """By the time the grace ran out the cache caught up: a lookup, no GET, no delete."""
    w = World()
    w.add_child(DEPLOYMENT, child("d", owner_uid="late"))
    w.cache.put(DCD, owner(DCD, "c", "late"))
    await w.collector.reconcile("ns/deployments.apps/d")
    assert w.client.gets == []
    assert w.client.deletes == []


async def test_child_gone_or_going_needs_nothing() -> None:
    w = World()
    w.add_child(DEPLOYMENT, child("going"))
    w.cache.objects[(DEPLOYMENT, "ns/going")]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    await w.collector.reconcile("ns/deployments.apps/going")
    await w.collector.reconcile("ns/deployments.apps/never-seen")
    assert (w.client.gets, w.client.deletes) == ([], [])


async def test_child_that_changed_controller_since_the_cache_saw_it_is_kept() -> None:
    """The live child is re-read: if it no longer names the dead owner (e.g. orphaned on purpose by
    `--cascade=orphan`, which strips the reference), it is not ours to delete."""
    w = World()
    w.add_child(DEPLOYMENT, child("d"))
    w.client.server[(DEPLOYMENT, "d")] = {"metadata": {"name": "d", "namespace": "ns", "uid": "uid-d"}}
    await w.collector.reconcile("ns/deployments.apps/d")
    assert w.client.deletes == []


async def test_a_failed_precondition_is_judged_again_later() -> None:
    """The child changed between our read and the delete: nothing deleted, re-checked after the grace."""
    w = World()
    w.add_child(DEPLOYMENT, child("d"))
    w.client.delete_error = errors.Conflict(409, "Conflict")
    result = await w.collector.reconcile("ns/deployments.apps/d")
    assert result.requeue_after == GRACE
    assert w.recorder.events == []


async def test_keys_of_kinds_not_watched_are_ignored() -> None:
    w = World()
    await w.collector.reconcile("ns/persistentvolumeclaims/data")
    assert (w.client.gets, w.client.deletes) == ([], [])


def test_a_controller_change_makes_a_suspect_other_updates_do_not() -> None:
    w = World()
    w.cache.put(DCD, owner(DCD, "c", "live"))
    w.add_child(DEPLOYMENT, child("d", owner_uid="live"))
    [handler] = w.cache.informers[DEPLOYMENT].handlers
    handler.on_update(child("d", owner_uid="live"), child("d", owner_uid="live", rv="8"))
    assert w.queue.delayed == []
    handler.on_update(child("d", owner_uid="live"), child("d", owner_uid="dead"))
    assert [k for k, _ in w.queue.delayed] == ["ns/deployments.apps/d"]


def test_owner_and_child_kinds_must_be_namespaced() -> None:
    w = World()
    with pytest.raises(RuntimeError):
        w.collector.add_children([DEPLOYMENT])  # after bind
    with pytest.raises(ValueError, match="namespaced"):
        OrphanCollector(
            client=FakeClient(),
            cache=FakeCache(),
            recorder=FakeRecorder(),
            owners=[Resource("", "v1", "nodes", "Node", namespaced=False)],
        )
