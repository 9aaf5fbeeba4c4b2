"""The migrator's decisions against an in-memory API (the real API server's behaviour is proven in
test/integration/runtime_controller/test_storage_migration.py): what it writes, what it skips, when it
trims, and that a failed pass is retried rather than fatal."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from dynamo_operator.internal.client.errors import Conflict, Invalid, NotFound, ServerError
from dynamo_operator.internal.client.model import ListPage, Obj
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.clock import Timer
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator, MigrationIncomplete

CRD_NAME = "widgets.example.test"


class Clock:
    """Sleeps return at once; each is recorded."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def wall(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC)

    async def sleep(self, seconds: float) -> None:
        if seconds:  # the tests' settle time is 0 unless a test is about it
            self.slept.append(seconds)
        self.t += seconds

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        raise NotImplementedError


class FakeApi:
    """One CRD and its objects; an object is `stale` until written (stored at an older version)."""

    def __init__(self, *, objects: int, stored: list[str]) -> None:
        self.rv = 100
        self.crd: Obj | None = {
            "metadata": {"name": CRD_NAME, "generation": 2, "resourceVersion": "1"},
            "spec": {
                "group": "example.test",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [
                    {"name": "v1", "served": True, "storage": False},
                    {"name": "v2", "served": True, "storage": True},
                ],
            },
            "status": {"storedVersions": stored},
        }
        self.objects: dict[str, Obj] = {}
        self.stale: set[str] = set()
        for i in range(objects):
            name = f"w{i:03d}"
            self.objects[name] = {
                "metadata": {"name": name, "namespace": "ns", "resourceVersion": self._next()}
            }
            self.stale.add(name)
        self.writes: list[str] = []  # "PUT name" / "PATCH crd"
        self.refuse: dict[str, Exception] = {}  # name -> error raised by its PUT
        self.before_put: Callable[[str], None] = lambda name: None
        self.list_errors: list[Exception] = []
        self.crd_reads = 0
        self.on_crd_read: Callable[[int], None] = lambda reads: None

    def _next(self) -> str:
        self.rv += 1
        return str(self.rv)

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        if resource == CUSTOM_RESOURCE_DEFINITION:
            self.crd_reads += 1
            self.on_crd_read(self.crd_reads)
            if self.crd is None:
                raise NotFound(404, "NotFound")
            return copy.deepcopy(self.crd)
        if name not in self.objects:
            raise NotFound(404, "NotFound")
        return copy.deepcopy(self.objects[name])

    async def list_page(
        self, resource: Resource, *, limit: int = 500, continue_token: str | None = None
    ) -> ListPage:
        if self.list_errors:
            raise self.list_errors.pop(0)
        names = sorted(self.objects)
        start = int(continue_token or 0)
        chunk = names[start : start + limit]
        more = start + limit < len(names)
        return ListPage(
            items=[copy.deepcopy(self.objects[n]) for n in chunk],
            resource_version=str(self.rv),
            continue_token=str(start + limit) if more else None,
        )

    async def replace(self, resource: Resource, obj: Obj, *, field_manager: str | None = None) -> Obj:
        name = obj["metadata"]["name"]
        self.writes.append(f"PUT {name}")
        self.before_put(name)
        if name in self.refuse:
            raise self.refuse[name]
        if name not in self.objects:
            raise NotFound(404, "NotFound")
        if obj["metadata"]["resourceVersion"] != self.objects[name]["metadata"]["resourceVersion"]:
            raise Conflict(409, "Conflict")
        if name in self.stale:  # re-encoded: a new resourceVersion; else the server skips the write
            self.stale.discard(name)
            self.objects[name]["metadata"]["resourceVersion"] = self._next()
        return copy.deepcopy(self.objects[name])

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
    ) -> Obj:
        assert resource == CUSTOM_RESOURCE_DEFINITION and subresource == "status" and self.crd is not None
        self.writes.append("PATCH crd")
        if body["metadata"]["resourceVersion"] != self.crd["metadata"]["resourceVersion"]:
            raise Conflict(409, "Conflict")
        self.crd["status"]["storedVersions"] = body["status"]["storedVersions"]
        self.crd["metadata"]["resourceVersion"] = self._next()
        return copy.deepcopy(self.crd)

    def touch(self, name: str) -> None:
        """Someone else writes the object (stored at the storage version from then on)."""
        self.stale.discard(name)
        self.objects[name]["metadata"]["resourceVersion"] = self._next()


def migrator(api: FakeApi, **kwargs: Any) -> CrdMigrator:
    kwargs.setdefault("settle", 0.0)
    return CrdMigrator(api, [CRD_NAME], page_size=10, clock=kwargs.pop("clock", Clock()), **kwargs)


async def test_nothing_stored_at_another_version_means_no_write() -> None:
    api = FakeApi(objects=25, stored=["v2"])
    report = await migrator(api).migrate(CRD_NAME)
    assert report.done and not report.needed
    assert api.writes == []


async def test_a_missing_crd_is_done_without_a_write() -> None:
    api = FakeApi(objects=0, stored=["v1", "v2"])
    api.crd = None
    report = await migrator(api).migrate(CRD_NAME)
    assert report.done and api.writes == []


