"""The storage-version migrator: one pass per CRD, repeated with backoff until every CRD is done.

A pass over a CRD that needs migration (`plan.py`):
  0. wait until the CRD's spec has stood still for `SETTLE` seconds: an API server applies a new
     storage version only once its own watch of the CRD delivered the change, and until then it
     still stores writes at the old version (seen on the local control plane: a write right after
     the flip was stored at the old version). In an upgrade the operator starts well after its
     CRDs were applied, so this costs one wait and one GET;
  1. LIST its objects at the storage version, `page_size` at a time (`limit` + `continue`), so memory
     is bounded by a page whatever the number of objects;
  2. rewrite each object with a PUT of the object exactly as listed, its resourceVersion included.
     The API server encodes what it stores at the current storage version and compares the bytes
     with what etcd holds: an object stored at an older version differs (its apiVersion does) and is
     stored anew with a new resourceVersion; an object already at the storage version is identical,
     so the server skips the write and answers with the same resourceVersion. Measured on
     kube-apiserver 1.33, any no-op write re-stores a stale object (a PUT, a merge patch `{}`, an
     empty JSON patch, an apply); the PUT is used because its resourceVersion precondition means the
     migrator never writes back anything but what it read;
     - Conflict: the object changed after the LIST; read it again and PUT that (bounded attempts);
     - NotFound: deleted meanwhile, nothing left to migrate;
     - any other refusal (an object the current schema rejects, say) is counted and logged, the
       pass goes on with the other objects, and the CRD is not trimmed;
  3. once every object was rewritten, patch `status.storedVersions` to the storage version alone,
     conditional on the CRD's resourceVersion and only if its generation did not change since the
     pass began (`plan.may_trim`).

Resuming is running again: nothing is remembered between passes or processes. Objects an earlier,
interrupted pass already rewrote cost one PUT each that the server answers without writing to etcd.
A CRD whose `storedVersions` is already [storage version] costs one GET and no write.

`run()` is meant for a background task: it never raises (only cancellation ends it early), logs each
failed pass and retries it with capped exponential backoff. Its requests go at LOW priority through
the client's gate, so reconciles are served first.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import structlog
from dynamo_operator.internal.cache.backoff import Backoff
from dynamo_operator.internal.client.errors import ApiError, Conflict, NotFound, TransportError
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.client.model import ListPage, Obj
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.crdmigrator import metrics
from dynamo_operator.internal.crdmigrator.plan import Plan, may_trim, plan_for, trim_patch

log = structlog.get_logger(__name__)

FIELD_MANAGER: Final = "dynamo-operator-crd-migrator"
# A page of full objects is held at once; graphs run to tens of KiB each, so 100 keeps a page to a
# few MiB while a thousand objects still take only ten LISTs.
PAGE_SIZE: Final = 100
# Writes of one page in flight at once: enough to hide the round trip, few enough that the API
# server (and the gate, at LOW priority) barely notices.
CONCURRENCY: Final = 4
# An object that keeps changing between our read and our write is being written by someone else,
# and each of their writes stores it at the storage version too; a few tries, then the next pass.
CONFLICT_ATTEMPTS: Final = 5
# Re-reads of the CRD for the final status patch when something else updates the CRD meanwhile
# (the conversion webhook's CA injector does, at start-up and on rotation).
TRIM_ATTEMPTS: Final = 5
# How long the CRD's generation must stay the same before objects are rewritten (step 0 above): an
# API server's watch of CRDs delivers within milliseconds when healthy; seconds leave a wide margin
# for a loaded one or an HA peer.
SETTLE: Final = 5.0
SETTLE_ATTEMPTS: Final = 3
# Between failed passes: from 1 s (a webhook not yet reachable, a leader just elected) up to 5 min
# (then drawn from [5, 10) min): a pass that keeps failing, say on an object the schema refuses,
# re-sends a PUT per object each time, so a stuck migration must not become a steady load.
RETRY_INITIAL: Final = 1.0
RETRY_CAP: Final = 300.0


class MigratorClient(Protocol):
    """What the migrator needs of `internal.client.Client` (a test may wrap it to count requests)."""

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj: ...

    async def list_page(
        self, resource: Resource, *, limit: int = ..., continue_token: str | None = None
    ) -> ListPage: ...

    async def replace(self, resource: Resource, obj: Obj, *, field_manager: str | None = ...) -> Obj: ...

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        subresource: str | None = None,
        field_manager: str | None = ...,
    ) -> Obj: ...


class MigrationIncomplete(Exception):
    """Some objects of a CRD could not be rewritten; its storedVersions was left as it was."""


@dataclass(slots=True)
class CrdReport:
    """What one pass over one CRD did."""

    crd: str
    needed: bool = False  # storedVersions held another version when the pass began
    pages: int = 0
    listed: int = 0
    migrated: int = 0  # stored anew at the storage version
    unchanged: int = 0  # already stored at the storage version (the server skipped the write)
    gone: int = 0  # deleted before it could be written
    conflicts: int = 0
    failed: int = 0
    writes: int = 0  # write requests sent: object PUTs (conflicting ones too) and the status patch
    trimmed: bool = False  # this pass patched storedVersions
    done: bool = False  # storedVersions holds only the storage version (or the CRD is not there)
    failures: list[str] = field(default_factory=list)  # the first few refusals, for the log


_MAX_FAILURES_KEPT = 5


def _key(obj: Obj) -> tuple[str | None, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), str(meta.get("name") or "")


def _resource_version(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class CrdMigrator:
    """Migrates the named CRDs' objects to their storage version; see the module docstring."""

    def __init__(
        self,
        client: MigratorClient,
        crd_names: Sequence[str],
        *,
        page_size: int = PAGE_SIZE,
        concurrency: int = CONCURRENCY,
        settle: float = SETTLE,
        field_manager: str = FIELD_MANAGER,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        on_page: Callable[[CrdReport], None] | None = None,
    ) -> None:
        if page_size < 1 or concurrency < 1:
            raise ValueError("page_size and concurrency must be at least 1")
        if len(set(crd_names)) != len(crd_names):
            raise ValueError(f"CRD names repeat: {sorted(crd_names)}")
        self._client = client
        self.crd_names = tuple(crd_names)
        self._page_size = page_size
        self._concurrency = concurrency
        self._settle = settle
        self._field_manager = field_manager
        self._clock = clock or RealClock()
        self._rng = rng or random.Random()
        # Called after each page is written (progress for tests; a test may cancel the run there).
        self._on_page = on_page
        metrics.init(list(self.crd_names))

    # -- the background loop -----------------------------------------------------------------------

    async def run(self) -> dict[str, CrdReport]:
        """Migrate every CRD, retrying failed passes with backoff until all are done; never raises
        but on cancellation. Returns the last pass's report of each CRD."""
        pending = list(self.crd_names)
        reports: dict[str, CrdReport] = {}
        # reset_after beyond the cap: the waits themselves must not count as a healthy stretch.
        backoff = Backoff(
            self._clock, self._rng, initial=RETRY_INITIAL, cap=RETRY_CAP, reset_after=4 * RETRY_CAP
        )
        metrics.PENDING_CRDS.set(len(pending))
        with request_priority(Priority.LOW):
            while pending:
                for name in list(pending):
                    try:
                        report = await self.migrate(name)
                    except Exception as err:  # a failed pass is retried, never fatal
                        metrics.FAILED_PASSES.labels(name).inc()
                        log.warning("Storage migration pass failed; will retry", crd=name, error=str(err))
                        continue
                    reports[name] = report
                    if report.done:
                        pending.remove(name)
                        metrics.PENDING_CRDS.set(len(pending))
                if pending:
                    delay = backoff.next_delay()
                    log.info("Storage migration not finished", pending=pending, retry_in=round(delay, 1))
                    await self._clock.sleep(delay)
        return reports

    # -- one pass over one CRD ----------------------------------------------------------------------

    async def migrate(self, crd_name: str) -> CrdReport:
        """One pass over `crd_name`. Raises MigrationIncomplete when objects were refused, and the
        client's errors when a LIST or a read of the CRD fails."""
        report = CrdReport(crd_name)
        try:
            crd = await self._client.get(CUSTOM_RESOURCE_DEFINITION, crd_name)
        except NotFound:
            log.info("CRD not installed; nothing to migrate", crd=crd_name)
            report.done = True
            return report
        plan = plan_for(crd)
        if not plan.needs_migration:
            log.debug("CRD stores one version only; nothing to migrate", crd=crd_name)
            report.done = True
            return report
        report.needed = True
        settled = await self._settled(plan)
        if settled is None:
            return report  # the spec keeps changing; the next pass looks again
        if not settled.needs_migration:
            report.done = True  # trimmed by someone else meanwhile
            return report
        plan = settled
        log.info(
            "Storage migration started",
            crd=crd_name,
            storage_version=plan.storage_version,
            stored_versions=list(plan.stored_versions),
        )
        token: str | None = None
        while True:
            page = await self._client.list_page(plan.resource, limit=self._page_size, continue_token=token)
            report.pages += 1
            report.listed += len(page.items)
            await self._rewrite_page(plan, page.items, report)
            log.info(
                "Storage migration progress",
                crd=crd_name,
                page=report.pages,
                listed=report.listed,
                migrated=report.migrated,
                unchanged=report.unchanged,
                gone=report.gone,
                failed=report.failed,
            )
            if self._on_page is not None:
                self._on_page(report)
            if not (token := page.continue_token):
                break
        if report.failed:
            raise MigrationIncomplete(
                f"{report.failed} of {report.listed} {crd_name} objects could not be rewritten "
                f"(first: {'; '.join(report.failures)}); storedVersions left as it was"
            )
        report.done = await self._trim(plan, report)
        return report

    async def _settled(self, plan: Plan) -> Plan | None:
        """The CRD as read again once its generation stayed `plan`'s for `settle` seconds; None when
        it kept changing (or is gone)."""
        for _ in range(SETTLE_ATTEMPTS):
            await self._clock.sleep(self._settle)
            try:
                again = plan_for(await self._client.get(CUSTOM_RESOURCE_DEFINITION, plan.crd_name))
            except NotFound:
                return None
            if again.generation == plan.generation:
                return again
            plan = again
        log.info("CRD keeps changing; storage migration waits for the next pass", crd=plan.crd_name)
        return None

    async def _rewrite_page(self, plan: Plan, items: list[Obj], report: CrdReport) -> None:
        slots = asyncio.Semaphore(self._concurrency)

        async def one(obj: Obj) -> None:
            async with slots:
                await self._rewrite(plan, obj, report)

        async with asyncio.TaskGroup() as tasks:
            for obj in items:
                tasks.create_task(one(obj))

    async def _rewrite(self, plan: Plan, obj: Obj, report: CrdReport) -> None:
        """PUT `obj` back unchanged so the API server stores it at the storage version."""
        namespace, name = _key(obj)
        for _ in range(CONFLICT_ATTEMPTS):
            report.writes += 1
            try:
                written = await self._client.replace(plan.resource, obj, field_manager=self._field_manager)
            except NotFound:
                self._count(report, metrics.GONE)
                return
            except Conflict:
                report.conflicts += 1
                try:
                    obj = await self._client.get(plan.resource, name, namespace=namespace)
                except NotFound:
                    self._count(report, metrics.GONE)
                    return
                continue
            except (ApiError, TransportError) as err:
                self._refused(report, namespace, name, str(err))
                return
            same = _resource_version(written) == _resource_version(obj)
            self._count(report, metrics.UNCHANGED if same else metrics.MIGRATED)
            return
        self._refused(report, namespace, name, f"still conflicting after {CONFLICT_ATTEMPTS} attempts")

    def _count(self, report: CrdReport, result: str) -> None:
        match result:
            case metrics.MIGRATED:
                report.migrated += 1
            case metrics.UNCHANGED:
                report.unchanged += 1
            case _:
                report.gone += 1
        metrics.OBJECTS.labels(report.crd, result).inc()

    def _refused(self, report: CrdReport, namespace: str | None, name: str, why: str) -> None:
        report.failed += 1
        where = f"{namespace}/{name}" if namespace else name
        if len(report.failures) < _MAX_FAILURES_KEPT:
            report.failures.append(f"{where}: {why}")
        log.warning("Storage migration could not rewrite an object", crd=report.crd, object=where, error=why)

    async def _trim(self, started: Plan, report: CrdReport) -> bool:
        """Patch storedVersions to the storage version; False when the CRD's spec changed meanwhile
        (the next pass starts over) or it kept changing under us."""
        for _ in range(TRIM_ATTEMPTS):
            try:
                now = plan_for(await self._client.get(CUSTOM_RESOURCE_DEFINITION, started.crd_name))
            except NotFound:
                return True  # the CRD and its objects are gone
            if not now.needs_migration:
                return True  # trimmed by someone else
            if not may_trim(started, now):
                log.info(
                    "CRD changed during storage migration; migrating again",
                    crd=started.crd_name,
                    generation=now.generation,
                    storage_version=now.storage_version,
                )
                return False
            report.writes += 1
            try:
                await self._client.patch(
                    CUSTOM_RESOURCE_DEFINITION,
                    started.crd_name,
                    trim_patch(now),
                    subresource="status",
                    field_manager=self._field_manager,
                )
            except Conflict:
                continue
            report.trimmed = True
            log.info(
                "Storage migration finished; storedVersions trimmed",
                crd=started.crd_name,
                stored_versions=[now.storage_version],
                removed=list(now.stale_versions),
                pages=report.pages,
                migrated=report.migrated,
                unchanged=report.unchanged,
                gone=report.gone,
            )
            return True
        return False
