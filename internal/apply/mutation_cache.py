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
    """Recent writes by key, each standing in for the cache only while the cache is behind it.

    An entry is (resourceVersion the cache showed before our write, the one the server gave our
    write, when, what we wrote). While the cache shows a version older than our write, the recorded
    content stands in for it; once it shows our write or anything newer (someone else's change), the
    entry is dropped, and it expires after `ttl` seconds anyway.

    "Older" is told by comparing resourceVersions as numbers, as client-go's MutationCache does: the
    API server documents them as opaque, but every one it serves is an etcd revision. Equality with
    the version before the write alone is not enough: after two quick writes the cache may show the
    first of them, and taking that for "caught up" compares the next status against our own older
    write while the server holds the newer one; a field that went back to the older value is then
    never sent (a graph left `successful` beside a `Ready=False` of the write in between). Where a
    version is not a number, or the write's is unknown, only the version from before the write counts.

    A created object that the cache does not show is ambiguous (not seen yet, or seen and deleted
    since): the syncer reads it once to decide, so a deleted child is re-created at once.
    """

    def __init__(self, size: int = 8192, *, ttl: float = 30.0, clock: Clock | None = None) -> None:
        self._size, self._ttl = size, ttl
        self._clock: Clock = clock or RealClock()
        self._entries: OrderedDict[WriteKey, tuple[str, str, float, Any]] = OrderedDict()

    def remember(
        self,
        key: WriteKey,
        live: Mapping[str, Any] | None,
        content: Any,
        *,
        written: Mapping[str, Any] | None = None,
    ) -> None:
        """Record `content` written over `live`; `written` is the object the server answered with."""
        now = self._clock.now()
        self._entries[key] = (resource_version(live), resource_version(written), now, content)
        self._entries.move_to_end(key)
        # Oldest first (every remember moves its key to the end): drop what expired, so memory
        # follows the last `ttl` seconds of writes rather than the last `size` ones.
        while self._entries:
            _, _, when, _ = next(iter(self._entries.values()))
            if now - when <= self._ttl and len(self._entries) <= self._size:
                break
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    def forget(self, key: WriteKey) -> None:
        self._entries.pop(key, None)

    def in_flight(self, key: WriteKey, live: Mapping[str, Any] | None) -> Any | None:
        """What we wrote for `key` if the cache still shows a version from before that write."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        before, after, when, content = entry
        if self._clock.now() - when <= self._ttl and _behind(resource_version(live), before, after):
            return content
        del self._entries[key]  # the cache has moved on (or we waited long enough): trust it
        return None


def _behind(shown: str, before: str, after: str) -> bool:
    """Whether the cache, showing version `shown`, has yet to show our write (made over `before`,
    answered as `after`)."""
    if shown.isdigit() and after.isdigit():
        return int(shown) < int(after)
    return shown == before


def resource_version(obj: Mapping[str, Any] | None) -> str:
    """The object's resourceVersion; "" for an absent object."""
    if obj is None:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def write_key(resource: Resource, obj: Mapping[str, Any]) -> WriteKey:
    """The memory's key of one object: its collection, namespace and name."""
    meta = obj.get("metadata") or {}
    return (resource.group, resource.plural, str(meta.get("namespace", "")), str(meta.get("name", "")))
