"""An informer's store: plain dicts by `namespace/name`, plus indexes kept in step with every write.

Single-threaded by construction: only the owning informer writes, from the event loop, and readers
run on the same loop, so no locks are needed. Objects are shared, never copied: readers must treat
them as read-only (see `interface.py`).

Invariant: for every index `name` and object key `k`, `k` is filed under exactly the values
`indexers[name](objects[k])` returned when `k` was last written (`_filed[name][k]` remembers them).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping

from dynamo_operator.internal.cache.interface import IndexFunc, Obj
from dynamo_operator.internal.client.resource import object_key

NAMESPACE_INDEX = "namespace"
CONTROLLER_INDEX = "controller"


def index_by_namespace(obj: Obj) -> builtins.list[str]:
    """The object's namespace ("" never indexed: cluster-scoped objects have none)."""
    namespace = obj.get("metadata", {}).get("namespace")
    return [namespace] if namespace else []


def index_by_controller(obj: Obj) -> builtins.list[str]:
    """The UID of the controller ownerReference, which is what `Owns(...)` maps back to."""
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid"):
            return [str(ref["uid"])]
    return []


BUILTIN_INDEXERS: Mapping[str, IndexFunc] = {
    NAMESPACE_INDEX: index_by_namespace,
    CONTROLLER_INDEX: index_by_controller,
}


class Store:
    """Keyed objects with named secondary indexes."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._objects: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {}
        self._indices: dict[str, dict[str, set[str]]] = {}  # index -> value -> keys
        self._filed: dict[str, dict[str, list[str]]] = {}  # index -> key -> values
        self.add_indexers(BUILTIN_INDEXERS)
        if indexers:
            self.add_indexers(indexers)

    # -- reads (StoreReader) ---------------------------------------------------------------------

    def get(self, key: str) -> Obj | None:
        return self._objects.get(key)

    def list(self) -> builtins.list[Obj]:
        return list(self._objects.values())

    def keys(self) -> builtins.list[str]:
        return list(self._objects)

    def __len__(self) -> int:
        return len(self._objects)

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def by_index(self, index: str, value: str) -> builtins.list[Obj]:
        """Objects filed under `value` in `index`; KeyError for an index that was never added."""
        keys = self._index(index).get(value, ())
        return [self._objects[k] for k in keys]

    def index_values(self, index: str) -> builtins.list[str]:
        """Every value that currently has at least one object filed under it."""
        return list(self._index(index))

    def _index(self, index: str) -> dict[str, set[str]]:
        try:
            return self._indices[index]
        except KeyError:
            raise KeyError(f"no index named {index!r}") from None

    # -- writes (the owning informer only) -------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes, filing every object already stored. Re-adding a name is an error."""
        for name, func in indexers.items():
            if name in self._indexers:
                raise ValueError(f"index {name!r} already exists")
            self._indexers[name] = func
            self._indices[name] = {}
            self._filed[name] = {}
            for key, obj in self._objects.items():
                self._file(name, key, obj)

    def upsert(self, obj: Obj) -> Obj | None:
        """Store `obj` under its key; return the object it replaced (None when new)."""
        key = object_key(obj)
        old = self._objects.get(key)
        if old is not None:
            self._unfile_all(key)
        self._objects[key] = obj
        for name in self._indexers:
            self._file(name, key, obj)
        return old

    def remove(self, key: str) -> Obj | None:
        """Drop the object under `key`; return it (None when absent)."""
        old = self._objects.pop(key, None)
        if old is not None:
            self._unfile_all(key)
        return old

    def replace(self, objects: Iterable[Obj]) -> dict[str, Obj]:
        """Swap the whole content for `objects`; return the previous content by key."""
        previous = self._objects
        self._objects = {}
        for name in self._indexers:
            self._indices[name] = {}
            self._filed[name] = {}
        for obj in objects:
            self.upsert(obj)
        return previous

    def _file(self, name: str, key: str, obj: Obj) -> None:
        values = self._indexers[name](obj)
        if not values:
            return
        self._filed[name][key] = values
        index = self._indices[name]
        for value in values:
            index.setdefault(value, set()).add(key)

    def _unfile_all(self, key: str) -> None:
        for name, filed in self._filed.items():
            values = filed.pop(key, None)
            if not values:
                continue
            index = self._indices[name]
            for value in values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
