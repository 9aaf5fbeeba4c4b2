"""A generic controller (ConfigMap mirror) on the real API server: events arrive, state converges,
readiness follows informer sync, and /metrics carries controller-runtime's and client-go's names."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CONFIG_MAP, CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.controller import Result
from dynamo_operator.internal.manager import Manager, ManagerOptions
from testsupport.api import eventually
from testsupport.mirror_operator import CONTROLLER_NAME, RECONCILED_BY, mirror_name, register_mirror

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]


@asynccontextmanager
async def running(mgr: Manager) -> AsyncIterator[asyncio.Task[None]]:
    """Run `mgr` in the background; stop it gracefully (bounded) on exit."""
    task = asyncio.create_task(mgr.run())
    try:
        yield task
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 30)


def source(ns: str, name: str, data: dict[str, str], *, labelled: bool = True) -> dict[str, Any]:
    labels = {"mirror": "true"} if labelled else {}
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}, "data": data}


async def get_or_none(api: Client, ns: str, name: str) -> dict[str, Any] | None:
    try:
        return await api.get(CONFIG_MAP, name, namespace=ns)
    except NotFound:
        return None


def loopback_options(ns: str) -> ManagerOptions:
    return ManagerOptions(
        namespace=ns, metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0"
    )


async def test_mirror_follows_creates_updates_and_deletes(api: Client, ns: str) -> None:
    """Create → mirror appears; update → mirror follows; unlabelled → ignored; delete → mirror gone."""
    mgr = Manager(api, options=loopback_options(ns))
    register_mirror(mgr, identity="in-process")
    async with running(mgr):
        await eventually(lambda: mgr.ready, timeout=30)
        await api.create(CONFIG_MAP, source(ns, "x", {"k": "v1"}))
        await api.create(CONFIG_MAP, source(ns, "plain", {"k": "v"}, labelled=False))
        mirror = await eventually(lambda: get_or_none(api, ns, mirror_name("x")), timeout=30)
        assert mirror["data"] == {"k": "v1"}
        assert mirror["metadata"]["annotations"][RECONCILED_BY] == "in-process"
        [ref] = mirror["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref["controller"]) == ("ConfigMap", "x", True)

        await api.patch(CONFIG_MAP, "x", {"data": {"k": "v2", "extra": "e"}}, namespace=ns)
        await eventually(
            lambda: get_or_none(api, ns, mirror_name("x")),
            until=lambda m: m is not None and m["data"] == {"k": "v2", "extra": "e"},
            timeout=30,
        )

        # Someone edits the mirror by hand: the Owns watch maps it back to x, which restores it.
        await api.patch(CONFIG_MAP, mirror_name("x"), {"data": {"k": "tampered"}}, namespace=ns)
        await eventually(
            lambda: get_or_none(api, ns, mirror_name("x")),
            until=lambda m: m is not None and m["data"] == {"k": "v2", "extra": "e"},
            timeout=30,
        )

        await api.delete(CONFIG_MAP, "x", namespace=ns)
        await eventually(
            lambda: get_or_none(api, ns, mirror_name("x")), until=lambda m: m is None, timeout=30
        )
        assert await get_or_none(api, ns, mirror_name("plain")) is None

        events = await api.list(Resource("", "v1", "events", "Event"), namespace=ns)
        mirrored = [e for e in events if e.get("reason") == "Mirrored"]
        assert mirrored and mirrored[0]["source"]["component"] == CONTROLLER_NAME


async def test_many_sources_converge_with_concurrent_workers(api: Client, ns: str) -> None:
    """30 sources created in a burst all get their mirror (2 workers, one queue)."""
    mgr = Manager(api, options=loopback_options(ns))
    register_mirror(mgr, identity="burst")
    async with running(mgr):
        await eventually(lambda: mgr.ready, timeout=30)
        await asyncio.gather(*(api.create(CONFIG_MAP, source(ns, f"s{i}", {"i": str(i)})) for i in range(30)))

        async def mirrors() -> int:
            listed = await api.list(CONFIG_MAP, namespace=ns)
            return sum(1 for c in listed if c["metadata"]["name"].endswith("-mirror"))

        await eventually(mirrors, until=lambda n: n == 30, timeout=60)


def probe_crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"probes.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Probe", "listKind": "ProbeList", "plural": "probes", "singular": "probe"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


class NoopReconciler:
    async def reconcile(self, key: str) -> Result:
        return Result()


async def http_get(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with session.get(url) as resp:
        return resp.status, await resp.text()


async def test_readyz_false_until_informers_sync_and_metrics_carry_runtime_names(
    api: Client, ns: str
) -> None:
    """A watched kind that is not served yet keeps /readyz 500 (healthz 200); once its CRD exists
    the informer lists, /readyz turns 200, and /metrics shows controller-runtime + workqueue series."""
    group = f"rt{uuid.uuid4().hex[:8]}.test.dynamo"
    probes = Resource(group, "v1", "probes", "Probe")
    mgr = Manager(api, options=loopback_options(ns))
    mgr.builder("probe-controller").for_(probes).complete(NoopReconciler())
    try:
        async with running(mgr), aiohttp.ClientSession() as session:
            await eventually(lambda: mgr.health_probe_port is not None and mgr.metrics_port is not None)
            health = f"http://127.0.0.1:{mgr.health_probe_port}"
            for _ in range(3):  # not served: stays unready however often we ask
                assert (await http_get(session, f"{health}/readyz"))[0] == 500
                assert (await http_get(session, f"{health}/healthz")) == (200, "ok")
                await asyncio.sleep(0.5)

            await api.create(CUSTOM_RESOURCE_DEFINITION, probe_crd(group))
            await eventually(
                lambda: http_get(session, f"{health}/readyz"), until=lambda r: r == (200, "ok"), timeout=60
            )
            assert mgr.leading

            status, body = await http_get(session, f"http://127.0.0.1:{mgr.metrics_port}/metrics")
            assert status == 200
            for name in (
                'controller_runtime_reconcile_total{controller="probe-controller",result="success"}',
                'controller_runtime_reconcile_total{controller="probe-controller",result="error"}',
                "controller_runtime_reconcile_errors_total",
                "controller_runtime_reconcile_time_seconds_bucket",
                'controller_runtime_active_workers{controller="probe-controller"}',
                'controller_runtime_max_concurrent_reconciles{controller="probe-controller"} 1.0',
                'workqueue_depth{controller="probe-controller",name="probe-controller"}',
                "workqueue_adds_total",
                "workqueue_queue_duration_seconds_bucket",
                "workqueue_work_duration_seconds_bucket",
                "workqueue_unfinished_work_seconds",
                "workqueue_longest_running_processor_seconds",
                "workqueue_retries_total",
                "process_resident_memory_bytes",
            ):
                assert name in body, name
    finally:
        await api.delete(CUSTOM_RESOURCE_DEFINITION, f"probes.{group}")
