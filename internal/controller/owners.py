"""Is an owner still there? The one live read a lagging cache cannot stand in for.

A cache may still show an owner that was deleted a moment ago: its delete event is on the wire, or
the watch is being re-established after an API server restart. The API server accepts an
ownerReference to a UID that no longer exists, so a child created from such a stale view outlives
its owner unless the garbage collector happens to notice it. Two guards rest on the read below:

- before a sync *creates* a child, `OwnerCheck` confirms the owner (one read per sync that creates
  something; updates of existing children and quiet syncs cost nothing);
- before the orphan collector deletes a child, `owner_state` proves its owner gone.

The controller ownerReference itself (making one, reading one back) is here too.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Mapping
from typing import Any, Protocol

from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource

Obj = dict[str, Any]


def owner_reference(owner: Mapping[str, Any], *, api_version: str | None = None) -> dict[str, Any]:
    """A controller ownerReference to `owner` (blockOwnerDeletion so foreground deletion waits).
    `api_version`: the version to name the owner by when not the one it was read in (a converted
    kind's storage version); the garbage collector and owner lookups go by UID either way."""
    meta = owner["metadata"]
    return {
        "apiVersion": api_version or owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object's controller ownerReference (at most one per object), or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """UID of the object's controller ownerReference, or None."""
    ref = controller_ref(obj)
    uid = ref.get("uid") if ref is not None else None
    return str(uid) if uid else None


class OwnerState(enum.Enum):
    """What a live read says about an owner known by name and UID."""

    PRESENT = "present"  # there, with that UID, not being deleted
    DELETING = "being deleted"  # there, with that UID, carrying a deletionTimestamp
    GONE = "gone"  # not found, or the name now belongs to another object (another UID)


class OwnerReader(Protocol):
    """The one read this module sends (a subset of internal.client.Client)."""

    async def get(self, resource: Resource, name: str, *, namespace: str | None = ...) -> Obj: ...


async def owner_state(
    client: OwnerReader, resource: Resource, *, namespace: str | None, name: str, uid: str
) -> OwnerState:
    """Read the owner from the API server (never a cache) and classify it against `uid`."""
    try:
        live = await client.get(resource, name, namespace=namespace)
    except errors.NotFound:
        return OwnerState.GONE
    meta = live.get("metadata") or {}
    if meta.get("uid") != uid:
        return OwnerState.GONE  # deleted and re-created under the same name: not our owner
    return OwnerState.DELETING if meta.get("deletionTimestamp") else OwnerState.PRESENT


class OwnerGone(Exception):
    """A create was refused: a live read shows the owner deleted, replaced or being deleted."""

    def __init__(self, kind: str, key: str, uid: str, state: OwnerState) -> None:
        super().__init__(f"{kind} {key} (uid {uid}) is {state.value}: nothing created for it")
        self.kind, self.key, self.uid, self.state = kind, key, uid, state


class OwnerCheck:
    """Confirms once, for every caller, that `owner` still exists with its UID and is not being
    deleted; `confirm()` raises OwnerGone otherwise. Made per sync: the concurrent creates of one
    sync share a single read, and the next sync reads again."""

    def __init__(self, client: OwnerReader, resource: Resource, owner: Mapping[str, Any]) -> None:
        meta = owner["metadata"]
        self._client, self._resource = client, resource
        self._namespace: str | None = meta.get("namespace")
        self._name, self._uid = str(meta["name"]), str(meta["uid"])
        self._lock = asyncio.Lock()
        self._state: OwnerState | None = None

    async def confirm(self) -> None:
        async with self._lock:
            if self._state is None:
                self._state = await owner_state(
                    self._client, self._resource, namespace=self._namespace, name=self._name, uid=self._uid
                )
        if self._state is not OwnerState.PRESENT:
            key = f"{self._namespace}/{self._name}" if self._namespace else self._name
            raise OwnerGone(self._resource.kind, key, self._uid, self._state)
