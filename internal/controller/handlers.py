"""Event handlers that turn watch events into queue keys.

Each event maps to a *set* of keys (duplicates collapse before reaching the queue), and an update
maps both the old and the new object, so a change of owner or of a mapped label re-triggers the
object it moved away from as well as the one it moved to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.predicates import Predicate
from dynamo_operator.internal.workqueue.interface import WorkQueue

Mapper = Callable[[Obj], Iterable[str]]


class EnqueueMapped:
    """Filters events through `predicates` (all must pass) and adds the keys `mapper` returns.

    With `adds_first`, the keys of an add event (an object created, or listed at start-up) go to the
    queue's first lane: a controller reaches new objects before re-syncs of the ones it has done.
    An update that passes the predicates and `urgent` goes to the urgent lane, before both.
    """

    def __init__(
        self,
        queue: WorkQueue[str],
        mapper: Mapper,
        predicates: Sequence[Predicate] = (),
        *,
        adds_first: bool = False,
        urgent: Predicate | None = None,
    ) -> None:
        self._queue = queue
        self._urgent = urgent
        self._mapper = mapper
        self._predicates = tuple(predicates)
        self._adds_first = adds_first

    def on_add(self, obj: Obj) -> None:
        if all(p.create(obj) for p in self._predicates):
            if self._adds_first:
                for key in dict.fromkeys(self._mapper(obj)):
                    self._queue.add_first(key)
            else:
                self._enqueue(self._mapper(obj))

    def on_update(self, old: Obj, new: Obj) -> None:
        if all(p.update(old, new) for p in self._predicates):
            if self._urgent is not None and self._urgent.update(old, new):
                for key in dict.fromkeys(self._mapper(new)):
                    self._queue.add_urgent(key)
            self._enqueue([*self._mapper(old), *self._mapper(new)])

    def on_delete(self, obj: Obj) -> None:
        if all(p.delete(obj) for p in self._predicates):
            self._enqueue(self._mapper(obj))

    def _enqueue(self, keys: Iterable[str]) -> None:
        for key in dict.fromkeys(keys):  # ordered dedup
            self._queue.add(key)


def own_key(obj: Obj) -> list[str]:
    """The object's own key (what `for_` enqueues)."""
    return [object_key(obj)]


def controller_owner_keys(owner: Resource) -> Mapper:
    """Keys of the controller ownerReference whose group and kind are `owner`'s (what `owns` enqueues).

    The version is ignored, as an owner reference written under another served version still names
    the same object. An owner is in its child's namespace (cluster-scoped owners have none).
    """

    def mapper(obj: Obj) -> list[str]:
        meta = obj.get("metadata", {})
        for ref in meta.get("ownerReferences") or ():
            if not ref.get("controller"):
                continue
            group = ref.get("apiVersion", "").rpartition("/")[0]
            if group == owner.group and ref.get("kind") == owner.kind:
                namespace = meta.get("namespace") if owner.namespaced else None
                return [f"{namespace}/{ref['name']}" if namespace else ref["name"]]
        return []

    return mapper
