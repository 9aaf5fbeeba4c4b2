"""Sugar over `Controller` + event handlers: `for_` / `owns` / `watches`, then `complete`.

`for_(R)` is `watches(R, own_key)`; `owns(R)` is `watches(R, controller_owner_keys(<for resource>))`.
Every watch of a controller is declared here, the filtered ones too: `watches(..., informer=InformerOptions(
label_selector=..., transform=..., indexers=...))` watches through a label/field-scoped, trimmed or
metadata-only informer (controller-runtime's `WatchesRawSource`, kube-rs `watches_stream`), and
`informer(R, options)` hands out the same shared informer for a reconciler that reads its store.
`watches_channel` takes generic events that no informer carries (see `source.Channel`).
Nobody outside the controller touches its queue.
`creates_first`: objects of the For kind seen for the first time (created, or listed at start-up) are
handed to workers before keys queued by any other event (see `workqueue.queue`).
Mistakes (no `for_`, two `for_`) are reported by `complete()`, not at the call that made them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, Protocol, Self, TypeVar

from dynamo_operator.internal.cache.interface import IndexFunc, Informer
from dynamo_operator.internal.cache.transform import Transform
from dynamo_operator.internal.client.gate import Priority
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import Clock
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.handlers import EnqueueMapped, Mapper, controller_owner_keys, own_key
from dynamo_operator.internal.controller.predicates import Predicate
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.workqueue.interface import WorkQueue
from dynamo_operator.internal.workqueue.rate_limiter import RateLimiter
from dynamo_operator.internal.workqueue.rate_limiting import RateLimitingQueue

T = TypeVar("T")
R_co = TypeVar("R_co", covariant=True)
# Makes a controller's queue from its name and rate limiter (controller-runtime's `Options.NewQueue`).
NewQueue = Callable[[str, RateLimiter[str] | None], WorkQueue[str]]


def _no_indexers() -> Mapping[str, IndexFunc]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class InformerOptions:
    """How the informer behind a watch is scoped, shaped and indexed. The default is the plain shared
    informer of the resource. Selectors, `metadata_only` and `transform` make an informer of its own
    scope (the cache never serves generic reads from it: read it through `Builder.informer`)."""

    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False
    transform: Transform | None = None
    indexers: Mapping[str, IndexFunc] = field(default_factory=_no_indexers)

    @property
    def scope(self) -> tuple[object, ...]:
        """What makes the informer another one (the indexers only add to it)."""
        return (self.label_selector, self.field_selector, self.metadata_only, self.transform)


PLAIN = InformerOptions()


def group_kind_key(resource: Resource) -> str:
    """How a kind is named in per-kind settings: "Kind.group", or "Kind" for the core API (the
    spelling of `kubectl api-resources` and controller-runtime's `GroupKindConcurrency`)."""
    return f"{resource.kind}.{resource.group}" if resource.group else resource.kind


class InformerSource(Protocol):
    """The part of the cache the builder needs: one shared informer per resource and scope."""

    def informer(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        transform: Transform | None = None,
        metadata_only: bool = False,
    ) -> Informer: ...


@dataclass(frozen=True, slots=True)
class _Watch:
    resource: Resource
    mapper: Mapper | None  # None: owner keys of the For resource, resolved in complete()
    predicates: tuple[Predicate, ...]
    options: InformerOptions = PLAIN
    urgent: Predicate | None = None


@dataclass(frozen=True, slots=True)
class Built(Generic[R_co]):
    """What a reconciler module's `build(mgr, settings)` made: its registered controller and the
    reconciler itself (the wiring adds sources to the one and reads the owned kinds of the other)."""

    controller: Controller
    reconciler: R_co


class Builder:
    """Declares what a controller watches; `complete(reconciler)` wires and registers it."""

    def __init__(
        self,
        name: str,
        *,
        cache: InformerSource,
        register: Callable[[Controller], None],
        namespace: str | None = None,
        max_concurrent_reconciles: int = 1,
        group_kind_concurrency: Mapping[str, int] | None = None,
        creates_first: bool = False,
        clock: Clock | None = None,
        new_queue: NewQueue | None = None,
    ) -> None:
        self._name = name
        self._cache = cache
        self._register = register
        self._namespace = namespace
        self._max_concurrent = max_concurrent_reconciles
        self._group_kind_concurrency = dict(group_kind_concurrency or {})
        self._workers_set: int | None = None  # with_options wins over the per-kind setting
        self._creates_first = creates_first
        self._clock = clock
        self._new_queue = new_queue
        self._rate_limiter: RateLimiter[str] | None = None
        self._request_priority = Priority.NORMAL
        self._for: list[_Watch] = []
        self._watches: list[_Watch] = []
        self._channels: list[Callable[[Controller], None]] = []
        # Informers handed out so far, by resource and scope, with the index names added to each.
        self._informers: dict[tuple[object, ...], tuple[Informer, set[str]]] = {}
        self._global_predicates: tuple[Predicate, ...] = ()

    def for_(self, resource: Resource, *preds: Predicate, predicates: Sequence[Predicate] = ()) -> Self:
        """Reconcile objects of `resource`: each event enqueues the object's own key."""
        self._for.append(_Watch(resource, own_key, (*preds, *predicates)))
        return self

    def owns(
        self,
        resource: Resource,
        *preds: Predicate,
        predicates: Sequence[Predicate] = (),
        urgent: Predicate | None = None,
    ) -> Self:
        """Reconcile the owner when a child changes: the child's controller ownerReference of the
        For kind gives the key. Updates that also pass `urgent` queue the owner in the queue's urgent
        lane (before creations and re-syncs): for a change that finishes the owner's wait."""
        self._watches.append(_Watch(resource, None, (*preds, *predicates), urgent=urgent))
        return self

    def watches(
        self,
        resource: Resource,
        mapper: Mapper,
        *preds: Predicate,
        predicates: Sequence[Predicate] = (),
        informer: InformerOptions = PLAIN,
    ) -> Self:
        """Enqueue whatever keys `mapper(obj)` returns for each event on `resource`, as seen by the
        informer `informer` describes (default: the plain shared one)."""
        self._watches.append(_Watch(resource, mapper, (*preds, *predicates), informer))
        return self

    def watches_channel(self, channel: Channel[T], mapper: Callable[[T], Iterable[str]]) -> Self:
        """Enqueue the keys `mapper(item)` returns for every item sent on `channel`."""
        self._channels.append(lambda controller: controller.watch_channel(channel, mapper))
        return self

    def informer(self, resource: Resource, options: InformerOptions = PLAIN) -> Informer:
        """The shared informer a watch with these options uses, in this controller's namespace scope,
        indexed as `options` says: a reconciler reads a filtered informer's store through this handle.
        Asking again with equal options returns the same informer."""
        key = (resource, *options.scope)
        if key not in self._informers:
            self._informers[key] = (self._create(resource, options), set())
        informer, indexed = self._informers[key]
        if missing := {name: f for name, f in options.indexers.items() if name not in indexed}:
            informer.add_indexers(missing)
            indexed.update(missing)
        return informer

    def _create(self, resource: Resource, options: InformerOptions) -> Informer:
        namespace = self._namespace if resource.namespaced else None
        if options.scope == PLAIN.scope:
            return self._cache.informer(resource, namespace=namespace)  # the plain shared informer
        return self._cache.informer(
            resource,
            namespace=namespace,
            label_selector=options.label_selector,
            field_selector=options.field_selector,
            transform=options.transform,
            metadata_only=options.metadata_only,
        )

    def with_event_filter(self, *predicates: Predicate) -> Self:
        """Predicates applied to every watch of this controller."""
        self._global_predicates += predicates
        return self

    def with_options(
        self,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter[str] | None = None,
        new_queue: NewQueue | None = None,
        request_priority: Priority | None = None,
    ) -> Self:
        """`request_priority`: where this controller's API requests queue in the client's gate
        (internal/client/gate.py) when more are ready than it lets through."""
        if request_priority is not None:
            self._request_priority = request_priority
        if max_concurrent_reconciles is not None:
            self._workers_set = max_concurrent_reconciles
        if rate_limiter is not None:
            self._rate_limiter = rate_limiter
        if new_queue is not None:
            self._new_queue = new_queue
        return self

    def _workers(self, for_resource: Resource) -> int:
        """Workers of this controller: `with_options`, else the manager's setting for the For kind
        (`group_kind_key`), else the manager's default; controller-runtime's order."""
        if self._workers_set is not None:
            return self._workers_set
        return self._group_kind_concurrency.get(group_kind_key(for_resource), self._max_concurrent)

    def complete(self, reconciler: Reconciler) -> Controller:
        """Create the controller, attach its handlers to shared informers and register it."""
        if len(self._for) != 1:
            raise ValueError(
                f"controller {self._name!r}: for_() must be called exactly once, got {len(self._for)}"
            )
        for_resource = self._for[0].resource
        queue: WorkQueue[str] = (
            self._new_queue(self._name, self._rate_limiter)
            if self._new_queue is not None
            else RateLimitingQueue(name=self._name, rate_limiter=self._rate_limiter, clock=self._clock)
        )
        controller = Controller(
            name=self._name,
            reconciler=reconciler,
            queue=queue,
            max_concurrent_reconciles=self._workers(for_resource),
            request_priority=self._request_priority,
        )
        # Only the For kind's own creations jump the queue; a child's creation is a re-sync of its owner.
        for adds_first, watches in ((self._creates_first, self._for), (False, self._watches)):
            for watch in watches:
                mapper = watch.mapper or controller_owner_keys(for_resource)
                predicates = (*self._global_predicates, *watch.predicates)
                handler = EnqueueMapped(queue, mapper, predicates, adds_first=adds_first, urgent=watch.urgent)
                self.informer(watch.resource, watch.options).add_event_handler(handler)
        for watch_channel in self._channels:
            watch_channel(controller)
        self._register(controller)
        return controller
