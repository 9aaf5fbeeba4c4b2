"""Bring an owner's children to the desired set, quietly: write only what differs, prune what is gone.

Rules (ARCHITECTURE.md "Apply is idempotent and quiet", "Deletion is sacred"):
- a desired child is written (server-side apply, the caller's field manager) only when its content
  hash differs from the hash stamped on the live object, or a field another actor may change behind
  our back (`spec.replicas`) drifted;
- a live object controlled by another owner is never touched, and the sync writes nothing at all
  (`ChildrenOwnedByOthers`): half a set of children is worse than none, and the owner's status
  must say why, never "ready"; only children marked `shared` may be controlled by a sibling;
- a desired set naming one object twice is a bug of the caller (`DuplicateChildren`), refused before
  any write: two versions of one object would overwrite each other on every sync;
- create-only kinds (PVCs, scaling adapters) are created when missing and otherwise left alone;
- children this owner controls that are no longer desired are deleted with a UID precondition,
  unless the caller's `keep` says otherwise (e.g. PVCs a user still names).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.internal.apply.failures import ChildrenOwnedByOthers, ChildWriteError, DuplicateChildren
from dynamo_operator.internal.apply.interface import ChildClient, ChildReader, HashStamp, Obj
from dynamo_operator.internal.apply.last_sync import LastSyncs, desired_replicas, replicas_drifted
from dynamo_operator.internal.apply.mutation_cache import RecentWrites, write_key
from dynamo_operator.internal.apply.terminating import TerminatingNamespaces
from dynamo_operator.internal.apply.waves import waves
from dynamo_operator.internal.cache.store import CONTROLLER_INDEX
from dynamo_operator.internal.cache.transform import strip_managed_fields
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.owners import (
    OwnerCheck,
    controller_ref,
    controller_uid,
    owner_reference,
)
from dynamo_operator.internal.events.interface import Recorder
from dynamo_operator.internal.jsontree import copy_tree


@dataclass(frozen=True, slots=True)
class Desired:
    """One object the owner should have. `create_only`: never updated once it exists. `owned=False`:
    shared with others (e.g. a namespace's planner ServiceAccount), so it gets no ownerReference,
    is only ever created, and is never pruned. `shared`: another owner may control it (one model
    Service per model, a PVC two graphs create): found so, it is used as it is, not a conflict."""

    resource: Resource
    obj: Obj
    create_only: bool = False
    owned: bool = True
    shared: bool = False


@dataclass(slots=True)
class SyncReport:
    """What one sync did, plus the freshest view of every desired child (write response or cache)."""

    current: dict[tuple[Resource, str], Obj] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    # The live read confirming the owner before this sync's first create (ChildSyncer.confirm_owner).
    owner_check: OwnerCheck | None = field(default=None, repr=False, compare=False)

    def get(self, resource: Resource, name: str) -> Obj | None:
        return self.current.get((resource, name))


def own_metadata(obj: Obj) -> Obj:
    """A copy of `obj` whose metadata is its own and whose body is shared with `obj`.

    Preparing a child touches its metadata only (namespace, ownerReferences, the hash stamp), and
    the body is sent as it is: copying a pod template deeply on every sync was a tenth of the
    operator's CPU at scale, for nothing. Neither the caller nor the syncer edits a body after this.
    """
    return {**obj, "metadata": copy_tree(obj.get("metadata") or {})}


def prepare(
    owner: Mapping[str, Any], obj: Obj, stamp: HashStamp, *, owner_api_version: str | None = None
) -> Obj:
    """A copy of `obj` in the owner's namespace, controlled by the owner (named by
    `owner_api_version` when given), stamped with its hash."""
    out = own_metadata(obj)
    meta = out["metadata"]
    meta.setdefault("namespace", owner["metadata"]["namespace"])
    others = [r for r in meta.get("ownerReferences") or () if not r.get("controller")]
    meta["ownerReferences"] = [owner_reference(owner, api_version=owner_api_version), *others]
    return stamp.stamp(out)


def _drifted(desired: Mapping[str, Any], live: Mapping[str, Any]) -> bool:
    """Fields someone else may edit without changing our hash stamp, compared desired vs live.

    Only `spec.replicas` today: a hand-scaled child must be put back (user report #4420); template
    edits bump the child's generation and show up in its status instead.
    """
    return replicas_drifted(desired_replicas(desired), live)


def _plain(d: Desired) -> bool:
    """Owned by the owner alone and kept up to date: the children `unchanged` can vouch for."""
    return d.owned and not d.create_only and not d.shared


def _name(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["name"])


class ChildSyncer:
    """Applies an owner's desired children and prunes the rest. Keeps only `RecentWrites`.

    `field_manager` owns the applied fields; `stamp` records on each child what it was written
    from; `confirm_owner`, the owners' kind, makes a sync confirm its owner before its first create
    (see `_owner_still_there`); `announce_created(owner)` False leaves an owner's creations out of
    its summary Event (updates and deletions are always told); `terminating` learns of each create
    refused because the owner's namespace is being deleted; `owner_api_version` names the owner
    in its children's controller references when it is not the version the owner was read in (a
    child a reference of another version points at is still the owner's: ownership goes by UID,
    and its next apply rewrites the reference, a metadata-only change).
    """

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        field_manager: str,
        stamp: HashStamp,
        recent: RecentWrites | None = None,
        confirm_owner: Resource | None = None,
        announce_created: Callable[[Obj], bool] | None = None,
        terminating: TerminatingNamespaces | None = None,
        owner_api_version: str | None = None,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._announce_created = announce_created
        self._field_manager, self._stamp = field_manager, stamp
        self._recent = recent if recent is not None else RecentWrites()
        self._owner_resource = confirm_owner
        self._terminating = terminating
        self._owner_api_version = owner_api_version
        self._last = LastSyncs(cache, stamp)

    def _shape_for_memory(self, resource: Resource, written: Obj) -> Obj:
        """What to remember of a write: the cache's shape of it, not the whole response, since the
        memory stands in for the cache and is read the same way."""
        return self._cache.shape(resource, strip_managed_fields(written))

    async def sync(
        self,
        owner: Obj,
        desired: Sequence[Desired],
        *,
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None = None,
        inputs: object | None = None,
    ) -> SyncReport:
        """Write every desired child whose content changed, then delete owned children not desired.

        Writes go in waves (`waves.waves`), each wave concurrently. Raises ChildWriteError for the
        first write that failed (the rest of its wave still ran; later waves do not). Pruning runs
        only when every write succeeded, so a half-failed sync never removes the old objects. Before
        any write: DuplicateChildren when `desired` names an object twice, ChildrenOwnedByOthers when
        a desired child (not `shared`) is controlled by another owner.

        With `inputs` (what generated `desired`, see `unchanged`), a sync that ends with every child
        written or found as desired is remembered for `unchanged`; any other ending forgets the owner.
        """
        report = SyncReport()
        key = object_key(owner)
        try:
            prepared = await self._write_and_prune(owner, desired, owned, keep, report)
        except BaseException:
            self._last.forget(key)
            raise
        finally:
            self._summarise(owner, report)
        if inputs is not None and all(_plain(d) for d in desired):
            self._last.record(owner, inputs, [(d.resource, obj) for d, obj in prepared])
        else:
            self._last.forget(key)
        return report

    def unchanged(
        self,
        owner: Obj,
        inputs: object | None,
        *,
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None = None,
    ) -> SyncReport | None:
        """What `sync` would report without generating the children again: when `inputs` equal those
        of the owner's last complete sync and the cache still shows every child it left (same hash
        stamp, replicas, controller) and no owned child to prune (`keep` as `sync` takes it, so it
        must depend on nothing `inputs` leave out), a report whose `current` holds the live children
        in their desired order and which wrote nothing; else, and always without `inputs`, None
        (sync in full)."""
        if inputs is None:
            return None
        current = self._last.still_in_sync(owner, inputs, owned, keep)
        return None if current is None else SyncReport(current=current)

    def forget(self, key: str) -> None:
        """Drop what is remembered of the owner at `key` (it is gone)."""
        self._last.forget(key)

    async def _write_and_prune(
        self,
        owner: Obj,
        desired: Sequence[Desired],
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None,
        report: SyncReport,
    ) -> list[tuple[Desired, Obj]]:
        prepared = [
            (
                d,
                prepare(owner, d.obj, self._stamp, owner_api_version=self._owner_api_version)
                if d.owned
                else self._stamp.stamp(own_metadata(d.obj)),
            )
            for d in desired
        ]
        self._refuse_duplicates(prepared)
        self._refuse_conflicts(owner, prepared)
        for wave in waves(prepared, lambda p: p[0].resource.kind):
            results = await asyncio.gather(
                *(self._one(owner, d, obj, report) for d, obj in wave), return_exceptions=True
            )
            failures = [r for r in results if isinstance(r, BaseException)]
            for failure in failures:
                if not isinstance(failure, Exception):
                    raise failure  # cancellation and friends propagate untouched
            if failures:
                raise failures[0]
        wanted = {(d.resource, _name(obj)) for d, obj in prepared if d.owned}
        await self._prune(owner, wanted, owned, keep, report)
        return prepared

    @staticmethod
    def _refuse_duplicates(prepared: Sequence[tuple[Desired, Obj]]) -> None:
        counts = Counter(write_key(d.resource, obj) for d, obj in prepared)
        duplicates = sorted(f"{key[1]}/{key[3]}" for key, n in counts.items() if n > 1)
        if duplicates:
            raise DuplicateChildren(duplicates)

    def _refuse_conflicts(self, owner: Obj, prepared: Sequence[tuple[Desired, Obj]]) -> None:
        owner_uid = owner["metadata"]["uid"]
        conflicts = []
        for d, obj in prepared:
            if not d.owned or d.shared:
                continue
            live = self._cache.get(d.resource, object_key(obj))
            live_uid = controller_uid(live) if live is not None else None
            if live is not None and live_uid is not None and live_uid != owner_uid:
                ref = controller_ref(live) or {}
                conflicts.append(
                    f"{d.resource.kind} {_name(obj)} is controlled by {ref.get('kind')} {ref.get('name')}"
                )
        if conflicts:
            raise ChildrenOwnedByOthers(conflicts)

    def _summarise(self, owner: Obj, report: SyncReport) -> None:
        """At most one Normal Event per sync, naming every child written: each write is worth a line,
        but an Event is itself a write, so a new graph should not cost a dozen of them."""
        created = report.created if self._announce_created is None or self._announce_created(owner) else []
        parts = [
            (reason, f"{verb}: {', '.join(sorted(names))}")
            for reason, verb, names in (
                ("Created", "created", created),
                ("Updated", "updated", report.updated),
                ("Deleted", "deleted (no longer desired)", report.deleted),
            )
            if names
        ]
        if parts:
            reason = parts[0][0] if len(parts) == 1 else "Changed"
            self._recorder.event(
                owner, type="Normal", reason=reason, message="; ".join(message for _, message in parts)
            )

    def _unchanged(self, obj: Obj, written: Mapping[str, Any]) -> bool:
        """`obj` is stamped (`prepare`): its recorded hash is its content's, computed once."""
        return self._stamp.recorded(written) == self._stamp.recorded(obj)

    async def _one(self, owner: Obj, d: Desired, obj: Obj, report: SyncReport) -> None:
        resource, name = d.resource, _name(obj)
        live = self._cache.get(resource, object_key(obj))
        owner_uid = owner["metadata"]["uid"]
        if not d.owned:
            d = Desired(d.resource, obj, create_only=True, owned=False)
        if live is not None:
            live_uid = controller_uid(live)
            if not d.owned:
                report.current[(resource, name)] = live
                return
            if live_uid is not None and live_uid != owner_uid:
                report.current[(resource, name)] = live  # `shared`: another owner's is ours to use
                return
            if d.create_only:
                report.current[(resource, name)] = live
                return
            if self._unchanged(obj, live) and not _drifted(obj, live) and live_uid is not None:
                report.current[(resource, name)] = live
                return
        key = write_key(resource, obj)
        written = self._recent.in_flight(key, live)
        if written is not None and self._unchanged(obj, written) and not d.create_only:
            # Already sent and the cache is behind, unless what we created has been deleted since:
            # "absent from the cache" cannot tell those apart, one read can.
            if live is not None or await self._exists(resource, obj):
                report.current[(resource, name)] = written
                return
            self._recent.forget(key)
        if live is None and self._owner_resource is not None:
            await self._owner_still_there(self._owner_resource, owner, report)  # raises OwnerGone
        if d.create_only:
            # POST, not apply: a same-named object the cache has not seen yet (a user's PVC) must
            # stay exactly as it is, and AlreadyExists says so.
            try:
                report.current[(resource, name)] = await self._client.create(resource, obj)
            except errors.AlreadyExists:
                return
            except errors.ApiError as err:
                self._failed(owner, resource, name, "create", err)
                raise ChildWriteError(resource, name, "create", err) from err
            report.created.append(f"{resource.kind}/{name}")  # the sync's summary Event names it
            return
        try:
            result = await self._client.apply(resource, obj, field_manager=self._field_manager, force=True)
        except errors.ApiError as err:
            self._failed(owner, resource, name, "apply", err)
            raise ChildWriteError(resource, name, "apply", err) from err
        report.current[(resource, name)] = result
        self._recent.remember(key, live, self._shape_for_memory(resource, result), written=result)
        (report.created if live is None else report.updated).append(f"{resource.kind}/{name}")

    async def _owner_still_there(self, resource: Resource, owner: Obj, report: SyncReport) -> None:
        """Before a sync's first create, confirm the owner: the cache, when it is current (its
        watch of the owners' kind has no gap it may still be catching up on); else one live read
        (shared by the sync's other creates).

        The API server accepts an ownerReference to a UID that no longer exists, so a child created
        from a cache that still shows a deleted owner outlives it. Worse, after an API server
        restart kube-controller-manager's informers may miss the garbage-collected child and its
        same-named re-creation and see one update between two UIDs: its garbage collector then
        keeps the old child in its graph, and that child's ReplicaSets and pods leak until it
        restarts (issue #10). A cache shows a deleted owner only while its watch is broken or has
        just resumed and is replaying what it missed, and that is when the live read is made. A
        current cache is as good as the read: either is a moment old when the create lands (the read
        cost a round trip on every new component's path, 4 per graph, issue #13).
        """
        if self._cache.is_current(resource) and self._cached_as(resource, owner):
            return
        if report.owner_check is None:
            report.owner_check = OwnerCheck(self._client, resource, owner)
        await report.owner_check.confirm()

    def _cached_as(self, resource: Resource, owner: Obj) -> bool:
        """The cache still holds `owner` under its UID, not being deleted (it may have moved on
        since the reconcile read it)."""
        cached = self._cache.get(resource, object_key(owner))
        meta = (cached or {}).get("metadata") or {}
        return meta.get("uid") == owner["metadata"]["uid"] and not meta.get("deletionTimestamp")

    async def _exists(self, resource: Resource, obj: Obj) -> bool:
        meta = obj["metadata"]
        try:
            await self._client.get(resource, meta["name"], namespace=meta.get("namespace"))
        except errors.NotFound:
            return False
        return True

    async def _prune(
        self,
        owner: Obj,
        wanted: set[tuple[Resource, str]],
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None,
        report: SyncReport,
    ) -> None:
        owner_uid = owner["metadata"]["uid"]
        doomed: list[tuple[Resource, Obj]] = []
        for resource in owned:
            for child in self._cache.by_index(resource, CONTROLLER_INDEX, owner_uid):
                if (resource, _name(child)) in wanted or (child.get("metadata") or {}).get(
                    "deletionTimestamp"
                ):
                    continue
                if keep is not None and keep(resource, child):
                    continue
                doomed.append((resource, child))
        await asyncio.gather(*(self._delete(owner, resource, child, report) for resource, child in doomed))

    async def _delete(self, owner: Obj, resource: Resource, child: Obj, report: SyncReport) -> None:
        meta = child["metadata"]
        try:
            await self._client.delete(
                resource,
                meta["name"],
                namespace=meta.get("namespace"),
                propagation_policy="Background",
                # The UID precondition makes sure we delete the object we looked at, not a
                # same-named successor someone else created in between.
                preconditions={"uid": meta["uid"]},
            )
        except (errors.NotFound, errors.Conflict):
            return
        except errors.ApiError as err:
            self._failed(owner, resource, meta["name"], "delete", err)
            raise ChildWriteError(resource, meta["name"], "delete", err) from err
        report.deleted.append(f"{resource.kind}/{meta['name']}")

    def _failed(self, owner: Obj, resource: Resource, name: str, verb: str, err: errors.ApiError) -> None:
        if isinstance(err, errors.Conflict):
            return  # a stale view: the retry will succeed, no need to alarm anyone
        if errors.namespace_going(err):
            if self._terminating is not None:
                namespace = str(owner["metadata"].get("namespace") or "")
                self._terminating.refused(namespace, server_time=err.server_time)
            return  # the namespace is going (or gone) with the owner; its Event would be refused too
        self._recorder.event(
            owner,
            type="Warning",
            reason=f"{verb.capitalize()}{resource.kind}Failed",
            message=f"{name}: {err}",
        )
