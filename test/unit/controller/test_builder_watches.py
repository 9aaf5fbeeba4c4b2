"""The builder declares every watch: filtered, trimmed, metadata-only and indexed informers, channels
of generic events, and sources attached after start; keys reach the controller's queue only so."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, NAMESPACE, POD, SECRET, Resource
from dynamo_operator.internal.controller import Builder, Controller, Funcs, Result
from dynamo_operator.internal.controller.builder import InformerOptions
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.workqueue import RateLimitingQueue


class Reconciler:
    async def reconcile(self, key: str) -> Result:
        return Result()


class RecordingInformer:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.handlers: list[Any] = []
        self.indexers: dict[str, Any] = {}

    @property
    def store(self) -> Any:
        return self

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def add_indexers(self, indexers: Any) -> None:
        assert not set(indexers) & set(self.indexers), "an index added twice"
        self.indexers.update(indexers)

    def has_synced(self) -> bool:
        return True


class RecordingCache:
    """One informer per distinct scope, as the real cache shares them."""

    def __init__(self) -> None:
        self.informers: dict[tuple[Any, ...], RecordingInformer] = {}

    def informer(self, resource: Resource, **scope: Any) -> RecordingInformer:
        key = (resource.plural, *sorted((k, v) for k, v in scope.items() if k != "transform"))
        return self.informers.setdefault(key, RecordingInformer({"resource": resource.plural, **scope}))

    def only(self, plural: str, **where: Any) -> RecordingInformer:
        [found] = [
            i
            for i in self.informers.values()
            if i.scope["resource"] == plural and all(i.scope.get(k) == v for k, v in where.items())
        ]
        return found


QUEUES: dict[str, RateLimitingQueue[str]] = {}


def new_queue(name: str, rate_limiter: Any = None) -> RateLimitingQueue[str]:
    QUEUES[name] = RateLimitingQueue(name=name, rate_limiter=rate_limiter)
    return QUEUES[name]


def builder(name: str, cache: RecordingCache, namespace: str | None = "team") -> Builder:
    return Builder(name, cache=cache, register=lambda c: None, namespace=namespace, new_queue=new_queue)


async def drain(name: str) -> list[str]:
    queue = QUEUES[name]
    return [k for k in [await queue.get() for _ in range(len(queue))] if k is not None]


def pod(name: str, owner: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "team", "labels": {"owner": owner}}}


def owner_of(obj: dict[str, Any]) -> list[str]:
    return [f"team/{obj['metadata']['labels']['owner']}"]


def keep_metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": obj["metadata"]}


@pytest.mark.parametrize(
    "options",
    [
        InformerOptions(label_selector="owner"),
        InformerOptions(field_selector="type=kubernetes.io/dockerconfigjson"),
        InformerOptions(metadata_only=True),
        InformerOptions(transform=keep_metadata),
        InformerOptions(label_selector="owner", transform=keep_metadata, metadata_only=False),
    ],
    ids=["label-selector", "field-selector", "metadata-only", "transform", "selector-and-transform"],
)
async def test_a_filtered_watch_uses_an_informer_of_exactly_that_scope(options: InformerOptions) -> None:
    cache = RecordingCache()
    builder("filtered", cache).for_(DEPLOYMENT).watches(POD, owner_of, informer=options).complete(
        Reconciler()
    )
    informer = cache.only(
        "pods",
        namespace="team",
        label_selector=options.label_selector,
        field_selector=options.field_selector,
        metadata_only=options.metadata_only,
        transform=options.transform,
    )
    informer.handlers[0].on_add(pod("p", "web"))
    assert await drain("filtered") == ["team/web"]


async def test_a_plain_watch_and_a_filtered_watch_of_one_resource_are_two_informers() -> None:
    cache = RecordingCache()
    (
        builder("two-scopes", cache)
        .for_(DEPLOYMENT)
        .watches(POD, owner_of)
        .watches(POD, owner_of, informer=InformerOptions(label_selector="owner"))
        .complete(Reconciler())
    )
    assert len([i for i in cache.informers.values() if i.scope["resource"] == "pods"]) == 2


async def test_informer_hands_out_the_watched_informer_with_its_indexers_once() -> None:
    """A reconciler reads the store of the informer its watch uses; asking twice indexes once."""
    cache = RecordingCache()
    options = InformerOptions(label_selector="owner", indexers={"owner": owner_of})
    b = builder("indexed", cache)
    read = b.informer(POD, options)
    b.for_(DEPLOYMENT).watches(POD, owner_of, informer=options).complete(Reconciler())
    assert b.informer(POD, options) is read
    assert read is cache.only("pods", label_selector="owner")
    assert list(read.indexers) == ["owner"] and len(read.handlers) == 1


async def test_a_cluster_scoped_resource_is_watched_cluster_wide_in_a_namespaced_controller() -> None:
    cache = RecordingCache()
    builder("cluster-wide", cache).for_(DEPLOYMENT).watches(NAMESPACE, lambda o: []).complete(Reconciler())
    assert cache.only("namespaces").scope["namespace"] is None
    assert cache.only("deployments").scope["namespace"] == "team"


async def test_filtered_watch_events_pass_its_predicates() -> None:
    cache = RecordingCache()
    only_deletes = Funcs(on_create=lambda o: False, on_delete=lambda o: True)
    (
        builder("filtered-preds", cache)
        .for_(DEPLOYMENT)
        .watches(SECRET, owner_of, only_deletes, informer=InformerOptions(metadata_only=True))
        .complete(Reconciler())
    )
    [handler] = cache.only("secrets", metadata_only=True).handlers
    handler.on_add(pod("s", "ignored"))
    handler.on_delete(pod("s", "web"))
    assert await drain("filtered-preds") == ["team/web"]


async def test_a_channel_item_enqueues_the_mapped_keys_once_each() -> None:
    cache = RecordingCache()
    namespaces: Channel[str] = Channel()
    (
        builder("channel", cache)
        .for_(DEPLOYMENT)
        .watches_channel(namespaces, lambda ns: [f"{ns}/a", f"{ns}/b", f"{ns}/a"])
        .complete(Reconciler())
    )
    namespaces.send("team")
    assert await drain("channel") == ["team/a", "team/b"]


async def test_a_channel_item_sent_before_complete_reaches_nobody() -> None:
    """A channel delivers to the controllers built so far; nothing is buffered for later ones."""
    cache = RecordingCache()
    channel: Channel[str] = Channel()
    b = builder("late-channel", cache).for_(DEPLOYMENT).watches_channel(channel, lambda k: [k])
    channel.send("team/early")
    b.complete(Reconciler())
    channel.send("team/late")
    assert await drain("late-channel") == ["team/late"]


async def test_one_channel_feeds_every_controller_that_declared_it() -> None:
    cache = RecordingCache()
    channel: Channel[str] = Channel()
    for name in ("fan-a", "fan-b"):
        builder(name, cache).for_(CONFIG_MAP).watches_channel(channel, lambda k: [k]).complete(Reconciler())
    channel.send("team/x")
    assert await drain("fan-a") == ["team/x"] and await drain("fan-b") == ["team/x"]


async def test_controller_watch_attaches_a_source_after_complete() -> None:
    """A source that appears later (an informer of a newly served API) feeds the controller's queue."""
    cache = RecordingCache()
    controller: Controller = builder("late-source", cache).for_(DEPLOYMENT).complete(Reconciler())
    late = RecordingInformer({"resource": "widgets"})
    controller.watch(late, owner_of, (Funcs(on_create=lambda o: o["metadata"]["name"] != "skip"),))
    late.handlers[0].on_add(pod("skip", "nobody"))
    late.handlers[0].on_add(pod("p", "web"))
    assert await drain("late-source") == ["team/web"]


def test_the_controller_exposes_no_queue() -> None:
    controller = builder("private", RecordingCache()).for_(DEPLOYMENT).complete(Reconciler())
    assert not hasattr(controller, "queue")
