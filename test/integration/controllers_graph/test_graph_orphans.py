"""Nothing outlives its owner, against the real API server (issue #10, defect 5: children of graphs
deleted right after an API server restart stayed for minutes, controlled by owners that no longer
existed).

Two guards: the child syncer creates nothing for an owner that a live read shows gone, although its
cache still holds it (the API server itself accepts an ownerReference to a dead UID); and the
operator deletes a child controlled by one of its kinds whose owner no longer exists, even while
kube-controller-manager's garbage collector is not running.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildSyncer, Desired
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.metrics import requests_count
from dynamo_operator.internal.client.resource import EVENT, Resource, object_key
from dynamo_operator.internal.consts import FIELD_MANAGER
from dynamo_operator.internal.controller.orphans import DEFAULT_GRACE_SECONDS
from dynamo_operator.internal.controller.owners import OwnerGone
from dynamo_operator.internal.dynamo.common.hashing import LAST_APPLIED_HASH
from localcluster import LocalCluster
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

Obj = dict[str, Any]
KCM = "kube-controller-manager"


class Snapshot:
    """A `ChildReader` frozen at what the test put in it: a cache that has not caught up."""

    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], Obj] = {}

    def put(self, resource: Resource, obj: Obj) -> None:
        self.objects[(resource, object_key(obj))] = copy.deepcopy(obj)

    def get(self, resource: Resource, key: str) -> Obj | None:
        return self.objects.get((resource, key))

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        return []

    def shape(self, resource: Resource, obj: Obj) -> Obj:
        return obj

    def is_current(self, resource: Resource) -> bool:
        return False  # a cache that has not caught up: never trusted


class NoEvents:
    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        pass


def owner_checking_syncer(api: Client, cache: Snapshot) -> ChildSyncer:
    """The operator's syncer for children of ConfigMaps, reading the owner before a create."""
    return ChildSyncer(
        client=api,
        cache=cache,
        recorder=NoEvents(),
        field_manager=FIELD_MANAGER,
        stamp=LAST_APPLIED_HASH,
        confirm_owner=kinds.CONFIG_MAP,
    )


def config_map(name: str, namespace: str, *, owner: Obj | None = None) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def controller_ref(api_version: str, kind: str, name: str) -> Obj:
    """A controller ownerReference to an object of that kind that never existed (a fresh UID)."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": str(uuid.uuid4()),
        "controller": True,
    }


async def create_owner(api: Client, namespace: str) -> Obj:
    created = await api.create(kinds.CONFIG_MAP, config_map("owner", namespace))
    return {**created, "apiVersion": "v1", "kind": "ConfigMap"}


async def absent(api: Client, resource: Resource, name: str, namespace: str) -> bool:
    try:
        await api.get(resource, name, namespace=namespace)
    except NotFound:
        return True
    return False


@pytest.mark.parametrize("fate", ["deleted", "replaced"])
async def test_syncer_creates_nothing_for_an_owner_a_live_read_shows_gone(
    api: Client, ns: str, fate: str
) -> None:
    """The cache still shows the owner; the API server has deleted it (or holds a same-named
    successor with another UID). The sync raises OwnerGone and the child does not exist."""
    owner = await create_owner(api, ns)
    cache = Snapshot()
    cache.put(kinds.CONFIG_MAP, owner)
    await api.delete(kinds.CONFIG_MAP, "owner", namespace=ns)
    if fate == "replaced":  # same name, another UID
        await api.create(kinds.CONFIG_MAP, config_map("owner", ns))
    syncer = owner_checking_syncer(api, cache)

    with pytest.raises(OwnerGone):
        await syncer.sync(owner, [Desired(kinds.CONFIG_MAP, config_map("child", ns))], owned=[])
    assert await absent(api, kinds.CONFIG_MAP, "child", ns)


async def test_syncer_creates_children_of_an_owner_that_is_there(api: Client, ns: str) -> None:
    """The control: same sync, owner present, the child is created under it."""
    owner = await create_owner(api, ns)
    cache = Snapshot()
    cache.put(kinds.CONFIG_MAP, owner)
    syncer = owner_checking_syncer(api, cache)

    report = await syncer.sync(owner, [Desired(kinds.CONFIG_MAP, config_map("child", ns))], owned=[])
    assert report.created == ["ConfigMap/child"]
    child = await api.get(kinds.CONFIG_MAP, "child", namespace=ns)
    [ref] = child["metadata"]["ownerReferences"]
    assert ref["uid"] == owner["metadata"]["uid"]


async def test_a_new_graph_on_current_watches_reads_no_owner_live(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """While the operator's caches of graphs and components are current (their watches have no gap),
    creating a graph's components and their workloads costs no live read of an owner: the cache
    stands for it (the reads made after a broken watch: the unit tests of the syncer and reflector)."""
    cache = operator.manager.cache
    assert cache.is_current(kinds.DGD) and cache.is_current(kinds.DCD)

    def requests(method: str) -> float:
        """Requests the process sent on graphs and components (`resource` as the client labels it)."""
        return sum(
            requests_count(methods=frozenset({method}), resource=f"{r.plural}.{r.group}")
            for r in (kinds.DGD, kinds.DCD)
        )

    reads_before, writes_before = requests("GET"), requests("PATCH")
    await api.apply(kinds.DGD, two_service_graph("trusted", ns), field_manager=TEST_FIELD_MANAGER)
    # Watched through the operator's own cache: a GET of the graph here would count as a read.
    await eventually(
        lambda: [
            d
            for d in cache.list(kinds.DEPLOYMENT, namespace=ns)
            if d["metadata"]["name"].startswith("trusted-")
        ],
        until=lambda deployments: len(deployments) == 2,
        timeout=60,
    )
    assert requests("PATCH") > writes_before  # the counter is the right one: the components were written
    assert requests("GET") == reads_before


async def test_operator_deletes_a_child_whose_component_no_longer_exists(
    api: Client, operator: RunningOperator, ns: str, local_cluster: LocalCluster
) -> None:
    """With the garbage collector stopped, a Deployment controlled by a DynamoComponentDeployment
    UID that does not exist is deleted by the operator, with a Warning Event; a ConfigMap whose
    controller is a Deployment (not one of our kinds) with a dead UID is left alone."""
    dcd_ref = controller_ref(kinds.DCD.api_version, kinds.DCD.kind, "ghost")
    orphan = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "ghost", "namespace": ns, "ownerReferences": [dcd_ref]},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "ghost"}},
            "template": {
                "metadata": {"labels": {"app": "ghost"}},
                "spec": {"containers": [{"name": "main", "image": "registry.example/ghost:1"}]},
            },
        },
    }
    foreign = config_map("foreign", ns, owner=controller_ref("apps/v1", "Deployment", "ghost-too"))
    local_cluster.stop_component(KCM)
    try:
        await api.create(kinds.DEPLOYMENT, orphan)
        await api.create(kinds.CONFIG_MAP, foreign)
        await eventually(
            lambda: absent(api, kinds.DEPLOYMENT, "ghost", ns), timeout=DEFAULT_GRACE_SECONDS + 60
        )

        async def orphan_events() -> list[Obj]:
            events = await api.list(EVENT, namespace=ns)
            return [
                e
                for e in events
                if e.get("reason") == "OrphanDeleted" and e["involvedObject"].get("name") == "ghost"
            ]

        [event] = await eventually(orphan_events, timeout=30)
        assert event["type"] == "Warning"
        assert dcd_ref["uid"] in event["message"]
        assert not await absent(api, kinds.CONFIG_MAP, "foreign", ns)
    finally:
        local_cluster.start_component(KCM)
