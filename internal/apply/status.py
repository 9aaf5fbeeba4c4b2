"""The one writer of status subresources: a merge patch, sent only when the status changed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal.apply.interface import Obj, StatusClient, WireForms
from dynamo_operator.internal.apply.mutation_cache import RecentWrites, write_key
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.client.patch import merge_patch, without_none
from dynamo_operator.internal.client.resource import Resource


class StatusWriter:
    """Writes the status of objects of one kind only when it changed.

    Two ways to live with a cache that lags behind our own writes:
    - by default the writer remembers what it wrote, and while the cache still shows the version
      from before that write, it compares against its own write instead;
    - with `precondition`, each patch carries the resourceVersion it was computed from, so the API
      server refuses (409 Conflict, retried with backoff) a write from a stale view; for state
      machines whose next step must start from the state the server holds, not from a guess.
    """

    def __init__(
        self,
        client: StatusClient,
        resource: Resource,
        recent: RecentWrites | None = None,
        *,
        precondition: bool = False,
    ) -> None:
        self._client, self._resource = client, resource
        self._precondition = precondition
        # With the precondition a stale base is refused by the server, so no memory is needed.
        self._recent = None if precondition else (recent if recent is not None else RecentWrites())

    def current(self, live: Mapping[str, Any]) -> dict[str, Any]:
        """The status to build on: our in-flight write when the cache is behind it, else the live one."""
        written = self._recent.in_flight(self._key(live), live) if self._recent is not None else None
        return dict(written if written is not None else (live.get("status") or {}))

    async def write(self, live: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        """Merge-patch the status when it differs from `current(live)`; True when a request was sent."""
        return await self.commit(live, status) is not None

    async def commit(self, live: Mapping[str, Any], status: Mapping[str, Any]) -> Obj | None:
        """Like `write`, returning the object as the API server now holds it; None when unchanged, or
        when the object is gone (deleted between the read and the write, as a namespace being deleted
        takes its objects: there is no status left to report, and its deletion event follows)."""
        new = without_none(status)
        # The base is what the server holds as far as we know: our own last write while the cache
        # still shows the status from before it. A patch computed from the cache's older status would
        # leave out fields that went back to what the cache shows, and the server would keep our
        # in-between values of them (a Ready condition beside the state of an earlier write).
        base = self.current(live)
        if base == new:
            # Most reconciles find the status as they left it. Equal statuses encode alike, so the
            # patch would be empty: no need to encode either one for the wire (`_on_wire`).
            return None
        patch = merge_patch(*self._on_wire(live, base, new))
        if not patch:
            return None
        meta = live["metadata"]
        body: dict[str, Any] = {"status": patch}
        if self._precondition:
            body["metadata"] = {"resourceVersion": meta.get("resourceVersion")}
        # A status write ends someone's wait (a graph Ready, a component failed): ahead of the rest.
        try:
            with request_priority(Priority.HIGH):
                written = await self._client.patch(
                    self._resource, meta["name"], body, namespace=meta.get("namespace"), subresource="status"
                )
        except NotFound:
            return None
        if self._recent is not None:
            self._recent.remember(self._key(live), live, new, written=written)
        # A patch response may lack the type fields; callers read the object on as a whole.
        return {**written, "apiVersion": self._resource.api_version, "kind": self._resource.kind}

    def _on_wire(self, live: Mapping[str, Any], *statuses: Mapping[str, Any]) -> list[Obj]:
        """The statuses as the API server holds them. Where the client speaks the kind in another
        version (codec.py), the patch is computed between the two encoded objects: a status patch
        cannot be converted on its own, and two statuses that differ only in what the wire version
        does not hold need no write at all."""
        if not isinstance(self._client, WireForms):
            return [dict(s) for s in statuses]
        # Without the spec: a status converts on its own (and a spec costs as much again).
        envelope = {k: live[k] for k in ("apiVersion", "kind", "metadata") if k in live}
        out = []
        for status in statuses:
            wire = self._client.to_wire(self._resource, {**envelope, "status": dict(status)})
            out.append(dict(wire.get("status") or {}))
        return out

    def _key(self, live: Mapping[str, Any]) -> tuple[str, ...]:
        return ("status", *write_key(self._resource, live))
