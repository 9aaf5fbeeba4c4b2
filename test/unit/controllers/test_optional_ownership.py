"""OptionalOwnership: a child kind's informer, its owner handler and its place in `owned` come and go
with the optional API; every change requeues every owner."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.handlers import EnqueueMapped
from dynamo_operator.internal.controller.predicates import CHILD_CONTENT_CHANGED, CHILD_STATUS_CHANGED
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.optional_ownership import OptionalKind, OptionalOwnership

NS = "ns"


class Informer:
    def __init__(self) -> None:
        self.handlers: list[Any] = []
        self.waited = 0

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        self.waited += 1
        return True


class Cache:
    def __init__(self, owners: list[dict[str, Any]]) -> None:
        self.informers: dict[tuple[Resource, str | None], Informer] = {}
        self.removed: list[Resource] = []
        self.owners = owners

    def informer(self, resource: Resource, *, namespace: str | None = None) -> Informer:
        return self.informers.setdefault((resource, namespace), Informer())

    async def remove_informer(self, resource: Resource, *, namespace: str | None = None) -> bool:
        self.removed.append(resource)
        return self.informers.pop((resource, namespace), None) is not None

    def list(self, resource: Resource) -> list[dict[str, Any]]:
        return self.owners


class OwnerController:
    """The owner's controller as OptionalOwnership uses it; what its sources enqueue lands in `added`."""

    def __init__(self) -> None:
        self.added: list[str] = []

    def add(self, key: str) -> None:
        self.added.append(key)

    def watch(self, source: Any, mapper: Any, predicates: Any = ()) -> None:
        source.add_event_handler(EnqueueMapped(self, mapper, predicates))

    def watch_channel(self, channel: Channel[str], mapper: Any) -> None:
        channel.subscribe(lambda item: self.added.extend(mapper(item)))


class Reconciler:
    def __init__(self) -> None:
        self.owned: tuple[Resource, ...] = (kinds.DEPLOYMENT, kinds.SERVICE)


def make() -> tuple[OptionalOwnership, Cache, OwnerController, Reconciler]:
    owners = [{"metadata": {"name": n, "namespace": NS}} for n in ("a", "b")]
    cache, queue, reconciler = Cache(owners), OwnerController(), Reconciler()
    ownership = OptionalOwnership(
        cache=cache,  # type: ignore[arg-type]
        reconciler=reconciler,
        controller=queue,
        owner=kinds.DCD,
        namespace=NS,
        kinds=[
            OptionalKind(kinds.LWS, lambda c: c.lws, CHILD_STATUS_CHANGED),
            OptionalKind(kinds.POD_GROUP, lambda c: c.lws and c.volcano, CHILD_CONTENT_CHANGED),
        ],
    )
    return ownership, cache, queue, reconciler


def lws_child(owner: str) -> dict[str, Any]:
    ref = {"apiVersion": kinds.DCD.api_version, "kind": kinds.DCD.kind, "name": owner, "controller": True}
    return {
        "metadata": {
            "name": f"{owner}-0",
            "namespace": NS,
            "resourceVersion": "1",
            "ownerReferences": [ref],
        }
    }


def test_start_owns_what_the_start_up_apis_allow() -> None:
    ownership, cache, _, reconciler = make()
    ownership.start(Capabilities(lws=True))
    assert reconciler.owned == (kinds.DEPLOYMENT, kinds.SERVICE, kinds.LWS)
    assert list(cache.informers) == [(kinds.LWS, NS)]
    assert ownership.attached == {kinds.LWS}


def test_start_without_the_api_owns_and_watches_nothing_optional() -> None:
    ownership, cache, _, reconciler = make()
    ownership.start(Capabilities())
    assert reconciler.owned == (kinds.DEPLOYMENT, kinds.SERVICE)
    assert cache.informers == {}


async def test_an_appearing_api_starts_and_syncs_its_informer_before_it_is_owned() -> None:
    ownership, cache, queue, reconciler = make()
    ownership.start(Capabilities())
    new = Capabilities(lws=True)
    await ownership.prepare(new)
    informer = cache.informers[(kinds.LWS, NS)]
    assert informer.waited == 1
    assert reconciler.owned == (kinds.DEPLOYMENT, kinds.SERVICE)  # not yet: published next
    await ownership.changed(Capabilities(), new)
    assert reconciler.owned == (kinds.DEPLOYMENT, kinds.SERVICE, kinds.LWS)
    assert queue.added == ["ns/a", "ns/b"]


async def test_a_child_event_of_a_late_kind_requeues_its_owner() -> None:
    """As `Builder.owns` wires it: the child's controller ownerReference names the owner, and the
    kind's predicate filters (a deleted child always passes)."""
    ownership, cache, queue, _ = make()
    ownership.start(Capabilities())
    await ownership.prepare(Capabilities(lws=True))
    [handler] = cache.informers[(kinds.LWS, NS)].handlers
    handler.on_add(lws_child("a"))  # our own create: skipped, as for every owned kind
    handler.on_delete(lws_child("a"))
    assert queue.added == ["ns/a"]


async def test_a_vanishing_api_leaves_owned_then_stops_its_informer_and_requeues_owners() -> None:
    ownership, cache, queue, reconciler = make()
    ownership.start(Capabilities(lws=True, volcano=True))
    old, new = Capabilities(lws=True, volcano=True), Capabilities(volcano=True)
    await ownership.prepare(new)
    await ownership.changed(old, new)
    assert reconciler.owned == (kinds.DEPLOYMENT, kinds.SERVICE)
    assert cache.removed == [kinds.LWS, kinds.POD_GROUP]
    assert ownership.attached == frozenset()
    assert queue.added == ["ns/a", "ns/b"]


async def test_an_api_that_comes_back_gets_a_fresh_informer_and_handler() -> None:
    ownership, cache, _, reconciler = make()
    ownership.start(Capabilities(lws=True))
    await ownership.changed(Capabilities(lws=True), Capabilities())
    await ownership.prepare(Capabilities(lws=True))
    await ownership.changed(Capabilities(), Capabilities(lws=True))
    assert len(cache.informers[(kinds.LWS, NS)].handlers) == 1
    assert reconciler.owned[-1] == kinds.LWS


async def test_a_change_that_touches_no_owned_kind_still_requeues_owners() -> None:
    """A graph waiting for any API proceeds: every change requeues."""
    ownership, cache, queue, _ = make()
    ownership.start(Capabilities())
    await ownership.prepare(Capabilities(istio=True))
    await ownership.changed(Capabilities(), Capabilities(istio=True))
    assert cache.informers == {}
    assert queue.added == ["ns/a", "ns/b"]
