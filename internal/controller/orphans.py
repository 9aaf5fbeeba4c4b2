"""Deletes children whose controller owner is provably gone: a backstop for the garbage collector.

Kubernetes' garbage collector deletes a child once its owner is gone, but it can miss one. The
API server accepts an ownerReference to a UID that no longer exists, so a child created just after
its owner's deletion (by a controller acting on a stale cache) starts life as an orphan; and after
an API server restart kube-controller-manager's collector may fail to act on a deletion for
minutes. Such a child lives on, controlled by an owner that no longer exists.

The collector is told which owner kinds are ours and which child kinds to watch. A child becomes
a suspect when
- it appears (or its controller changes) while the cache does not show its owner with that UID, or
- its owner is deleted while the cache still holds the child;
its key is then queued `grace` seconds later, so that the garbage collector normally acts first and
the check finds nothing to do (a cache lookup, no request). A suspect still there after the grace,
whose owner the cache still lacks, is judged by live reads: the owner is GONE (404, or another UID
under its name; never "being deleted", never an API error) and the child, read again, is still
controlled by that owner and not being deleted. Only then is it deleted, with UID and
resourceVersion preconditions (exactly the object judged), in the background, with a log line and
a Warning Event.

Only objects whose one ownerReference is a controller reference to an owner kind are judged (an
object with further owners lives as long as any of them, and those are not ours to judge). Owners
and children are namespaced and share a namespace; a key is `namespace/<plural>.<group>/name`.

Call `sweep()` once the caches have synced (children that arrived before their owner's informer
had synced are judged there), then run a Controller with the collector as its reconciler.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import structlog
from dynamo_operator.internal.cache.interface import Informer, Obj
from dynamo_operator.internal.cache.store import CONTROLLER_INDEX
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.owners import OwnerReader, OwnerState, controller_uid, owner_state
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.events.interface import Recorder
from dynamo_operator.internal.workqueue.interface import WorkQueue
from dynamo_operator.internal.workqueue.rate_limiting import RateLimitingQueue

log = structlog.get_logger(__name__)

DEFAULT_GRACE_SECONDS = 15.0
"""How long the garbage collector gets before the collector looks. It normally needs well under a
second; a longer grace only delays the backstop, a shorter one risks duplicating its reads and
deletes under load."""

REASON = "OrphanDeleted"


class OrphanClient(OwnerReader, Protocol):
    """The requests the collector sends (a subset of internal.client.Client)."""

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = ...,
        propagation_policy: str | None = ...,
        preconditions: Mapping[str, str] | None = ...,
    ) -> None: ...


class OrphanCache(Protocol):
    """The cache reads the collector needs (a subset of internal.cache.Cache)."""

    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def list(self, resource: Resource) -> builtins.list[Obj]: ...
    def by_index(self, resource: Resource, index: str, value: str) -> builtins.list[Obj]: ...


class InformerSource(Protocol):
    """Shared informers by resource (internal.cache.Cache)."""

    def informer(self, resource: Resource, *, namespace: str | None = None) -> Informer: ...


def resource_token(resource: Resource) -> str:
    """`deployments.apps`, `services` (core): the resource part of a collector key."""
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


class OrphanCollector:
    """The reconciler of suspected orphans (see the module docstring)."""

    def __init__(
        self,
        *,
        client: OrphanClient,
        cache: OrphanCache,
        recorder: Recorder,
        owners: Sequence[Resource],
        grace: float = DEFAULT_GRACE_SECONDS,
    ) -> None:
        if any(not r.namespaced for r in owners):
            raise ValueError("owner kinds must be namespaced")
        self._client, self._cache, self._recorder = client, cache, recorder
        self._owners = {(r.group, r.kind): r for r in owners}
        self._children: dict[str, Resource] = {}
        self._grace = grace
        self._queue: WorkQueue[str] | None = None
        self._owner_informers: list[Informer] = []

    @property
    def children(self) -> tuple[Resource, ...]:
        return tuple(self._children.values())

    def add_children(self, resources: Iterable[Resource]) -> None:
        """Watch these child kinds too (before `bind`); duplicates are ignored."""
        if self._queue is not None:
            raise RuntimeError("add_children() after bind()")
        for resource in resources:
            if not resource.namespaced:
                raise ValueError(f"child kind {resource.kind} must be namespaced")
            self._children.setdefault(resource_token(resource), resource)

    def bind(self, informers: InformerSource, queue: WorkQueue[str], *, namespace: str | None) -> None:
        """Attach to the shared informers of every child and owner kind; suspects go to `queue`."""
        self._queue = queue
        for resource in self._children.values():
            informers.informer(resource, namespace=namespace).add_event_handler(_ChildEvents(self, resource))
        for resource in self._owners.values():
            informer = informers.informer(resource, namespace=namespace)
            informer.add_event_handler(_OwnerEvents(self))
            self._owner_informers.append(informer)

    def controller(
        self, informers: InformerSource, *, name: str, workers: int, namespace: str | None
    ) -> Controller:
        """Bind to the informers with a delaying queue of its own (suspects wait out the grace there)
        and return the controller whose workers judge them; the caller runs it."""
        queue: RateLimitingQueue[str] = RateLimitingQueue(name=name)
        self.bind(informers, queue, namespace=namespace)
        return Controller(name=name, reconciler=self, queue=queue, max_concurrent_reconciles=workers)

    def sweep(self) -> int:
        """Suspect every cached child whose owner the cache lacks; returns how many. Run once the
        caches have synced: before that the handlers cannot tell a missing owner from a late one."""
        queued = 0
        for resource in self._children.values():
            for child in self._cache.list(resource):
                queued += self._suspect(resource, child, synced=True)
        return queued

    # -- events ----------------------------------------------------------------------------------

    def child_seen(self, resource: Resource, child: Obj) -> None:
        """A child appeared or changed controller."""
        self._suspect(resource, child, synced=all(i.has_synced() for i in self._owner_informers))

    def owner_deleted(self, owner: Obj) -> None:
        """Every cached child of `owner` is suspect once the grace has passed."""
        uid = (owner.get("metadata") or {}).get("uid")
        if not uid or self._queue is None:
            return
        for resource in self._children.values():
            for child in self._cache.by_index(resource, CONTROLLER_INDEX, str(uid)):
                if self._owner_ref(child) is not None:
                    self._queue.add_after(self._key(resource, child), self._grace)

    def _suspect(self, resource: Resource, child: Obj, *, synced: bool) -> int:
        if self._queue is None or not synced:
            return 0  # the sweep after sync judges it
        ref = self._owner_ref(child)
        if ref is None or (child.get("metadata") or {}).get("deletionTimestamp"):
            return 0
        if self._cached_owner_matches(child, ref):
            return 0
        self._queue.add_after(self._key(resource, child), self._grace)
        return 1

    # -- reconcile -------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        namespace, token, name = _split(key)
        resource = self._children.get(token)
        if resource is None:
            return Result()  # not a kind we watch (a stale key): nothing to judge
        child = self._cache.get(resource, f"{namespace}/{name}")
        if child is None or (child.get("metadata") or {}).get("deletionTimestamp"):
            return Result()  # gone or going: the garbage collector did its job
        ref = self._owner_ref(child)
        if ref is None or self._cached_owner_matches(child, ref):
            return Result()
        owner_resource, owner_name, owner_uid = ref
        state = await owner_state(
            self._client, owner_resource, namespace=namespace, name=owner_name, uid=owner_uid
        )
        if state is not OwnerState.GONE:
            return Result()  # our cache lags: the owner's own events will bring a new verdict
        try:
            live = await self._client.get(resource, name, namespace=namespace)
        except errors.NotFound:
            return Result()
        live_meta = live.get("metadata") or {}
        if live_meta.get("deletionTimestamp") or self._owner_ref(live) != ref:
            return Result()  # changed since the cache saw it: a later event re-judges it
        try:
            await self._client.delete(
                resource,
                name,
                namespace=namespace,
                propagation_policy="Background",
                preconditions={
                    "uid": str(live_meta["uid"]),
                    "resourceVersion": str(live_meta["resourceVersion"]),
                },
            )
        except errors.NotFound:
            return Result()
        except errors.Conflict:
            return Result(requeue_after=self._grace)  # changed between read and delete: judge again
        message = (
            f"controller {owner_resource.kind} {owner_name} (uid {owner_uid}) no longer exists; "
            f"deleted this orphaned {resource.kind}"
        )
        log.warning(
            "Deleted an orphaned child",
            kind=resource.kind,
            owner_kind=owner_resource.kind,
            owner_name=owner_name,
            owner_uid=owner_uid,
        )
        self._recorder.event(live, type="Warning", reason=REASON, message=message)
        return Result()

    # -- helpers ---------------------------------------------------------------------------------

    def _owner_ref(self, obj: Mapping[str, Any]) -> tuple[Resource, str, str] | None:
        """(owner kind, name, uid) when the object's only ownerReference is a controller reference to
        an owner kind. With other owners too, the garbage collector keeps it while any of them
        lives, and judging those is not ours: such an object is never a suspect."""
        refs: list[Mapping[str, Any]] = list((obj.get("metadata") or {}).get("ownerReferences") or ())
        if len(refs) != 1 or not refs[0].get("controller"):
            return None
        [ref] = refs
        group = str(ref.get("apiVersion", "")).rpartition("/")[0]
        resource = self._owners.get((group, str(ref.get("kind", ""))))
        if resource is None or not ref.get("uid") or not ref.get("name"):
            return None
        return resource, str(ref["name"]), str(ref["uid"])

    def _cached_owner_matches(self, child: Obj, ref: tuple[Resource, str, str]) -> bool:
        resource, name, uid = ref
        namespace = (child.get("metadata") or {}).get("namespace")
        owner = self._cache.get(resource, f"{namespace}/{name}")
        return owner is not None and (owner.get("metadata") or {}).get("uid") == uid

    @staticmethod
    def _key(resource: Resource, child: Obj) -> str:
        meta = child.get("metadata") or {}
        return f"{meta.get('namespace')}/{resource_token(resource)}/{meta.get('name')}"


def _split(key: str) -> tuple[str, str, str]:
    namespace, _, rest = key.partition("/")
    token, _, name = rest.partition("/")
    return namespace, token, name


class _ChildEvents:
    """Child adds, and updates that change the controller, make suspects; deletes need nothing."""

    def __init__(self, collector: OrphanCollector, resource: Resource) -> None:
        self._collector, self._resource = collector, resource

    def on_add(self, obj: Obj) -> None:
        self._collector.child_seen(self._resource, obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        if controller_uid(old) != controller_uid(new):
            self._collector.child_seen(self._resource, new)

    def on_delete(self, obj: Obj) -> None:
        pass


class _OwnerEvents:
    """An owner's delete makes its cached children suspects."""

    def __init__(self, collector: OrphanCollector) -> None:
        self._collector = collector

    def on_add(self, obj: Obj) -> None:
        pass

    def on_update(self, old: Obj, new: Obj) -> None:
        pass

    def on_delete(self, obj: Obj) -> None:
        self._collector.owner_deleted(obj)
