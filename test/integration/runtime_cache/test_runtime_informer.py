"""Informers against the real API server: events arrive, scoping works, and the cache reconverges
after the kube-apiserver restarts mid-watch and after etcd compaction forces a 410."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from dynamo_operator.internal.cache.cache import Cache
from dynamo_operator.internal.cache.informer import SharedInformer
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import Listed, Phase, Scope
from dynamo_operator.internal.cache.transform import keep_fields
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, SECRET
from localcluster import ETCD, LocalCluster, http
from testsupport.api import eventually

pytestmark = pytest.mark.cluster

ROOT_CA = "kube-root-ca.crt"  # kcm publishes it into every namespace; not ours


class Recorder:
    """Records (event, name) pairs; only ever appends, as handlers must not block."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def _record(self, event: str, obj: Obj) -> None:
        if obj["metadata"]["name"] != ROOT_CA:
            self.events.append((event, obj["metadata"]["name"]))

    def on_add(self, obj: Obj) -> None:
        self._record("add", obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._record("update", new)

    def on_delete(self, obj: Obj) -> None:
        self._record("delete", obj)

    def saw(self, *wanted: tuple[str, str]) -> bool:
        return all(w in self.events for w in wanted)


def configmap(name: str, ns: str, value: str = "v", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "data": {"k": value}}


@pytest_asyncio.fixture
async def cache(api: Client) -> AsyncIterator[Cache]:
    cache = Cache(api)
    try:
        yield cache
    finally:
        await cache.stop()


def names(objs: list[Obj]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs if o["metadata"]["name"] != ROOT_CA)


async def test_informer_sees_creates_updates_and_deletes(api: Client, cache: Cache, ns: str) -> None:
    await api.create(CONFIG_MAP, configmap("before", ns))
    informer = cache.informer(CONFIG_MAP, namespace=ns)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    await cache.start()
    assert await cache.wait_for_sync(timeout=30)
    assert recorder.events == [("add", "before")]

    await api.create(CONFIG_MAP, configmap("live", ns))
    await api.patch(CONFIG_MAP, "live", {"data": {"k": "changed"}}, namespace=ns)
    await api.delete(CONFIG_MAP, "before", namespace=ns)
    await eventually(lambda: recorder.saw(("add", "live"), ("update", "live"), ("delete", "before")))
    live = cache.get(CONFIG_MAP, f"{ns}/live")
    assert live is not None and live["data"] == {"k": "changed"}
    assert "managedFields" not in live["metadata"]
    assert cache.get(CONFIG_MAP, f"{ns}/before") is None
    assert recorder.events.index(("add", "live")) < recorder.events.index(("update", "live"))


async def test_late_handler_replays_and_scoped_informers_filter(api: Client, cache: Cache, ns: str) -> None:
    """Label-selected and transformed informers hold only what they asked for."""
    await api.create(CONFIG_MAP, configmap("blue", ns, labels={"color": "blue"}))
    await api.create(CONFIG_MAP, configmap("red", ns, labels={"color": "red"}))
    await api.create(
        SECRET,
        {
            "metadata": {"name": "reg", "namespace": ns},
            "type": "Opaque",
            "data": {"keep": "eA==", "drop": "eQ=="},
        },
    )
    blue = cache.informer(CONFIG_MAP, namespace=ns, label_selector="color=blue")
    secrets = cache.informer(SECRET, namespace=ns, transform=keep_fields("type", data_keys=["keep"]))
    await cache.start()
    assert await cache.wait_for_sync(timeout=30)
    assert blue.store.keys() == [f"{ns}/blue"]
    secret = secrets.store.get(f"{ns}/reg")
    assert secret is not None and secret["data"] == {"keep": "eA=="} and secret["type"] == "Opaque"

    late = Recorder()
    blue.add_event_handler(late)
    assert late.events == [("add", "blue")]


async def test_cache_reconverges_after_apiserver_restart(
    api: Client, cache: Cache, ns: str, local_cluster: LocalCluster
) -> None:
    """Stop kube-apiserver mid-watch, delete an object behind its back (straight in etcd), start it
    again: the same informer, never restarted, drops the object and keeps receiving events."""
    for name in ("stay", "doomed"):
        await api.create(CONFIG_MAP, configmap(name, ns))
    informer = cache.informer(CONFIG_MAP, namespace=ns)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    await cache.start()
    assert await cache.wait_for_sync(timeout=30)
    await api.create(CONFIG_MAP, configmap("watched", ns))
    await eventually(lambda: recorder.saw(("add", "watched")))
    assert informer.reflector.phase is Phase.WATCH

    local = local_cluster
    local.stop_component("kube-apiserver")
    try:
        # The informer notices the dropped stream and starts backing off against a dead server.
        await eventually(lambda: informer.reflector.last_error is not None, timeout=30)
        etcd = f"http://127.0.0.1:{local._state()['ports'][ETCD]}/v3/kv/deleterange"
        key = base64.b64encode(f"/registry/configmaps/{ns}/doomed".encode()).decode()
        status, body = http(etcd, method="POST", body={"key": key})
        assert status == 200 and b'"deleted":"1"' in body, body
    finally:
        local.start_component("kube-apiserver")

    await eventually(lambda: recorder.saw(("delete", "doomed")), timeout=90)
    await api.create(CONFIG_MAP, configmap("after", ns))
    await eventually(lambda: recorder.saw(("add", "after")), timeout=60)
    assert names(informer.store.list()) == ["after", "stay", "watched"]
    assert len(cache.informers()) == 1 and informer.has_synced()


async def test_compaction_forces_410_then_relist_drops_deleted(
    api: Client, ns: str, local_cluster: LocalCluster
) -> None:
    """Driven step by step: LIST, then changes the informer does not see, then etcd compaction and
    an apiserver restart (empty watch cache); the next WATCH from the old rv gets 410 Gone, and
    the relist emits the delete and the add it missed."""
    for name in ("a", "b"):
        await api.create(CONFIG_MAP, configmap(name, ns))
    informer = SharedInformer(api, Scope(CONFIG_MAP, ns))
    recorder = Recorder()
    informer.add_event_handler(recorder)
    reflector = informer.reflector
    assert isinstance(await reflector.step(), Listed)
    old_rv = reflector.resource_version

    await api.delete(CONFIG_MAP, "b", namespace=ns)
    await api.create(CONFIG_MAP, configmap("c", ns))
    for i in range(3):  # move the revision well past old_rv
        await api.patch(CONFIG_MAP, "c", {"data": {"k": str(i)}}, namespace=ns)
    local_cluster.compact_etcd()
    local_cluster.restart_apiserver()

    outcome = await reflector.step()
    for _ in range(5):  # a connection dropped by the restart may first cost a backoff round
        if isinstance(outcome, errors.Gone):
            break
        outcome = await reflector.step()
    assert isinstance(outcome, errors.Gone), outcome
    assert reflector.phase is Phase.LIST

    assert isinstance(await reflector.step(), Listed)
    assert reflector.resource_version != old_rv
    assert recorder.saw(("delete", "b"), ("add", "c"))
    assert names(informer.store.list()) == ["a", "c"]


async def test_metadata_only_informer_gets_no_payload(api: Client, cache: Cache, ns: str) -> None:
    """The server strips everything but metadata; objects still say what kind they are."""
    await api.create(
        SECRET, {"metadata": {"name": "s", "namespace": ns, "labels": {"a": "b"}}, "stringData": {"k": "v"}}
    )
    informer = cache.informer(SECRET, namespace=ns, metadata_only=True)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    await cache.start()
    assert await cache.wait_for_sync(timeout=30)
    await api.patch(SECRET, "s", {"metadata": {"labels": {"a": "c"}}}, namespace=ns)
    await eventually(lambda: recorder.saw(("update", "s")))
    obj = informer.store.get(f"{ns}/s")
    assert obj is not None
    assert set(obj) == {"apiVersion", "kind", "metadata"}
    assert (obj["apiVersion"], obj["kind"], obj["metadata"]["labels"]) == ("v1", "Secret", {"a": "c"})
