"""The memory of recent writes stands in for a lagging cache, and only while it lags; it stays small
and bounded in time (issue #13: memory follows what controllers read, not what they wrote)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildSyncer, Desired, RecentWrites
from dynamo_operator.internal.cache.cache import Cache
from dynamo_operator.internal.cache.transform import keep_paths
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import FakeClock
from unit.apply.fakes import FIELD_MANAGER, OWNER, STAMP, FakeRecorder

Obj = dict[str, Any]


def test_recent_writes_stand_in_only_while_the_cache_is_behind() -> None:
    """Our write stands in for the cache only while it still shows the version from before the write;
    once it moved on (or the entry expired), the cache is trusted again — so a later deletion of a
    created object is never mistaken for our create still being in flight."""
    clock = FakeClock(0.0)
    recent = RecentWrites(ttl=30.0, clock=clock)
    key = ("apps", "deployments", "ns", "d")
    recent.remember(key, None, {"v": 1})
    assert recent.in_flight(key, None) == {"v": 1}  # created, watch event not in yet
    assert recent.in_flight(key, {"metadata": {"resourceVersion": "5"}}) is None  # cache caught up
    assert recent.in_flight(key, None) is None  # deleted later: trust the cache, recreate
    recent.remember(key, {"metadata": {"resourceVersion": "5"}}, {"v": 2})
    clock.advance(31.0)
    assert recent.in_flight(key, {"metadata": {"resourceVersion": "5"}}) is None  # expired


def rv(version: str) -> Obj:
    return {"metadata": {"resourceVersion": version}}


def test_a_cache_older_than_our_write_is_behind_whichever_version_it_shows() -> None:
    recent = RecentWrites(ttl=30.0, clock=FakeClock(0.0))
    key = ("nvidia.com", "dynamographdeployments", "ns", "g")
    recent.remember(key, rv("10"), {"v": 1}, written=rv("11"))
    recent.remember(key, rv("10"), {"v": 2}, written=rv("12"))  # the cache still showed 10
    assert recent.in_flight(key, rv("11")) == {"v": 2}  # our first write: still behind the second
    assert recent.in_flight(key, rv("12")) is None  # our last write: caught up


def test_a_cache_newer_than_our_write_is_trusted() -> None:
    recent = RecentWrites(ttl=30.0, clock=FakeClock(0.0))
    key = ("nvidia.com", "dynamographdeployments", "ns", "g")
    recent.remember(key, rv("10"), {"v": 1}, written=rv("11"))
    assert recent.in_flight(key, rv("15")) is None  # someone wrote after us
    assert recent.in_flight(key, rv("10")) is None  # and the entry is gone


def test_recent_writes_forget_entries_older_than_their_ttl_on_the_next_write() -> None:
    clock = FakeClock(0.0)
    recent = RecentWrites(ttl=30.0, clock=clock)
    for i in range(100):
        recent.remember(("k", str(i)), None, {"i": i})
    assert len(recent) == 100
    clock.advance(31.0)
    recent.remember(("k", "new"), None, {"i": -1})
    assert len(recent) == 1


def test_recent_writes_keep_at_most_size_entries() -> None:
    recent = RecentWrites(size=10, ttl=30.0, clock=FakeClock(0.0))
    for i in range(25):
        recent.remember(("k", str(i)), None, {"i": i})
    assert len(recent) == 10
    assert recent.in_flight(("k", "24"), None) == {"i": 24}
    assert recent.in_flight(("k", "0"), None) is None


def test_rewriting_a_key_makes_it_the_newest_entry() -> None:
    clock = FakeClock(0.0)
    recent = RecentWrites(ttl=30.0, clock=clock)
    recent.remember(("k", "a"), None, {"v": 1})
    clock.advance(20.0)
    recent.remember(("k", "b"), None, {"v": 1})
    recent.remember(("k", "a"), None, {"v": 2})
    clock.advance(25.0)  # t=45: b (t=20) and a (t=20) both alive; nothing older left
    recent.remember(("k", "c"), None, {"v": 1})
    assert len(recent) == 3


class ApplyingClient:
    """Answers an apply with the object plus what the API server adds (managedFields, status)."""

    async def apply(self, resource: Resource, obj: Obj, **_: Any) -> Obj:
        meta = {
            **obj["metadata"],
            "uid": "child",
            "resourceVersion": "1",
            "managedFields": [{"manager": "m"}],
        }
        return {**obj, "metadata": meta, "status": {"replicas": 0}}


async def test_the_syncer_remembers_its_writes_in_the_shape_its_cache_keeps() -> None:
    """The memory stands in for the cache, so it holds what the cache would: the shape registered on
    the cache for the kind, without managedFields, the stamp kept."""
    cache = Cache(client=None)  # type: ignore[arg-type]  # never started: no request is made
    cache.set_shape(kinds.DEPLOYMENT, keep_paths("spec.replicas", "status"))
    cache.informer(kinds.DEPLOYMENT)
    recent = RecentWrites()
    syncer = ChildSyncer(
        client=ApplyingClient(),  # type: ignore[arg-type]
        cache=cache,
        recorder=FakeRecorder(),
        field_manager=FIELD_MANAGER,
        stamp=STAMP,
        recent=recent,
    )
    child = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "main", "image": "x:1"}]}}},
    }
    await syncer.sync(OWNER, [Desired(kinds.DEPLOYMENT, child)], owned=[])
    [(key, (*_, remembered))] = list(recent._entries.items())
    assert key[-1] == "d"
    assert "managedFields" not in remembered["metadata"]
    assert remembered["spec"] == {"replicas": 1}
    assert remembered["status"] == {"replicas": 0}
    assert STAMP.recorded(remembered) is not None
