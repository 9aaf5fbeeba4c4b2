"""`ChildSyncer.unchanged`: after a complete sync from some inputs, the same inputs need no generation
and no sync while the cache shows every child as that sync left it; anything else sends the caller
back to the full sync (fakes only: pure decision logic)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildSyncer, Desired
from dynamo_operator.internal.apply.syncer import SyncReport
from dynamo_operator.internal.client import errors
from unit.apply.fakes import OWNER, STAMP, STAMP_ANNOTATION, FakeCache, FakeClient, RefusingClient, cm, syncer

Obj = dict[str, Any]
INPUTS = ("generation 1", "context A")
OWNED = [kinds.CONFIG_MAP, kinds.SERVICE]


def scaled(name: str, replicas: int) -> Obj:
    obj = cm(name)
    obj["spec"] = {"replicas": replicas}
    return obj


def children() -> list[Desired]:
    return [Desired(kinds.CONFIG_MAP, scaled("b", 2)), Desired(kinds.CONFIG_MAP, cm("a"))]


def land(cache: FakeCache, report: SyncReport) -> None:
    """What the sync wrote shows up in the cache (its watch caught up)."""
    for (resource, name), obj in report.current.items():
        cache.objects[(resource, f"ns/{name}")] = obj


async def synced(cache: FakeCache, inputs: object = INPUTS) -> tuple[ChildSyncer, FakeClient]:
    """A syncer whose owner had one complete sync from `inputs`, its writes in the cache."""
    client = FakeClient(cache)
    sync = syncer(client, cache)
    land(cache, await sync.sync(OWNER, children(), owned=OWNED, inputs=inputs))
    client.calls.clear()
    return sync, client


async def test_the_same_inputs_give_the_live_children_in_desired_order_without_a_request() -> None:
    cache = FakeCache()
    sync, client = await synced(cache)
    report = sync.unchanged(OWNER, INPUTS, owned=OWNED)
    assert report is not None
    assert list(report.current) == [(kinds.CONFIG_MAP, "b"), (kinds.CONFIG_MAP, "a")]
    assert report.current[(kinds.CONFIG_MAP, "a")] is cache.objects[(kinds.CONFIG_MAP, "ns/a")]
    assert (report.created, report.updated, report.deleted) == ([], [], [])
    assert client.calls == []


async def test_other_inputs_need_a_full_sync() -> None:
    sync, _ = await synced(FakeCache())
    assert sync.unchanged(OWNER, ("generation 2", "context A"), owned=OWNED) is None


async def test_an_owner_recreated_under_the_same_name_needs_a_full_sync() -> None:
    sync, _ = await synced(FakeCache())
    successor = {**OWNER, "metadata": {**OWNER["metadata"], "uid": "u2"}}
    assert sync.unchanged(successor, INPUTS, owned=OWNED) is None


async def test_an_owner_never_synced_needs_a_full_sync() -> None:
    assert syncer(FakeClient(FakeCache()), FakeCache()).unchanged(OWNER, INPUTS, owned=OWNED) is None


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda cache: cache.objects.pop((kinds.CONFIG_MAP, "ns/a")), id="child deleted"),
        pytest.param(
            lambda cache: cache.objects[(kinds.CONFIG_MAP, "ns/a")]["metadata"]["annotations"].update(
                {STAMP_ANNOTATION: "edited"}
            ),
            id="child written from other content",
        ),
        pytest.param(
            lambda cache: cache.objects[(kinds.CONFIG_MAP, "ns/a")]["metadata"]["annotations"].pop(
                STAMP_ANNOTATION
            ),
            id="child stamp removed",
        ),
        pytest.param(
            lambda cache: cache.objects[(kinds.CONFIG_MAP, "ns/b")]["spec"].update({"replicas": 5}),
            id="replicas scaled by hand",
        ),
        pytest.param(
            lambda cache: cache.objects[(kinds.CONFIG_MAP, "ns/b")]["metadata"].update(
                {"ownerReferences": [{"kind": "K", "name": "o", "uid": "other", "controller": True}]}
            ),
            id="child taken over by another controller",
        ),
        pytest.param(
            lambda cache: cache.objects.__setitem__(
                (kinds.SERVICE, "ns/old"), {**cm("old", owner_uid="u1"), "kind": "Service"}
            ),
            id="an owned child no longer desired",
        ),
    ],
)
async def test_a_child_not_as_the_sync_left_it_needs_a_full_sync(change: Any) -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    change(cache)
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


async def test_an_owned_child_already_being_deleted_is_not_one_to_prune() -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    going = cm("old", owner_uid="u1")
    going["metadata"]["deletionTimestamp"] = "2026-11-27T10:00:00Z"
    cache.objects[(kinds.SERVICE, "ns/old")] = going
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is not None


async def test_a_kind_the_caller_does_not_own_is_not_pruned_so_not_looked_at() -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    cache.objects[(kinds.SERVICE, "ns/old")] = {**cm("old", owner_uid="u1"), "kind": "Service"}
    assert sync.unchanged(OWNER, INPUTS, owned=[kinds.CONFIG_MAP]) is not None


async def test_a_failed_sync_forgets_the_last_complete_one() -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    failing = syncer(RefusingClient(cache, errors.Forbidden(403, "Forbidden")), cache)
    failing._last = sync._last  # the same memory, a client that refuses every write
    changed = [Desired(kinds.CONFIG_MAP, cm("a", "2"))]
    with pytest.raises(Exception):  # noqa: B017 - whichever sync error; the memory is the point
        await failing.sync(OWNER, changed, owned=OWNED, inputs=("generation 2", "context A"))
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


async def test_a_sync_without_inputs_forgets_the_last_complete_one() -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    await sync.sync(OWNER, children(), owned=OWNED)
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


@pytest.mark.parametrize(
    "extra",
    [
        pytest.param({"create_only": True}, id="create-only child"),
        pytest.param({"shared": True}, id="shared child"),
        pytest.param({"owned": False}, id="child not owned"),
    ],
)
async def test_children_it_cannot_vouch_for_are_never_remembered(extra: dict[str, bool]) -> None:
    cache = FakeCache()
    client = FakeClient(cache)
    sync = syncer(client, cache)
    wanted = [*children(), Desired(kinds.CONFIG_MAP, cm("c"), **extra)]
    land(cache, await sync.sync(OWNER, wanted, owned=OWNED, inputs=INPUTS))
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


async def test_a_child_kept_by_the_keep_rule_is_not_one_to_prune() -> None:
    """`keep` is applied as the full sync applies it: a kept child does not send it back to a sync."""
    cache = FakeCache()
    sync = syncer(FakeClient(cache), cache)

    def keep(resource: Any, obj: Obj) -> bool:
        return bool(obj["metadata"]["name"] == "old")

    land(cache, await sync.sync(OWNER, children(), owned=OWNED, inputs=INPUTS, keep=keep))
    cache.objects[(kinds.SERVICE, "ns/old")] = {**cm("old", owner_uid="u1"), "kind": "Service"}
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED, keep=keep) is not None
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


async def test_forgetting_an_owner_needs_a_full_sync_again() -> None:
    sync, _ = await synced(FakeCache())
    sync.forget("ns/g")
    assert sync.unchanged(OWNER, INPUTS, owned=OWNED) is None


async def test_the_memory_holds_names_and_stamps_not_the_children() -> None:
    cache = FakeCache()
    sync, _ = await synced(cache)
    last = sync._last._last["ns/g"]
    assert [(c.name, c.stamp, c.replicas) for c in last.children] == [
        ("b", STAMP.recorded(cache.objects[(kinds.CONFIG_MAP, "ns/b")]), 2),
        ("a", STAMP.recorded(cache.objects[(kinds.CONFIG_MAP, "ns/a")]), None),
    ]
