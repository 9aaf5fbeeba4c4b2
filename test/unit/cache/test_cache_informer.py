"""Informer delivery: store first, handlers in order, relist diffs, late handlers replayed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from dynamo_operator.internal.cache.cache import Cache, InformerNotRegistered
from dynamo_operator.internal.cache.informer import SharedInformer
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import Scope
from dynamo_operator.internal.cache.transform import metadata_only
from dynamo_operator.internal.client.model import ListPage
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, SECRET


def cm(name: str, rv: str, ns: str = "a", **extra: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv, **extra}, "data": {"k": rv}}


class Recorder:
    """An EventHandler that logs what it saw, and what the store held at that moment."""

    def __init__(self, informer: SharedInformer | None = None, tag: str = "") -> None:
        self.events: list[tuple[str, ...]] = []
        self.informer = informer
        self.tag = tag

    def _seen(self, obj: Obj) -> str:
        key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        if self.informer is None:
            return ""
        stored = self.informer.store.get(key)
        return stored["metadata"]["resourceVersion"] if stored else "-"

    def on_add(self, obj: Obj) -> None:
        self.events.append((self.tag + "add", obj["metadata"]["name"], obj["metadata"]["resourceVersion"]))

    def on_update(self, old: Obj, new: Obj) -> None:
        self.events.append(
            (
                self.tag + "update",
                new["metadata"]["name"],
                old["metadata"]["resourceVersion"],
                self._seen(new),
            )
        )

    def on_delete(self, obj: Obj) -> None:
        self.events.append((self.tag + "delete", obj["metadata"]["name"], self._seen(obj)))


class NoSource:
    async def list_page(self, *a: Any, **kw: Any) -> ListPage:
        raise AssertionError("not used")

    def watch(self, *a: Any, **kw: Any) -> Any:
        raise AssertionError("not used")


@pytest.fixture
def informer() -> SharedInformer:
    return SharedInformer(NoSource(), Scope(CONFIG_MAP))


def test_initial_list_is_adds_then_synced(informer: SharedInformer) -> None:
    rec = Recorder()
    informer.add_event_handler(rec)
    synced: list[bool] = []
    informer.on_synced(lambda: synced.append(True))
    assert not informer.has_synced()
    informer.replace([cm("x", "1"), cm("y", "1")])
    assert rec.events == [("add", "x", "1"), ("add", "y", "1")]
    assert informer.has_synced() and synced == [True]


def test_relist_emits_adds_updates_and_deletes_for_vanished_objects(informer: SharedInformer) -> None:
    """Objects deleted while not watching come out of the relist as deletes with their last state."""
    informer.replace([cm("keep", "1"), cm("change", "1"), cm("gone", "1")])
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    rec.events.clear()
    informer.replace([cm("keep", "1"), cm("change", "5"), cm("new", "5")])
    assert sorted(rec.events) == sorted(
        [("update", "change", "1", "5"), ("add", "new", "5"), ("delete", "gone", "-")]
    )
    assert sorted(informer.store.keys()) == ["a/change", "a/keep", "a/new"]


def test_update_with_unchanged_resource_version_is_not_delivered(informer: SharedInformer) -> None:
    informer.replace([cm("x", "1")])
    rec = Recorder()
    informer.add_event_handler(rec)
    rec.events.clear()
    informer.upsert(cm("x", "1"))
    informer.upsert(cm("x", "2"))
    assert rec.events == [("update", "x", "1", "")]


def test_store_is_updated_before_handlers_run(informer: SharedInformer) -> None:
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    informer.replace([cm("x", "1")])
    informer.upsert(cm("x", "2"))
    informer.delete(cm("x", "3"))
    assert rec.events[1:] == [("update", "x", "1", "2"), ("delete", "x", "-")]


def test_handlers_are_called_in_registration_order_and_event_order(informer: SharedInformer) -> None:
    log: list[tuple[str, ...]] = []
    first, second = Recorder(tag="1:"), Recorder(tag="2:")
    first.events = second.events = log  # one shared timeline
    informer.add_event_handler(first)
    informer.add_event_handler(second)
    informer.replace([])
    for rv in ("1", "2", "3"):
        informer.upsert(cm("x", rv))
    assert log == [
        ("1:add", "x", "1"),
        ("2:add", "x", "1"),
        ("1:update", "x", "1", ""),
        ("2:update", "x", "1", ""),
        ("1:update", "x", "2", ""),
        ("2:update", "x", "2", ""),
    ]


def test_late_handler_gets_current_objects_as_adds(informer: SharedInformer) -> None:
    informer.replace([cm("x", "1"), cm("y", "2")])
    informer.delete(cm("y", "3"))
    rec = Recorder()
    informer.add_event_handler(rec)
    assert rec.events == [("add", "x", "1")]


def test_a_failing_handler_does_not_stop_delivery(informer: SharedInformer) -> None:
    class Broken(Recorder):
        def on_add(self, obj: Obj) -> None:
            raise RuntimeError("handler bug")

    rec = Recorder()
    informer.add_event_handler(Broken())
    informer.add_event_handler(rec)
    informer.replace([cm("x", "1")])
    assert rec.events == [("add", "x", "1")]


def test_managed_fields_are_stripped_and_transform_applied() -> None:
    informer = SharedInformer(NoSource(), Scope(SECRET), transform=metadata_only)
    secret = cm("s", "1", managedFields=[{"manager": "m"}])
    informer.replace([secret])
    stored = informer.store.get("a/s")
    assert stored is not None
    assert "managedFields" not in stored["metadata"] and "data" not in stored


def test_deleted_event_for_unknown_object_is_still_delivered(informer: SharedInformer) -> None:
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.delete(cm("never-seen", "9"))
    assert rec.events == [("delete", "never-seen", "")]


# -- the Cache façade ----------------------------------------------------------------------------


def test_informers_are_shared_per_scope() -> None:
    cache = Cache(NoSource())
    a = cache.informer(CONFIG_MAP)
    assert cache.informer(CONFIG_MAP) is a
    assert cache.informer(CONFIG_MAP, namespace="x") is not a
    assert cache.informer(CONFIG_MAP, label_selector="app=x") is not a
    assert cache.informer(CONFIG_MAP, field_selector="metadata.name=x") is not a
    assert len(cache.informers()) == 4


def test_conflicting_transform_is_refused() -> None:
    cache = Cache(NoSource())
    cache.informer(SECRET, transform=metadata_only)
    with pytest.raises(ValueError, match="transform"):
        cache.informer(SECRET, transform=lambda o: o)


def test_reads_go_to_the_unfiltered_informer() -> None:
    cache = Cache(NoSource())
    filtered = cache.informer(CONFIG_MAP, label_selector="app=x")
    filtered.replace([cm("only-filtered", "1")])
    full = cache.informer(CONFIG_MAP)
    full.replace([cm("x", "1", labels={"app": "x"}), cm("y", "1", ns="b")])
    assert cache.get(CONFIG_MAP, "a/x") is not None
    assert cache.get(CONFIG_MAP, "a/only-filtered") is None
    assert [o["metadata"]["name"] for o in cache.list(CONFIG_MAP, namespace="b")] == ["y"]
    assert [o["metadata"]["name"] for o in cache.list(CONFIG_MAP, labels={"app": "x"})] == ["x"]
    assert cache.by_index(CONFIG_MAP, "namespace", "a")[0]["metadata"]["name"] == "x"


def test_reading_an_unregistered_resource_raises() -> None:
    with pytest.raises(InformerNotRegistered):
        Cache(NoSource()).get(DEPLOYMENT, "a/x")


def test_reads_never_fall_back_to_a_filtered_informer() -> None:
    """A label-scoped informer holds a subset: reading "all" from it would silently miss objects."""
    cache = Cache(NoSource())
    cache.informer(CONFIG_MAP, label_selector="app=x").replace([cm("only-filtered", "1")])
    with pytest.raises(InformerNotRegistered, match="only filtered informers"):
        cache.get(CONFIG_MAP, "a/only-filtered")


class OneListSource:
    """Lists once, then watches that never end until cancelled."""

    def __init__(self) -> None:
        self.cancelled = 0

    async def list_page(self, resource: Any, **kw: Any) -> ListPage:
        return ListPage([cm("x", "1")], "1", None)

    def watch(self, *a: Any, **kw: Any) -> Any:
        source = self

        class Ctx:
            async def __aenter__(self) -> Any:
                return self

            async def __aexit__(self, *exc: object) -> None:
                source.cancelled += 1

            def __aiter__(self) -> Any:
                return self

            async def __anext__(self) -> Any:
                await asyncio.Event().wait()

        return Ctx()


async def test_cache_start_sync_late_registration_and_stop() -> None:
    source = OneListSource()
    cache = Cache(source)
    cache.informer(CONFIG_MAP)
    await cache.start()
    assert await cache.wait_for_sync(timeout=5)
    late = cache.informer(SECRET)  # registered after start: started at once
    assert await late.wait_for_sync(timeout=5)
    assert cache.has_synced()
    await cache.stop()
    assert source.cancelled == 2


async def test_a_resource_is_current_once_its_list_landed_and_never_when_uncached() -> None:
    cache = Cache(OneListSource())
    cache.informer(CONFIG_MAP)
    assert not cache.is_current(CONFIG_MAP)  # not started
    await cache.start()
    assert await cache.wait_for_sync(timeout=5)
    assert cache.is_current(CONFIG_MAP)
    assert not cache.is_current(SECRET)  # nothing caches it
    await cache.stop()


async def test_wait_for_sync_times_out() -> None:
    cache = Cache(OneListSource())
    cache.informer(CONFIG_MAP)  # never started
    assert await cache.wait_for_sync(timeout=0.05) is False


# -- periodic resync -----------------------------------------------------------------------------


def test_resync_redelivers_every_object_as_an_unchanged_update(informer: SharedInformer) -> None:
    """Resync is the one case where old and new are the same object (same resourceVersion)."""
    rec = Recorder()
    informer.add_event_handler(rec)
    informer.resync()  # before the first list: nothing to resync
    informer.replace([cm("x", "1"), cm("y", "4")])
    rec.events.clear()
    informer.resync()
    assert sorted(rec.events) == [("update", "x", "1", ""), ("update", "y", "4", "")]


def test_resync_period_has_a_floor() -> None:
    with pytest.raises(ValueError, match="at least"):
        SharedInformer(NoSource(), Scope(CONFIG_MAP), resync_period=0.1)


class SteppingClock:
    """Each sleep returns at once (recording its length) until `limit` sleeps, then parks forever."""

    def __init__(self, limit: int) -> None:
        self.sleeps: list[float] = []
        self.limit = limit

    def now(self) -> float:
        return sum(self.sleeps)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if len(self.sleeps) >= self.limit:
            await asyncio.Event().wait()
        await asyncio.sleep(0)


async def test_resync_runs_about_once_per_period_with_jitter() -> None:
    clock = SteppingClock(limit=4)
    informer = SharedInformer(NoSource(), Scope(CONFIG_MAP), clock=clock, resync_period=60.0)
    informer.replace([cm("x", "1")])
    rec = Recorder()
    informer.add_event_handler(rec)
    rec.events.clear()
    task = asyncio.create_task(informer._resync_forever(60.0))
    for _ in range(100):
        if len(clock.sleeps) >= clock.limit:
            break
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rec.events == [("update", "x", "1", "")] * 3
    assert all(54.0 <= s <= 66.0 for s in clock.sleeps)


def test_relist_turns_a_recreated_object_into_delete_then_add(informer: SharedInformer) -> None:
    """Same name, new UID: the old object is gone and a new one exists; no update between them."""
    informer.replace([cm("x", "1", uid="old")])
    rec = Recorder()
    informer.add_event_handler(rec)
    rec.events.clear()
    informer.replace([cm("x", "9", uid="new")])
    assert rec.events == [("delete", "x", ""), ("add", "x", "9")]


async def test_removed_informer_stops_and_a_new_one_starts_fresh() -> None:
    """remove_informer cancels the watch and forgets store and handlers; reads then raise until an
    informer for the scope is asked for again, which lists anew (the others keep running)."""
    source = OneListSource()
    cache = Cache(source)
    other = cache.informer(SECRET)
    first = cache.informer(CONFIG_MAP)
    await cache.start()
    assert await cache.wait_for_sync(timeout=5)
    assert await cache.remove_informer(CONFIG_MAP) is True
    assert source.cancelled == 1
    assert await cache.remove_informer(CONFIG_MAP) is False
    with pytest.raises(InformerNotRegistered):
        cache.get(CONFIG_MAP, "a/x")
    second = cache.informer(CONFIG_MAP)
    assert second is not first
    assert await second.wait_for_sync(timeout=5)
    assert cache.get(CONFIG_MAP, "a/x") is not None
    assert other in cache.informers()
    await cache.stop()


def test_reads_move_to_a_cluster_wide_informer_registered_after_a_namespaced_one() -> None:
    """The reader is remembered per resource, and forgotten whenever the informers change."""
    cache = Cache(NoSource())
    cache.informer(CONFIG_MAP, namespace="a").replace([cm("in-a", "1")])
    assert cache.get(CONFIG_MAP, "a/in-a") is not None
    cache.informer(CONFIG_MAP).replace([cm("everywhere", "1", ns="b")])
    assert cache.get(CONFIG_MAP, "a/in-a") is None
    assert cache.get(CONFIG_MAP, "b/everywhere") is not None


async def test_reads_of_a_removed_informer_raise() -> None:
    cache = Cache(NoSource())
    cache.informer(CONFIG_MAP).replace([cm("x", "1")])
    assert cache.get(CONFIG_MAP, "a/x") is not None
    await cache.remove_informer(CONFIG_MAP)
    with pytest.raises(InformerNotRegistered):
        cache.get(CONFIG_MAP, "a/x")