async def test_every_object_is_rewritten_page_by_page_then_trimmed() -> None:
    api = FakeApi(objects=25, stored=["v1", "v2"])
    pages: list[int] = []
    report = await migrator(api, on_page=lambda r: pages.append(r.listed)).migrate(CRD_NAME)
    assert pages == [10, 20, 25]
    assert (report.migrated, report.unchanged, report.writes) == (25, 0, 26)
    assert api.stale == set()
    assert api.crd is not None and api.crd["status"]["storedVersions"] == ["v2"]
    assert api.writes[-1] == "PATCH crd" and report.trimmed and report.done


async def test_the_rewrite_waits_until_the_spec_stood_still() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])
    clock = Clock()

    def bump_on_second_read(reads: int) -> None:
        if reads == 2:  # the storage version changed again right after the pass looked
            assert api.crd is not None
            api.crd["metadata"]["generation"] += 1
            assert api.writes == []

    api.on_crd_read = bump_on_second_read
    report = await migrator(api, clock=clock, settle=5.0).migrate(CRD_NAME)
    assert clock.slept == [5.0, 5.0]
    assert report.done and report.migrated == 3


async def test_a_spec_that_keeps_changing_postpones_the_rewrite() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])

    def bump(reads: int) -> None:
        assert api.crd is not None
        api.crd["metadata"]["generation"] += 1

    api.on_crd_read = bump
    report = await migrator(api, settle=5.0).migrate(CRD_NAME)
    assert not report.done and api.writes == []


async def test_a_conflict_is_read_again_and_written() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])
    touched: list[str] = []

    def concurrent_write(name: str) -> None:
        if name == "w001" and not touched:
            touched.append(name)
            api.touch(name)

    api.before_put = concurrent_write
    report = await migrator(api).migrate(CRD_NAME)
    assert report.conflicts == 1
    assert api.writes.count("PUT w001") == 2
    # The second PUT carried the new resourceVersion; the object was already current.
    assert (report.migrated, report.unchanged) == (2, 1)
    assert report.done


async def test_an_object_deleted_meanwhile_is_skipped() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])
    api.before_put = lambda name: api.objects.pop(name) if name == "w002" else None
    report = await migrator(api).migrate(CRD_NAME)
    assert (report.migrated, report.gone) == (2, 1)
    assert report.done


async def test_a_refused_object_keeps_stored_versions_and_the_others_are_written() -> None:
    api = FakeApi(objects=5, stored=["v1", "v2"])
    api.refuse["w003"] = Invalid(422, "Invalid", "spec.x: too big")
    with pytest.raises(MigrationIncomplete, match="1 of 5"):
        await migrator(api).migrate(CRD_NAME)
    assert api.stale == {"w003"}
    assert "PATCH crd" not in api.writes
    assert api.crd is not None and api.crd["status"]["storedVersions"] == ["v1", "v2"]


async def test_a_spec_change_during_the_pass_means_another_pass() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])

    def change_spec(report: object) -> None:
        assert api.crd is not None
        api.crd["metadata"]["generation"] += 1

    report = await migrator(api, on_page=change_spec).migrate(CRD_NAME)
    assert not report.done and not report.trimmed
    assert "PATCH crd" not in api.writes


async def test_a_second_run_after_an_interrupted_one_writes_each_object_and_trims() -> None:
    api = FakeApi(objects=25, stored=["v1", "v2"])

    class Stop(Exception):
        pass

    def stop_after_first_page(report: object) -> None:
        raise Stop

    with pytest.raises(Stop):
        await migrator(api, on_page=stop_after_first_page).migrate(CRD_NAME)
    assert len(api.stale) == 15
    report = await migrator(api).migrate(CRD_NAME)
    assert (report.migrated, report.unchanged) == (15, 10)
    assert report.done


async def test_a_failed_pass_is_retried_after_a_backoff() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])
    api.list_errors = [ServerError(500, "InternalError"), ServerError(503, "ServiceUnavailable")]
    clock = Clock()
    reports = await migrator(api, clock=clock).run()
    assert len(clock.slept) == 2
    assert clock.slept[0] < 2 <= clock.slept[1]  # 1 s, then 2 s, each drawn from [d, 2d)
    assert reports[CRD_NAME].done and api.stale == set()


async def test_a_pass_that_keeps_failing_is_retried_at_most_every_five_to_ten_minutes() -> None:
    api = FakeApi(objects=3, stored=["v1", "v2"])
    api.list_errors = [ServerError(500, "InternalError") for _ in range(20)]
    clock = Clock()
    await migrator(api, clock=clock).run()
    assert len(clock.slept) == 20
    assert all(300 <= d < 600 for d in clock.slept[-5:])
    assert max(clock.slept) < 600


async def test_run_returns_at_once_when_nothing_is_pending() -> None:
    api = FakeApi(objects=3, stored=["v2"])
    clock = Clock()
    reports = await migrator(api, clock=clock).run()
    assert clock.slept == [] and api.writes == [] and reports[CRD_NAME].done
