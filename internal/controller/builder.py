"""Sugar over `Controller` + event handlers: `for_` / `owns` / `watches`, then `complete`.

`for_(R)` is `watches(R, own_key)`; `owns(R)` is `watches(R, controller_owner_keys(<for resource>))`.
`creates_first`: objects of the For kind seen for the first time (created, or listed at start-up) are
handed to workers before keys queued by any other event (see `workqueue.queue`).
Mistakes (no `for_`, two `for_`) are reported by `complete()`, not at the call that made them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Self

from dynamo_operator.internal.cache.interface import Informer
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import Clock
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.handlers import EnqueueMapped, Mapper, controller_owner_keys, own_key
from dynamo_operator.internal.controller.predicates import Predicate
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.workqueue.rate_limiter import RateLimiter
from dynamo_operator.internal.workqueue.rate_limiting import RateLimitingQueue


class InformerSource(Protocol):
    """The part of the cache the builder needs: one shared informer per resource (and namespace)."""

    def informer(self, resource: Resource, *, namespace: str | None = None) -> Informer: ...


@dataclass(frozen=True, slots=True)
class _Watch:
    resource: Resource
    mapper: Mapper | None  # None: owner keys of the For resource, resolved in complete()
    predicates: tuple[Predicate, ...]


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
        creates_first: bool = False,
        clock: Clock | None = None,
    ) -> None:
        self._name = name
        self._cache = cache
        self._register = register
        self._namespace = namespace
        self._max_concurrent = max_concurrent_reconciles
        self._creates_first = creates_first
        self._clock = clock
        self._rate_limiter: RateLimiter[str] | None = None
        self._for: list[_Watch] = []
        self._watches: list[_Watch] = []
        self._global_predicates: tuple[Predicate, ...] = ()

    def for_(self, resource: Resource, *preds: Predicate, predicates: Sequence[Predicate] = ()) -> Self:
        """Reconcile objects of `resource`: each event enqueues the object's own key."""
        self._for.append(_Watch(resource, own_key, (*preds, *predicates)))
        return self

    def owns(self, resource: Resource, *preds: Predicate, predicates: Sequence[Predicate] = ()) -> Self:
        """Reconcile the owner when a child changes: the child's controller ownerReference of the
        For kind gives the key."""
        self._watches.append(_Watch(resource, None, (*preds, *predicates)))
        return self

    def watches(
        self, resource: Resource, mapper: Mapper, *preds: Predicate, predicates: Sequence[Predicate] = ()
    ) -> Self:
        """Enqueue whatever keys `mapper(obj)` returns for each event on `resource`."""
        self._watches.append(_Watch(resource, mapper, (*preds, *predicates)))
        return self

    def with_event_filter(self, *predicates: Predicate) -> Self:
        """Predicates applied to every watch of this controller."""
        self._global_predicates += predicates
        return self

    def with_options(
        self, *, max_concurrent_reconciles: int | None = None, rate_limiter: RateLimiter[str] | None = None
    ) -> Self:
        if max_concurrent_reconciles is not None:
            self._max_concurrent = max_concurrent_reconciles
        if rate_limiter is not None:
            self._rate_limiter = rate_limiter
        return self

    def complete(self, reconciler: Reconciler) -> Controller:
        """Create the controller, attach its handlers to shared informers and register it."""
        if len(self._for) != 1:
            raise ValueError(
                f"controller {self._name!r}: for_() must be called exactly once, got {len(self._for)}"
            )
        for_resource = self._for[0].resource
        queue: RateLimitingQueue[str] = RateLimitingQueue(
            name=self._name, rate_limiter=self._rate_limiter, clock=self._clock
        )
        controller = Controller(
            name=self._name,
            reconciler=reconciler,
            queue=queue,
            max_concurrent_reconciles=self._max_concurrent,
        )
        # Only the For kind's own creations jump the queue; a child's creation is a re-sync of its owner.
        for adds_first, watches in ((self._creates_first, self._for), (False, self._watches)):
            for watch in watches:
                mapper = watch.mapper or controller_owner_keys(for_resource)
                predicates = (*self._global_predicates, *watch.predicates)
                handler = EnqueueMapped(queue, mapper, predicates, adds_first=adds_first)
                namespace = self._namespace if watch.resource.namespaced else None
                self._cache.informer(watch.resource, namespace=namespace).add_event_handler(handler)
        self._register(controller)
        return controller
