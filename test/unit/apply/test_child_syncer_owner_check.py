"""ChildSyncer with `confirm_owner`: a create is preceded by one live read of the owner per sync, and
refused when the owner is gone, unless the cache of the owners' kind is current (its watch has no gap
it may still be catching up on) and still holds the owner; updates and quiet syncs read nothing
(in-memory fakes)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildSyncer, Desired, prepare
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.owners import OwnerGone
from unit.apply import fakes
from unit.apply.fakes import STAMP, FakeCache

Obj = dict[str, Any]
OWNER: Obj = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoComponentDeployment",
    "metadata": {"name": "c", "namespace": "ns", "uid": "u1"},
}


class Client:
    """Records requests; a GET of the owner finds `owner` (None: 404)."""

    def __init__(self, owner: Obj | None) -> None:
        self.owner = owner
        self.calls: list[tuple[str, str]] = []

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        self.calls.append(("get", f"{resource.kind}/{name}"))
        if resource != kinds.DCD or self.owner is None:
            raise errors.NotFound(404, "NotFound")
        return self.owner

    async def apply(self, resource: Resource, obj: Obj, **_: Any) -> Obj:
        self.calls.append(("apply", f"{resource.kind}/{obj['metadata']['name']}"))
        return obj

    async def create(self, resource: Resource, obj: Obj) -> Obj:
        self.calls.append(("create", f"{resource.kind}/{obj['metadata']['name']}"))
        return obj

    async def delete(self, resource: Resource, name: str, **_: Any) -> None:
        self.calls.append(("delete", f"{resource.kind}/{name}"))

    async def patch(self, resource: Resource, name: str, body: Any, **_: Any) -> Obj:
        return {}


def cm(name: str, data: str = "1") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"k": data},
    }


def syncer(client: Client, cache: FakeCache) -> ChildSyncer:
    return fakes.syncer(client, cache, confirm_owner=kinds.DCD)


def live_owner(uid: str = "u1", **meta: Any) -> Obj:
    return {**OWNER, "metadata": {**OWNER["metadata"], "uid": uid, **meta}}


# What may stand under the owner's name instead of it: nothing, a successor, the owner being deleted.
NOT_THE_OWNER = [None, live_owner("u2"), live_owner(deletionTimestamp="2026-01-01T00:00:00Z")]
NOT_THE_OWNER_IDS = ["deleted", "replaced", "being-deleted"]


async def test_creates_are_preceded_by_one_read_of_the_owner() -> None:
    """Three new children, one GET of the owner, then the three applies."""
    client = Client(live_owner())
    await syncer(client, FakeCache()).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm(n)) for n in "abc"], owned=[])
    assert client.calls[0] == ("get", "DynamoComponentDeployment/c")
    assert sorted(client.calls[1:]) == [("apply", f"ConfigMap/{n}") for n in "abc"]


@pytest.mark.parametrize("found", NOT_THE_OWNER, ids=NOT_THE_OWNER_IDS)
async def test_nothing_is_created_for_an_owner_that_is_not_there(found: Obj | None) -> None:
    """The cache still shows the owner, the API server does not: OwnerGone, no write at all."""
    client = Client(found)
    desired = [
        Desired(kinds.CONFIG_MAP, cm("a")),
        Desired(kinds.CONFIG_MAP, cm("pvc-like"), create_only=True),
        Desired(kinds.CONFIG_MAP, cm("shared"), owned=False),
    ]
    with pytest.raises(OwnerGone):
        await syncer(client, FakeCache()).sync(OWNER, desired, owned=[])
    assert client.calls == [("get", "DynamoComponentDeployment/c")]


async def test_updates_and_quiet_syncs_read_nothing() -> None:
    """Existing children: an unchanged one costs nothing, a changed one is applied without a read,
    even when the owner is gone (the garbage collector knows existing children)."""
    cache = FakeCache()
    for name, data in (("same", "1"), ("changed", "old")):
        obj = prepare(OWNER, cm(name, data), STAMP)
        cache.objects[(kinds.CONFIG_MAP, object_key(obj))] = obj
    client = Client(None)
    await syncer(client, cache).sync(
        OWNER,
        [Desired(kinds.CONFIG_MAP, cm("same")), Desired(kinds.CONFIG_MAP, cm("changed", "new"))],
        owned=[],
    )
    assert client.calls == [("apply", "ConfigMap/changed")]


async def test_each_sync_reads_the_owner_afresh() -> None:
    """The verdict is per sync: an owner deleted between two syncs is noticed by the second."""
    client = Client(live_owner())
    sync = syncer(client, FakeCache())
    await sync.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("a"))], owned=[])
    client.owner = None
    with pytest.raises(OwnerGone):
        await sync.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("b"))], owned=[])
    assert [c for c in client.calls if c[0] == "get"] == [("get", "DynamoComponentDeployment/c")] * 2


async def test_without_confirm_owner_nothing_is_read() -> None:
    client = Client(None)
    await fakes.syncer(client, FakeCache()).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("a"))], owned=[])
    assert client.calls == [("apply", "ConfigMap/a")]


def watched_cache(*, current: bool, owner: Obj | None = OWNER) -> FakeCache:
    """A cache holding `owner` whose watch of DCDs is current or not."""
    cache = FakeCache()
    if current:
        cache.current.add(kinds.DCD)
    if owner is not None:
        cache.objects[(kinds.DCD, object_key(owner))] = owner
    return cache


async def test_an_owner_in_a_current_cache_needs_no_read() -> None:
    """The cache follows the API server at watch lag: its owner stands for the live read."""
    client = Client(None)  # a read would say "gone": it must not be made
    await syncer(client, watched_cache(current=True)).sync(
        OWNER, [Desired(kinds.CONFIG_MAP, cm(n)) for n in "ab"], owned=[]
    )
    assert sorted(client.calls) == [("apply", "ConfigMap/a"), ("apply", "ConfigMap/b")]


async def test_an_owner_in_a_cache_that_is_not_current_is_read_live() -> None:
    """A broken watch, or one resumed and maybe still replaying what it missed: the read is made,
    and a gone owner gets nothing."""
    client = Client(None)
    with pytest.raises(OwnerGone):
        await syncer(client, watched_cache(current=False)).sync(
            OWNER, [Desired(kinds.CONFIG_MAP, cm("a"))], owned=[]
        )
    assert client.calls == [("get", "DynamoComponentDeployment/c")]


@pytest.mark.parametrize("cached", NOT_THE_OWNER, ids=NOT_THE_OWNER_IDS)
async def test_an_owner_the_cache_has_moved_on_from_is_read_live(cached: Obj | None) -> None:
    """The reconcile read the owner, the current cache has since seen it go: the live read decides."""
    client = Client(None)
    with pytest.raises(OwnerGone):
        await syncer(client, watched_cache(current=True, owner=cached)).sync(
            OWNER, [Desired(kinds.CONFIG_MAP, cm("a"))], owned=[]
        )
    assert client.calls == [("get", "DynamoComponentDeployment/c")]
