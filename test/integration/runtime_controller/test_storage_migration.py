"""The storage-version migrator (internal/crdmigrator) on the real API server: a CRD of the test's own
(versions v1 and v2, conversion None) holding objects stored at v1, its storage version flipped to v2,
then the migrator run with a small page size.

What an object is stored as is read from etcd itself (the local control plane's etcd answers JSON on
loopback), so "rewritten" means re-encoded at v2, not only "written". Writes are counted by a wrapper
around the test's client: every request the migrator makes goes through it.

Every loop is bounded in count and time; assertions are on counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from dynamo_operator import storage_migration, webhook_setup
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound
from dynamo_operator.internal.client.model import ListPage, Obj
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator, CrdReport
from dynamo_operator.internal.observability.metrics import REGISTRY
from localcluster import LocalCluster
from testsupport.api import eventually
from testsupport.cluster import Cluster
from testsupport.etcd import set_storage_version, stored_objects
from testsupport.webhook import widget_convert
from testsupport.webhook import widget_crd as webhook_widget_crd

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

FIELD_MANAGER = "integration-test"
OBJECTS = 120
PAGE_SIZE = 50
CREATE_CONCURRENCY = 8


class CountingClient:
    """The migrator's view of the API (`MigratorClient`), counting each request by verb; `before_put`
    runs before each PUT is sent (a test writes the object there to cause a real conflict)."""

    def __init__(self, api: Client) -> None:
        self.api = api
        self.calls: Counter[str] = Counter()
        self.before_put: Callable[[Obj], Any] | None = None

    @property
    def writes(self) -> int:
        return self.calls["PUT"] + self.calls["PATCH"]

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        self.calls["GET"] += 1
        return await self.api.get(resource, name, namespace=namespace)

    async def list_page(
        self, resource: Resource, *, limit: int = 500, continue_token: str | None = None
    ) -> ListPage:
        self.calls["LIST"] += 1
        return await self.api.list_page(resource, limit=limit, continue_token=continue_token)

    async def replace(self, resource: Resource, obj: Obj, *, field_manager: str | None = None) -> Obj:
        if self.before_put is not None:
            await self.before_put(obj)
        self.calls["PUT"] += 1
        return await self.api.replace(resource, obj, field_manager=field_manager)

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
    ) -> Obj:
        self.calls["PATCH"] += 1
        return await self.api.patch(
            resource, name, body, subresource=subresource, field_manager=field_manager
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def widgets(group: str, version: str) -> Resource:
    return Resource(group, version, "widgets", "Widget")


def widget_crd(group: str, storage: str) -> dict[str, Any]:
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {
                "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        }
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "conversion": {"strategy": "None"},
            "versions": [
                {
                    "name": v,
                    "served": True,
                    "storage": v == storage,
                    "schema": schema,
                    "subresources": {"status": {}},
                }
                for v in ("v1", "v2")
            ],
        },
    }


@pytest.fixture
def group() -> str:
    return f"m{secrets.token_hex(4)}.migrate.test.dynamo"


@contextlib.asynccontextmanager
async def installed(api: Client, doc: dict[str, Any]) -> AsyncIterator[str]:
    """`doc` applied and Established for the block; deleted afterwards with its objects."""
    await api.apply(CUSTOM_RESOURCE_DEFINITION, doc, field_manager=FIELD_MANAGER, force=True)
    name = doc["metadata"]["name"]

    async def established() -> bool:
        got = await api.get(CUSTOM_RESOURCE_DEFINITION, name)
        return any(
            c.get("type") == "Established" and c.get("status") == "True"
            for c in (got.get("status") or {}).get("conditions") or []
        )

    await eventually(established, timeout=30)
    try:
        yield name
    finally:
        with contextlib.suppress(NotFound):
            await api.delete(CUSTOM_RESOURCE_DEFINITION, name)


@pytest.fixture
async def crd(api: Client, group: str) -> AsyncIterator[str]:
    """The test CRD (v1 stored, conversion None)."""
    async with installed(api, widget_crd(group, storage="v1")) as name:
        yield name


async def create_widgets(api: Client, group: str, ns: str, count: int = OBJECTS) -> None:
    """`count` objects written at v1 (so stored at v1), CREATE_CONCURRENCY at a time."""
    slots = asyncio.Semaphore(CREATE_CONCURRENCY)

    async def one(i: int) -> None:
        async with slots:
            body = {"metadata": {"name": f"w{i:03d}", "namespace": ns}, "spec": {"index": i, "size": "small"}}
            await api.create(widgets(group, "v1"), body)

    async with asyncio.TaskGroup() as tasks:
        for i in range(count):
            tasks.create_task(one(i))


async def flip_storage(api: Client, crd: str, to: str, local: LocalCluster | None) -> None:
    """Make `to` the storage version (an update of the CRD, as an upgrade of the operator's CRDs is),
    then, on the local control plane, wait until the API server stores new writes at `to`: it applies
    the change only once its own watch of the CRD delivered it (the migrator waits too, see SETTLE)."""
    await set_storage_version(api, crd, to, field_manager=FIELD_MANAGER)
    if local is not None:
        group = crd.split(".", 1)[1]
        await eventually(lambda: new_writes_stored_at(api, local, group, to), timeout=30, interval=0.2)


async def new_writes_stored_at(api: Client, local: LocalCluster, group: str, version: str) -> bool:
    """Write a probe object (in `default`, deleted again) and read what etcd holds of it."""
    name = f"probe-{secrets.token_hex(3)}"
    await api.create(
        widgets(group, version), {"metadata": {"name": name, "namespace": "default"}, "spec": {}}
    )
    try:
        stored = await asyncio.to_thread(etcd_widgets, local, group, "default")
    finally:
        await api.delete(widgets(group, version), name, namespace="default")
    return [o["apiVersion"] for o in stored if o["metadata"]["name"] == name] == [f"{group}/{version}"]


async def stored_versions(api: Client, crd: str) -> list[str]:
    got = await api.get(CUSTOM_RESOURCE_DEFINITION, crd)
    return list((got.get("status") or {}).get("storedVersions") or [])


async def listed(api: Client, group: str, ns: str) -> dict[str, Obj]:
    return {o["metadata"]["name"]: o for o in await api.list(widgets(group, "v2"), namespace=ns)}


def etcd_widgets(local: LocalCluster, group: str, ns: str) -> list[dict[str, Any]]:
    """The namespace's widgets as etcd holds them, in key order."""
    return stored_objects(local, group, "widgets", ns)


async def stored_specs(local: LocalCluster, group: str, ns: str) -> list[Any]:
    return [o["spec"] for o in await asyncio.to_thread(etcd_widgets, local, group, ns)]


async def converted(api: Client, group: str, ns: str) -> bool:
    try:
        await api.get(widgets(group, "v2"), "w000", namespace=ns)
    except ApiError:
        return False
    return True


async def stored_at(local: LocalCluster, group: str, ns: str) -> Counter[str]:
    """How many of the namespace's widgets etcd holds at each apiVersion."""
    return Counter(o["apiVersion"] for o in await asyncio.to_thread(etcd_widgets, local, group, ns))


def objects_metric(crd: str, result: str) -> float | None:
    return REGISTRY.get_sample_value(
        "dynamo_operator_crd_migration_objects_total", {"crd": crd, "result": result}
    )


async def migrate(client: CountingClient, crd: str, **kw: Any) -> CrdReport:
    reports = await CrdMigrator(client, [crd], page_size=PAGE_SIZE, **kw).run()
    return reports[crd]


async def test_objects_stored_at_the_old_version_are_stored_again_at_the_new_one(
    api: Client, local_cluster: LocalCluster, ns: str, crd: str, group: str
) -> None:
    await create_widgets(api, group, ns)
    await flip_storage(api, crd, "v2", local_cluster)
    before = await listed(api, group, ns)
    assert await stored_versions(api, crd) == ["v1", "v2"]
    assert await stored_at(local_cluster, group, ns) == {f"{group}/v1": OBJECTS}

    client = CountingClient(api)
    report = await migrate(client, crd)

    assert await stored_at(local_cluster, group, ns) == {f"{group}/v2": OBJECTS}
    assert await stored_versions(api, crd) == ["v2"]
    assert (report.pages, report.migrated, report.unchanged, report.gone) == (3, OBJECTS, 0, 0)
    # One PUT per object, one status patch of the CRD; nothing else written.
    assert client.calls["PUT"] == OBJECTS and client.calls["PATCH"] == 1
    assert client.calls["LIST"] == 3
    assert objects_metric(crd, "migrated") == OBJECTS
    assert REGISTRY.get_sample_value("dynamo_operator_crd_migration_pending_crds") == 0
    after = await listed(api, group, ns)
    for name, old in before.items():
        new = after[name]
        assert new["metadata"]["resourceVersion"] != old["metadata"]["resourceVersion"], name
        # Rewritten, not changed: the same spec, and no generation bump (no reconcile would see a change).
        assert new["spec"] == old["spec"]
        assert new["metadata"]["generation"] == old["metadata"]["generation"]


async def test_a_second_run_makes_no_write(
    api: Client, cluster: Cluster, ns: str, crd: str, group: str
) -> None:
    await create_widgets(api, group, ns)
    await flip_storage(api, crd, "v2", cluster.local)
    await migrate(CountingClient(api), crd)
    before = await listed(api, group, ns)

    client = CountingClient(api)
    report = await migrate(client, crd)

    assert not report.needed and report.done
    assert client.writes == 0
    assert dict(client.calls) == {"GET": 1}  # the CRD, and nothing listed
    assert {n: o["metadata"]["resourceVersion"] for n, o in (await listed(api, group, ns)).items()} == {
        n: o["metadata"]["resourceVersion"] for n, o in before.items()
    }


async def test_an_interrupted_run_is_finished_by_the_next(
    api: Client, local_cluster: LocalCluster, ns: str, crd: str, group: str
) -> None:
    await create_widgets(api, group, ns)
    await flip_storage(api, crd, "v2", local_cluster)

    def stop_after_first_page(report: CrdReport) -> None:
        if report.pages == 1:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()  # as a leader killed right after its first page

    first = CountingClient(api)
    run = asyncio.create_task(migrate(first, crd, on_page=stop_after_first_page))
    with pytest.raises(asyncio.CancelledError):
        await run
    assert first.calls["PUT"] == PAGE_SIZE and first.calls["PATCH"] == 0
    assert await stored_at(local_cluster, group, ns) == {
        f"{group}/v2": PAGE_SIZE,
        f"{group}/v1": OBJECTS - PAGE_SIZE,
    }
    assert await stored_versions(api, crd) == ["v1", "v2"]

    second = CountingClient(api)
    report = await migrate(second, crd)

    assert await stored_at(local_cluster, group, ns) == {f"{group}/v2": OBJECTS}
    assert await stored_versions(api, crd) == ["v2"]
    # What the first run wrote is sent again and the server skips it (same resourceVersion).
    assert (report.migrated, report.unchanged) == (OBJECTS - PAGE_SIZE, PAGE_SIZE)
    assert second.calls["PUT"] == OBJECTS and second.calls["PATCH"] == 1


async def test_an_object_changed_between_list_and_write_is_read_again_and_keeps_the_change(
    api: Client, local_cluster: LocalCluster, ns: str, crd: str, group: str
) -> None:
    await create_widgets(api, group, ns, count=10)
    await flip_storage(api, crd, "v2", local_cluster)
    client = CountingClient(api)
    touched: list[str] = []

    async def someone_else_writes(obj: Obj) -> None:
        if obj["metadata"]["name"] == "w004" and not touched:
            touched.append("w004")
            patch = {"metadata": {"labels": {"changed": "meanwhile"}}}
            await api.patch(widgets(group, "v1"), "w004", patch, namespace=ns)

    client.before_put = someone_else_writes
    report = await migrate(client, crd)

    assert report.conflicts == 1 and client.calls["PUT"] == 11
    got = await api.get(widgets(group, "v2"), "w004", namespace=ns)
    assert got["metadata"]["labels"] == {"changed": "meanwhile"}
    assert await stored_at(local_cluster, group, ns) == {f"{group}/v2": 10}
    assert await stored_versions(api, crd) == ["v2"]


async def test_the_operators_own_crds_need_no_migration_while_storage_is_unchanged(api: Client) -> None:
    """The CRDs the operator migrates, as installed: each is read once, none is written."""
    client = CountingClient(api)
    migrator = CrdMigrator(client, storage_migration.MIGRATED_CRDS)
    reports = await migrator.run()
    assert client.calls == {"GET": 4}
    assert all(r.done and not r.needed for r in reports.values())
    for name in storage_migration.MIGRATED_CRDS:  # each CRD is installed: a GET that found it
        assert (await api.get(CUSTOM_RESOURCE_DEFINITION, name))["metadata"]["name"] == name


async def test_objects_converted_by_a_webhook_are_stored_converted(
    api: Client,
    local_cluster: LocalCluster,
    ns: str,
    group: str,
) -> None:
    """The operator's own case: the old version is converted by a webhook (here v1 `replicas` <-> v2
    `count`), so each object is read converted and stored in the new version's shape."""
    port = free_port()
    url = f"https://127.0.0.1:{port}/convert"
    options = OperatorOptions(leader_election_namespace=ns, webhook_bind_address=f"127.0.0.1:{port}")
    crd_doc = webhook_widget_crd(group, url)
    crd = crd_doc["metadata"]["name"]
    serving = webhook_setup.serving(api, options, convert=widget_convert, crd_names=[crd])
    async with installed(api, crd_doc), serving as hook:
        assert hook is not None
        await eventually(lambda: hook.serving, timeout=30)
        for i in range(10):
            body = {"metadata": {"name": f"w{i:03d}", "namespace": ns}, "spec": {"replicas": i}}
            await api.create(widgets(group, "v1"), body)
        await flip_storage(api, crd, "v2", local_cluster)
        # The API server learns the webhook's CA from its own watch of the CRD: wait for one conversion.
        await eventually(lambda: converted(api, group, ns), timeout=30, interval=0.2)

        report = await migrate(CountingClient(api), crd)

        assert (report.migrated, report.pages) == (10, 1)
        assert await stored_at(local_cluster, group, ns) == {f"{group}/v2": 10}
        assert await stored_specs(local_cluster, group, ns) == [{"count": i} for i in range(10)]
        assert await stored_versions(api, crd) == ["v2"]


async def test_the_api_server_re_stores_a_stale_object_on_any_no_op_write(
    api: Client, local_cluster: LocalCluster, ns: str, crd: str, group: str
) -> None:
    """Why a plain PUT suffices (migrator.py): the API server compares the bytes it would store with
    etcd's, and an object stored at the old version differs by its apiVersion, so even an empty merge
    patch stores it anew; once current, the same write is skipped (no new resourceVersion)."""
    await create_widgets(api, group, ns, count=2)
    await flip_storage(api, crd, "v2", local_cluster)
    first = await api.patch(widgets(group, "v2"), "w000", {}, namespace=ns)
    again = await api.patch(widgets(group, "v2"), "w000", {}, namespace=ns)
    assert again["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    # w000 patched, w001 untouched.
    assert [o["apiVersion"] for o in await asyncio.to_thread(etcd_widgets, local_cluster, group, ns)] == [
        f"{group}/v2",
        f"{group}/v1",
    ]
