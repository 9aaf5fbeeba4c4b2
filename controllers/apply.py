"""Bring an owner's children to the desired set, quietly: write only what differs, prune what is gone.

Rules (ARCHITECTURE.md "Apply is idempotent and quiet", "Deletion is sacred"):
- a desired child is written (server-side apply, one field manager) only when its content hash
  differs from the hash recorded on the live object, or a field another actor may change behind our
  back (`spec.replicas`) drifted;
- a live object controlled by another owner is never touched, and the sync writes nothing at all
  (`ChildrenOwnedByOthers`): half a set of children is worse than none, and the owner's status
  must say why, never "ready"; only children marked `shared` may be controlled by a sibling;
- a desired set naming one object twice is a bug of the caller (`DuplicateChildren`), refused before
  any write: two versions of one object would overwrite each other on every sync;
- create-only kinds (PVCs, scaling adapters) are created when missing and otherwise left alone;
- children this owner controls that are no longer desired are deleted with a UID precondition,
  unless the caller's `keep` says otherwise (e.g. PVCs a user still names).
Status is written as a JSON merge patch of the status subresource, only when it changed.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import structlog
from dynamo_operator.controllers.cache_shapes import CHILD_SHAPES
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.transform import Transform, strip_managed_fields
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.owners import OwnerCheck, OwnerGone
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.dynamo.hashing import content_hash, recorded_hash, stamp_hash

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
EventType = Literal["Normal", "Warning"]


class ChildClient(Protocol):
    """The writes this module sends (a subset of internal.client.Client)."""

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = ..., force: bool = ...
    ) -> Obj: ...
    async def create(self, resource: Resource, obj: Obj) -> Obj: ...
    async def get(self, resource: Resource, name: str, *, namespace: str | None = ...) -> Obj: ...
    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = ...,
        propagation_policy: str = ...,
        preconditions: Mapping[str, Any] | None = ...,
    ) -> None: ...
    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        namespace: str | None = ...,
        subresource: str | None = ...,
    ) -> Obj: ...


class ChildReader(Protocol):
    """The cache reads this module needs (a subset of internal.cache.Cache)."""

    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]: ...


class Recorder(Protocol):
    """Event sink (internal.events.EventRecorder)."""

    def event(self, obj: Obj, *, type: EventType, reason: str, message: str) -> None: ...


FIELD_MANAGER = "dynamo-operator"
# The cache's built-in index of objects by the UID of their controller ownerReference.
CONTROLLER_INDEX = "controller"


class ChildWriteError(Exception):
    """Writing one child failed; `cause` is the client error (typed, see internal.client.errors)."""

    def __init__(self, resource: Resource, name: str, verb: str, cause: Exception) -> None:
        super().__init__(f"{verb} {resource.kind} {name}: {cause}")
        self.resource, self.name, self.verb, self.cause = resource, name, verb, cause

    @property
    def terminal(self) -> bool:
        """True when retrying the same write cannot succeed: the server refused its content, or an
        admission webhook or policy did (e.g. Grove's, on a PodCliqueSet it will not run)."""
        refused = isinstance(self.cause, errors.Invalid | errors.BadRequest)
        return refused or errors.admission_denied(self.cause)


class ChildrenOwnedByOthers(Exception):
    """Desired children already exist under another controller; nothing was written."""

    def __init__(self, conflicts: Sequence[str]) -> None:
        super().__init__("; ".join(conflicts))
        self.conflicts = list(conflicts)


CONFLICT_RECHECK_SECONDS = 60.0
"""An owner whose children another owner controls is looked at again this often: that owner's
deletion brings no event to us (its children's events go to it), and one look a minute is cheap."""


def conflict_message(err: ChildrenOwnedByOthers) -> str:
    """What a user reads when generated names are taken: who holds them and what to do."""
    return (
        f"{err}; nothing was applied: rename the graph or the service, or delete the other owner"
        f" (checked again every {CONFLICT_RECHECK_SECONDS:.0f} s)"
    )


REASON_APPLY_REJECTED = "ApplyRejected"
REASON_NAME_CONFLICT = "NameConflict"
REASON_DUPLICATE_CHILDREN = "DuplicateChildren"


async def report_sync_failure(err: Exception, fail: Callable[[str, str], Awaitable[None]]) -> Result:
    """Turn a failed `ChildSyncer.sync` into what the owner's reconcile returns, after `fail(reason,
    message)` recorded it (a condition and one Warning Event). A transient write error is raised
    again for the queue's backoff; a conflict is looked at again later (no event tells us when the
    other owner lets go); everything else waits for a change of the owner."""
    if isinstance(err, OwnerGone):
        log.info("Owner gone behind the cache; created nothing", reason=str(err))
        return Result()  # its delete (or replacement) event is on the way
    if isinstance(err, ChildWriteError) and not err.terminal:
        raise err
    if isinstance(err, ChildrenOwnedByOthers):
        await fail(REASON_NAME_CONFLICT, conflict_message(err))
        return Result(requeue_after=CONFLICT_RECHECK_SECONDS)
    if isinstance(err, DuplicateChildren):
        log.error("Generated children collide: a bug", error=str(err))
        await fail(REASON_DUPLICATE_CHILDREN, f"{err}; nothing was applied")
    else:
        await fail(REASON_APPLY_REJECTED, str(err))
    raise TerminalError(str(err)) from err


class DuplicateChildren(Exception):
    """The desired set names one object more than once (a generation bug); nothing was written."""

    def __init__(self, duplicates: Sequence[str]) -> None:
        super().__init__(f"the desired children name {', '.join(duplicates)} more than once")
        self.duplicates = list(duplicates)


SYNC_ERRORS = (ChildWriteError, ChildrenOwnedByOthers, DuplicateChildren, OwnerGone)
"""What `ChildSyncer.sync` raises; hand each to `report_sync_failure`."""


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

    @property
    def wrote(self) -> bool:
        return bool(self.created or self.updated or self.deleted)

    def get(self, resource: Resource, name: str) -> Obj | None:
        return self.current.get((resource, name))


def _content(obj: Mapping[str, Any]) -> tuple[Any, ...]:
    meta = obj.get("metadata") or {}
    body = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    return body, meta.get("labels"), meta.get("annotations"), meta.get("ownerReferences")


def _status_or_content(obj: Mapping[str, Any]) -> tuple[Any, ...]:
    return (*_content(obj), obj.get("status"), (obj.get("metadata") or {}).get("generation"))


class ChildPredicate:
    """Which events of an owned child are worth a reconcile of its owner.

    Create events are skipped: we created the child ourselves (after a restart the owners' own adds
    reconcile everything). Updates pass when what the owner reads changed: the child's content
    (someone edited it) and, when `status` is set, its status (readiness drives ours). Deletes
    always pass, so a deleted child is recreated.
    """

    def __init__(self, *, status: bool) -> None:
        self._view = _status_or_content if status else _content

    def create(self, obj: Obj) -> bool:
        return False

    def update(self, old: Obj, new: Obj) -> bool:
        return self._view(old) != self._view(new)

    def delete(self, obj: Obj) -> bool:
        return True


# Children whose status the owner reads (workloads, DCDs) and children it only writes.
CHILD_STATUS_CHANGED = ChildPredicate(status=True)
CHILD_CONTENT_CHANGED = ChildPredicate(status=False)


def owner_reference(owner: Mapping[str, Any]) -> dict[str, Any]:
    """A controller ownerReference to `owner` (blockOwnerDeletion so foreground deletion waits)."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_uid(obj: Mapping[str, Any]) -> str | None:
    """UID of the object's controller ownerReference, or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            uid = ref.get("uid")
            return str(uid) if uid else None
    return None


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def prepare(owner: Mapping[str, Any], obj: Obj) -> Obj:
    """A copy of `obj` in the owner's namespace, controlled by the owner, stamped with its hash."""
    out = copy.deepcopy(obj)
    meta = out.setdefault("metadata", {})
    meta.setdefault("namespace", owner["metadata"]["namespace"])
    others = [r for r in meta.get("ownerReferences") or () if not r.get("controller")]
    meta["ownerReferences"] = [owner_reference(owner), *others]
    return stamp_hash(out)


def _drifted(desired: Mapping[str, Any], live: Mapping[str, Any]) -> bool:
    """Fields someone else may edit without changing our hash stamp, compared desired vs live.

    Only `spec.replicas` today: a hand-scaled child must be put back (user report #4420); template
    edits bump the child's generation and show up in its status instead.
    """
    want = (desired.get("spec") or {}).get("replicas")
    return want is not None and (live.get("spec") or {}).get("replicas") != want


def _name(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["name"])


class RecentWrites:
    """What this process wrote lately, so a cache that has not yet caught up does not make us write
    the same thing again (each repeat would be a real request, and the quiet period must be zero).

    An entry is (resourceVersion the cache showed before our write, when, what we wrote). While the
    cache still shows that resourceVersion, our write is in flight from the cache's point of view and
    the recorded content stands in for it. Once the cache shows anything else the entry is dropped,
    and it expires after `ttl` seconds anyway. A created object that the cache does not show is
    ambiguous (not seen yet, or seen and deleted since): the syncer reads it once to decide, so a
    deleted child is re-created at once. Purely an optimisation: forgetting costs one redundant write.
    """

    def __init__(
        self, size: int = 8192, *, ttl: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._size, self._ttl, self._clock = size, ttl, clock
        self._entries: OrderedDict[tuple[str, ...], tuple[str, float, Any]] = OrderedDict()

    def remember(self, key: tuple[str, ...], live: Mapping[str, Any] | None, content: Any) -> None:
        now = self._clock()
        self._entries[key] = (_rv(live), now, content)
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

    def forget(self, key: tuple[str, ...]) -> None:
        self._entries.pop(key, None)

    def in_flight(self, key: tuple[str, ...], live: Mapping[str, Any] | None) -> Any | None:
        """What we wrote for `key` if the cache still shows the version from before that write."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        before, when, content = entry
        if before != _rv(live) or self._clock() - when > self._ttl:
            del self._entries[key]  # the cache has moved on (or we waited long enough): trust it
            return None
        return content


def _rv(obj: Mapping[str, Any] | None) -> str:
    if obj is None:
        return ""
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _write_key(resource: Resource, obj: Mapping[str, Any]) -> tuple[str, ...]:
    meta = obj.get("metadata") or {}
    return (resource.group, resource.plural, str(meta.get("namespace", "")), str(meta.get("name", "")))


WRITTEN_LAST = frozenset({"RoleBinding"})
"""Kinds written after all others: the API server checks a RoleBinding against the Role it names
(RBAC's escalation check) and answers 404 "role not found" while that Role is not yet there."""


def _waves(prepared: Sequence[tuple[Desired, Obj]]) -> list[list[tuple[Desired, Obj]]]:
    """The writes of one sync in order: everything else first, then `WRITTEN_LAST` kinds."""
    first = [p for p in prepared if p[0].resource.kind not in WRITTEN_LAST]
    last = [p for p in prepared if p[0].resource.kind in WRITTEN_LAST]
    return [wave for wave in (first, last) if wave]


class ChildSyncer:
    """Applies an owner's desired children and prunes the rest. Keeps only `RecentWrites`."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        field_manager: str = FIELD_MANAGER,
        recent: RecentWrites | None = None,
        confirm_owner: bool = False,
        shapes: Mapping[Resource, Transform] = CHILD_SHAPES,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._field_manager = field_manager
        self._recent = recent if recent is not None else RecentWrites()
        self._confirm_owner = confirm_owner
        self._shapes = shapes

    def _shape_for_memory(self, resource: Resource, written: Obj) -> Obj:
        """What to remember of a write: the cache's shape of it (see cache_shapes.py), not the whole
        response, since the memory stands in for the cache and is read the same way."""
        bare = strip_managed_fields(written)  # the response is ours alone; nobody reads them
        shape = self._shapes.get(resource)
        return shape(bare) if shape is not None else bare

    async def sync(
        self,
        owner: Obj,
        desired: Sequence[Desired],
        *,
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None = None,
    ) -> SyncReport:
        """Write every desired child whose content changed, then delete owned children not desired.

        Writes go in waves (`_waves`), each wave concurrently. Raises ChildWriteError for the first
        write that failed (the rest of its wave still ran; later waves do not). Pruning runs only
        when every write succeeded, so a half-failed sync never removes the old objects. Before any
        write: DuplicateChildren when `desired` names an object twice, ChildrenOwnedByOthers when
        a desired child (not `shared`) is controlled by another owner.
        """
        report = SyncReport()
        try:
            await self._write_and_prune(owner, desired, owned, keep, report)
        finally:
            self._summarise(owner, report)
        return report

    async def _write_and_prune(
        self,
        owner: Obj,
        desired: Sequence[Desired],
        owned: Iterable[Resource],
        keep: Callable[[Resource, Obj], bool] | None,
        report: SyncReport,
    ) -> None:
        prepared = [
            (d, prepare(owner, d.obj) if d.owned else stamp_hash(copy.deepcopy(d.obj))) for d in desired
        ]
        self._refuse_duplicates(prepared)
        self._refuse_conflicts(owner, prepared)
        for wave in _waves(prepared):
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

    @staticmethod
    def _refuse_duplicates(prepared: Sequence[tuple[Desired, Obj]]) -> None:
        counts = Counter(_write_key(d.resource, obj) for d, obj in prepared)
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
        parts = [
            (reason, f"{verb}: {', '.join(sorted(names))}")
            for reason, verb, names in (
                ("Created", "created", report.created),
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
            if recorded_hash(live) == content_hash(obj) and not _drifted(obj, live) and live_uid is not None:
                report.current[(resource, name)] = live
                return
        key = _write_key(resource, obj)
        written = self._recent.in_flight(key, live)
        if written is not None and recorded_hash(written) == content_hash(obj) and not d.create_only:
            # Already sent and the cache is behind, unless what we created has been deleted since:
            # "absent from the cache" cannot tell those apart, one read can.
            if live is not None or await self._exists(resource, obj):
                report.current[(resource, name)] = written
                return
            self._recent.forget(key)
        if live is None and self._confirm_owner:
            await self._owner_still_there(owner, report)  # raises OwnerGone: nothing is created
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
        self._recent.remember(_write_key(resource, obj), live, self._shape_for_memory(resource, result))
        (report.created if live is None else report.updated).append(f"{resource.kind}/{name}")

    async def _owner_still_there(self, owner: Obj, report: SyncReport) -> None:
        """Before a sync's first create, one live read of the owner (shared by its other creates).

        The API server accepts an ownerReference to a UID that no longer exists, so a child created
        from a cache that still shows a deleted owner outlives it. Worse, after an API server
        restart kube-controller-manager's informers may miss the garbage-collected child and its
        same-named re-creation and see one update between two UIDs: its garbage collector then
        keeps the old child in its graph, and that child's ReplicaSets and pods leak until it
        restarts (issue #10).
        """
        if report.owner_check is None:
            report.owner_check = OwnerCheck(self._client, kinds.resource_of(owner), owner)
        await report.owner_check.confirm()

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
        self._recorder.event(
            owner,
            type="Warning",
            reason=f"{verb.capitalize()}{resource.kind}Failed",
            message=f"{name}: {err}",
        )


def merge_patch(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 patch turning `old` into `new` (maps recurse, anything else replaces, null deletes)."""
    old = old or {}
    patch: dict[str, Any] = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            sub = merge_patch(before, value)
            if sub:
                patch[key] = sub
        elif before != value or key not in old:
            patch[key] = value
    return patch


def without_none(value: Any) -> Any:
    """Drop None values recursively: the form the API server stores and hands back."""
    if isinstance(value, Mapping):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_none(v) for v in value]
    return value


class StatusWriter:
    """Writes an object's status subresource only when it changed, remembering what it wrote so a
    stale cache is compared against our own last write rather than the older version it shows."""

    def __init__(self, client: ChildClient, resource: Resource, recent: RecentWrites | None = None) -> None:
        self._client, self._resource = client, resource
        self._recent = recent if recent is not None else RecentWrites()

    def current(self, live: Mapping[str, Any]) -> dict[str, Any]:
        """The status to build on: our in-flight write when the cache is behind it, else the live one."""
        written = self._recent.in_flight(("status", *_write_key(self._resource, live)), live)
        return dict(written if written is not None else (live.get("status") or {}))

    async def write(self, live: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
        """Merge-patch the status when it differs from `current(live)`; True when a request was sent."""
        new = without_none(status)
        # The base is what the server holds as far as we know: our own last write while the cache
        # still shows the status from before it. A patch computed from the cache's older status would
        # leave out fields that went back to what the cache shows, and the server would keep our
        # in-between values of them (a Ready condition beside the state of an earlier write).
        current = self.current(live)
        patch = merge_patch(current, new)
        if not patch:
            return False
        meta = live["metadata"]
        await self._client.patch(
            self._resource,
            meta["name"],
            {"status": patch},
            namespace=meta.get("namespace"),
            subresource="status",
        )
        self._recent.remember(("status", *_write_key(self._resource, live)), live, new)
        return True


async def write_status_if_changed(
    client: ChildClient, resource: Resource, live: Mapping[str, Any], status: Mapping[str, Any]
) -> Obj | None:
    """Merge-patch the status subresource when `status` differs from the live one; None when equal.
    Stateless; `StatusWriter` also covers a cache that has not yet seen our previous write."""
    new = without_none(status)
    patch = merge_patch(live.get("status") or {}, new)
    if not patch:
        return None
    meta = live["metadata"]
    return await client.patch(
        resource, meta["name"], {"status": patch}, namespace=meta.get("namespace"), subresource="status"
    )
