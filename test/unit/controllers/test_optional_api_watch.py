"""OptionalApiWatch: CRD events → re-read → publish in order (prepare, switch, changed); read errors
keep the previous answer and are retried with backoff."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.optional_api_watch import OptionalApiWatch, crd_presence
from dynamo_operator.optional_apis import OPTIONAL_APIS
from unit.controllers.optional_apis_testlib import crd

LWS = next(api for api in OPTIONAL_APIS if api.name == "lws")
ISTIO = next(api for api in OPTIONAL_APIS if api.name == "istio")


def meta(name: str, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": "u", "resourceVersion": "1", **extra}}


class Store:
    """The CRD informer's store: which CRDs exist (trimmed objects by name)."""

    def __init__(self, *names: str) -> None:
        self.objects = {n: meta(n) for n in names}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.objects.get(key)


class Client:
    """GET of a CRD: the scripted answer per name (an object, or an exception to raise)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.gets: list[str] = []

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        assert resource == CUSTOM_RESOURCE_DEFINITION
        self.gets.append(name)
        answer = self.answers.get(name, errors.NotFound(404, "NotFound"))
        if isinstance(answer, BaseException):
            raise answer
        return answer  # type: ignore[no-any-return]


class Subscriber:
    """Records each call with what the watch published at that moment."""

    def __init__(self, watch: OptionalApiWatch) -> None:
        self.watch = watch
        self.calls: list[tuple[str, Capabilities, Capabilities]] = []
        self.changed_event = asyncio.Event()

    async def prepare(self, capabilities: Capabilities) -> None:
        self.calls.append(("prepare", capabilities, self.watch.current))

    async def changed(self, old: Capabilities, new: Capabilities) -> None:
        self.calls.append(("changed", new, self.watch.current))
        self.changed_event.set()


class Clock:
    """Sleeps return at once; the waits are recorded and `on_sleep` runs during each."""

    def __init__(self, on_sleep: Callable[[], None] = lambda: None) -> None:
        self.waits: list[float] = []
        self.on_sleep = on_sleep

    def now(self) -> float:
        return 0.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.on_sleep()
        await asyncio.sleep(0)


def make(
    store: Store, client: Client, initial: Capabilities | None = None, clock: Clock | None = None
) -> tuple[OptionalApiWatch, Subscriber]:
    watch = OptionalApiWatch(
        client=client, crds=store, initial=initial or Capabilities(), clock=clock or Clock()
    )
    sub = Subscriber(watch)
    watch.subscribe(sub)
    return watch, sub


async def test_an_appearing_api_is_prepared_for_before_it_is_published() -> None:
    """Subscribers start what the API needs while generation still sees the old set; `changed`
    comes after the switch."""
    watch, sub = make(Store(LWS.crd_name), Client({LWS.crd_name: crd(LWS)}))
    assert await watch.refresh()
    new = Capabilities(lws=True)
    assert watch.current == new
    assert sub.calls == [("prepare", new, Capabilities()), ("changed", new, new)]


async def test_no_change_publishes_nothing() -> None:
    watch, sub = make(Store(LWS.crd_name), Client({LWS.crd_name: crd(LWS)}), Capabilities(lws=True))
    assert await watch.refresh()
    assert sub.calls == []


async def test_a_vanished_crd_is_absent_without_asking_the_server() -> None:
    client = Client({})
    watch, sub = make(Store(), client, Capabilities(lws=True, istio=True))
    assert await watch.refresh()
    assert watch.current == Capabilities()
    assert client.gets == []
    assert [c[0] for c in sub.calls] == ["prepare", "changed"]


async def test_a_crd_being_deleted_counts_as_absent() -> None:
    store = Store()
    store.objects[LWS.crd_name] = meta(LWS.crd_name, deletionTimestamp="2025-01-01T00:00:00Z")
    watch, _ = make(store, Client({LWS.crd_name: crd(LWS)}), Capabilities(lws=True))
    await watch.refresh()
    assert watch.current == Capabilities()


async def test_a_crd_not_established_yet_is_not_served() -> None:
    watch, _ = make(Store(LWS.crd_name), Client({LWS.crd_name: crd(LWS, established=None)}))
    await watch.refresh()
    assert watch.current == Capabilities()


async def test_an_unreadable_crd_keeps_its_previous_answer() -> None:
    """A 503 while reading the LWS CRD says nothing about LWS: it stays served; istio still updates."""
    client = Client({LWS.crd_name: errors.ServerError(503, "ServiceUnavailable"), ISTIO.crd_name: crd(ISTIO)})
    watch, _ = make(Store(LWS.crd_name, ISTIO.crd_name), client, Capabilities(lws=True))
    assert await watch.refresh() is False
    assert watch.current == Capabilities(lws=True, istio=True)


def test_only_crds_of_the_table_mark_the_watch_dirty() -> None:
    watch, _ = make(Store(), Client({}))
    watch._dirty.clear()
    watch.on_add(meta("widgets.example.com"))
    watch.on_update(meta("widgets.example.com"), meta("widgets.example.com"))
    assert not watch._dirty.is_set()
    watch.on_delete(meta(LWS.crd_name))
    assert watch._dirty.is_set()


async def test_the_loop_retries_an_unreadable_crd_after_a_backoff() -> None:
    """First read fails (503), the loop waits a backoff and reads again: LWS appears without any
    further CRD event."""
    client = Client({LWS.crd_name: errors.ServerError(503, "ServiceUnavailable")})
    clock = Clock(on_sleep=lambda: client.answers.update({LWS.crd_name: crd(LWS)}))
    watch, sub = make(Store(LWS.crd_name), client, clock=clock)
    runner = asyncio.create_task(watch.run())
    try:
        await asyncio.wait_for(sub.changed_event.wait(), timeout=5)
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
    assert watch.current == Capabilities(lws=True)
    assert len(clock.waits) >= 1
    assert client.gets.count(LWS.crd_name) >= 2


def test_crd_presence_keeps_only_what_tells_a_change() -> None:
    obj = {
        "apiVersion": "meta.k8s.io/v1",
        "kind": "PartialObjectMetadata",
        "metadata": {
            "name": LWS.crd_name,
            "uid": "u",
            "resourceVersion": "7",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "x" * 10_000},
            "labels": {"a": "b"},
        },
    }
    assert crd_presence(obj)["metadata"] == {"name": LWS.crd_name, "uid": "u", "resourceVersion": "7"}


async def test_a_built_in_api_keeps_its_start_up_answer() -> None:
    """DRA (resource.k8s.io) has no CRD: the watch neither reads one for it nor takes it away."""
    client = Client({LWS.crd_name: crd(LWS)})
    watch = OptionalApiWatch(client=client, crds=Store(LWS.crd_name), initial=Capabilities(dra=True))
    assert await watch.refresh()
    assert watch.current == Capabilities(lws=True, dra=True)
    assert client.gets == [LWS.crd_name]
