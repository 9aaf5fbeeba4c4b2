"""What this process wrote lately, standing in for a cache that has not caught up yet.

The idea of client-go's MutationCache: after a write, the informer's copy lags for a moment, and a
reconcile in between would see the old object and send the same write again (a real request each
time; a steady cluster must cost none). Purely an optimisation: forgetting costs one redundant write.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import Clock, RealClock

WriteKey = tuple[str, ...]


class RecentWrites:
    """Recent writes by key, each valid only while the cache still shows what it showed before.

    An entry is (resourceVersion the cache showed before our write, when, what we wrote). While the
    cache still shows that resourceVersion, our write is in flight from the cache's point of view and
    the recorded content stands in for it. Once the cache shows anything else the entry is dropped,
    and it expires after `ttl` seconds anyway. A created object that the cache does not show is
    ambiguous (not seen yet, or seen and deleted since): the syncer reads it once to decide, so a
    deleted child is re-created at once.
    """

    def __init__(self, size: int = 8192, *, ttl: float = 30.0, clock: Clock | None = None) -> None:
        self._size, self._ttl = size, ttl
        self._clock: Clock = clock or RealClock()
        self._entries: OrderedDict[WriteKey, tuple[str, float, Any]] = OrderedDict()

    def remember(self, key: WriteKey, live: Mapping[str, Any] | None, content: Any) -> None:
        now = self._clock.now()
        self._entries[key] = (resource_version(live), now, content)
        self._entries.move_to_end(key)
        # Oldest first (every remember moves its key to the end): drop what expired, so memory
        # follows the last `ttl` seconds of writes rather than the last `size` ones.
        while self._entries:
            _, when, _ = next(iter(self._entries.values()))
            if now - when <= self._ttl and len(self._entries) <= self._size:
                break
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, key: WriteKey) -> None:
        self._entries.pop(key, None)

    def in_flight(self, key: WriteKey, live: Mapping[str, Any] | None) -> Any | None:
        """What we wrote for `key` if the cache still shows the version from before that write."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        before, when, content = entry
        if before != resource_version(live) or self._clock.now() - when > self._ttl:
            del self._entries[key]  # the cache has moved on (or we waited long enough): trust it
            return None
        return content


def resource_version(obj: Mapping[str, Any] | None) -> str:
    """The object's resourceVersion; "" for an absent object."""
    if obj is None:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def write_key(resource: Resource, obj: Mapping[str, Any]) -> WriteKey:
    """The memory's key of one object: its collection, namespace and name."""
    meta = obj.get("metadata") or {}
    return (resource.group, resource.plural, str(meta.get("namespace", "")), str(meta.get("name", "")))
