"""DynamoModels against the real API server and real HTTP servers: kwok gives the serving pods
loopback IPs, and the test listens on each pod IP's port 9090 the way the engine's system server would."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import web
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT, POD, SERVICE
from dynamo_operator.internal.dynamo.common import naming
from integration.controllers_requests.requests_testlib import apply, condition, get_or_none, graph
from testsupport.api import eventually
from testsupport.operator import RunningOperator, wait_quiet

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

TIMEOUT = 120.0
PORT = 9090


@dataclass
class LoraServer:
    """Records every request; answers `post_status` to POST /v1/loras and 200 to DELETE."""

    ip: str
    post_status: int = 200
    requests: list[tuple[str, str, Any]] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self.requests.append((request.method, request.path_qs, body))
        if request.method == "POST":
            return web.json_response({"ok": self.post_status < 300}, status=self.post_status)
        return web.json_response({"ok": True})


@contextlib.asynccontextmanager
async def lora_servers(
    ips: Iterable[str], *, failing: Iterable[str] = ()
) -> AsyncIterator[dict[str, LoraServer]]:
    """One HTTP server per pod IP on port 9090 (the pod's `system` port)."""
    failing = set(failing)
    servers = {ip: LoraServer(ip, 500 if ip in failing else 200) for ip in ips}
    runners = []
    try:
        for ip, server in servers.items():
            app = web.Application()
            app.router.add_route("*", "/{tail:.*}", server.handle)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            runners.append(runner)
            await web.TCPSite(runner, ip, PORT).start()
        yield servers
    finally:
        for runner in runners:
            await runner.cleanup()


async def serving_ips(api: Client, namespace: str, base_model: str, count: int) -> list[str]:
    """The IPs of the Ready pods selected by the base model's headless Service, once there are `count`.

    Read off the pods: the API server refuses loopback addresses in EndpointSlices ("may not be in the
    loopback range"), so here the Service's slices stay empty and the operator falls back to the pods.
    """
    selector = f"{consts.LABEL_BASE_MODEL_HASH}={naming.base_model_hash(base_model)}"

    async def ips() -> list[str]:
        pods = await api.list(POD, namespace=namespace, label_selector=selector)
        return sorted(
            p["status"]["podIP"]
            for p in pods
            if p.get("status", {}).get("podIP")
            and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
        )

    found = await eventually(ips, until=lambda xs: len(xs) == count, timeout=TIMEOUT)
    assert all(ip.startswith("127.") for ip in found), found
    await eventually(lambda: api.get(SERVICE, naming.model_service_name(base_model), namespace=namespace))
    return found


def model(name: str, namespace: str, base: str, model_type: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoModel",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"modelName": name, "baseModelName": base, "modelType": model_type, **spec},
    }


async def event_reasons(api: Client, namespace: str, name: str) -> list[str]:
    events = await api.list(EVENT, namespace=namespace, field_selector=f"involvedObject.name={name}")
    return [e.get("reason", "") for e in events]


async def test_lora_loaded_on_every_endpoint_and_unloaded_on_delete(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """POST /v1/loras reaches every serving pod; the one answering 500 stays not ready, the others are
    ready; deleting the model DELETEs the adapter everywhere, then the object goes."""
    base = "org/base-lora-test"
    await apply(api, graph("lg", ns, adapter=False, model=base, workers=3))
    ips = await serving_ips(api, ns, base, 3)
    failing = ips[1]
    async with lora_servers(ips, failing=[failing]) as servers:
        await apply(api, model("my-lora", ns, base, "lora", source={"uri": "s3://bucket/my-lora"}))
        dm = await eventually(
            lambda: api.get(kinds.DYNAMO_MODEL, "my-lora", namespace=ns),
            until=lambda m: (
                (m.get("status") or {}).get("totalEndpoints") == 3
                and (m.get("status") or {}).get("readyEndpoints") == 2
            ),
            timeout=TIMEOUT,
        )
        assert "nvidia.com/finalizer" in dm["metadata"]["finalizers"]
        by_address = {e["address"]: e for e in dm["status"]["endpoints"]}
        assert set(by_address) == {f"http://{ip}:9090" for ip in ips}
        assert {a: e["ready"] for a, e in by_address.items()} == {
            f"http://{ip}:9090": ip != failing for ip in ips
        }
        assert all(e["podName"].startswith("lg-worker-") for e in by_address.values())
        assert (condition(dm, "EndpointsReady")["status"], condition(dm, "EndpointsReady")["reason"]) == (
            "False",
            "NotReady",
        )
        assert (condition(dm, "ServicesFound")["status"], condition(dm, "ServicesFound")["reason"]) == (
            "True",
            "ServicesFound",
        )
        for server in servers.values():
            posts = [r for r in server.requests if r[0] == "POST"]
            assert posts, server.ip
            assert all(
                r[1:] == ("/v1/loras", {"lora_name": "my-lora", "source": {"uri": "s3://bucket/my-lora"}})
                for r in posts
            )
        reasons = await eventually(
            lambda: event_reasons(api, ns, "my-lora"),
            until=lambda rs: {"PartialEndpointFailure", "NotReady"} <= set(rs),
        )
        assert "EndpointsReady" not in reasons

        await api.delete(kinds.DYNAMO_MODEL, "my-lora", namespace=ns)
        await eventually(
            lambda: get_or_none(api, kinds.DYNAMO_MODEL, "my-lora", ns),
            until=lambda m: m is None,
            timeout=TIMEOUT,
        )
        for server in servers.values():
            deletes = [r for r in server.requests if r[0] == "DELETE"]
            assert [r[1] for r in deletes][:1] == ["/v1/loras/my-lora"], server.ip


async def test_base_model_lists_endpoints_without_http(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A base model reports its endpoints (never ready: nothing is probed) and sends no request."""
    base = "org/base-only-test"
    await apply(api, graph("bg", ns, adapter=False, model=base, workers=2))
    ips = await serving_ips(api, ns, base, 2)
    async with lora_servers(ips) as servers:
        await apply(api, model("base-model", ns, base, "base"))
        dm = await eventually(
            lambda: api.get(kinds.DYNAMO_MODEL, "base-model", namespace=ns),
            until=lambda m: (m.get("status") or {}).get("totalEndpoints") == 2,
            timeout=TIMEOUT,
        )
        assert dm["status"]["readyEndpoints"] == 0
        assert sorted(e["address"] for e in dm["status"]["endpoints"]) == [f"http://{ip}:9090" for ip in ips]
        assert not any(e["ready"] for e in dm["status"]["endpoints"])
        assert (condition(dm, "EndpointsReady")["status"], condition(dm, "EndpointsReady")["reason"]) == (
            "True",
            "EndpointsDiscovered",
        )
        assert "finalizers" not in dm["metadata"]
        await wait_quiet(settle=2.0, timeout=30.0)
        await api.delete(kinds.DYNAMO_MODEL, "base-model", namespace=ns)
        await eventually(
            lambda: get_or_none(api, kinds.DYNAMO_MODEL, "base-model", ns), until=lambda m: m is None
        )
        assert {ip: s.requests for ip, s in servers.items()} == {ip: [] for ip in ips}


async def test_model_without_serving_pods_reports_no_endpoints(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """No Service/EndpointSlice for the base model: ServicesFound and EndpointsReady are False."""
    await apply(api, model("lonely", ns, "org/nobody-serves-this", "lora", source={"uri": "hf://org/l@main"}))
    dm = await eventually(
        lambda: api.get(kinds.DYNAMO_MODEL, "lonely", namespace=ns),
        until=lambda m: bool(condition(m, "EndpointsReady")),
        timeout=TIMEOUT,
    )
    assert (dm["status"]["totalEndpoints"], dm["status"]["readyEndpoints"]) == (0, 0)
    assert condition(dm, "ServicesFound")["reason"] == "NoServicesFound"
    assert condition(dm, "EndpointsReady")["reason"] == "NoEndpoints"
    await api.delete(kinds.DYNAMO_MODEL, "lonely", namespace=ns)
    await eventually(lambda: get_or_none(api, kinds.DYNAMO_MODEL, "lonely", ns), until=lambda m: m is None)


async def test_unreachable_endpoint_delays_but_never_blocks_deletion(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """One pod has nothing listening on 9090: the adapter loads on the other only; on deletion the
    unload is retried and, once the grace period after the delete request is over, the finalizer is
    dropped anyway (Warning LoRAUnloadFailed), so the object goes."""
    base = "org/base-unreachable-test"
    await apply(api, graph("ug", ns, adapter=False, model=base, workers=2))
    up, down = await serving_ips(api, ns, base, 2)
    async with lora_servers([up]) as servers:
        await apply(api, model("half", ns, base, "lora", source={"uri": "hf://org/half@main"}))
        dm = await eventually(
            lambda: api.get(kinds.DYNAMO_MODEL, "half", namespace=ns),
            until=lambda m: (m.get("status") or {}).get("totalEndpoints") == 2,
            timeout=TIMEOUT,
        )
        assert {e["address"]: e["ready"] for e in dm["status"]["endpoints"]} == {
            f"http://{up}:9090": True,
            f"http://{down}:9090": False,
        }
        await api.delete(kinds.DYNAMO_MODEL, "half", namespace=ns)
        await eventually(
            lambda: event_reasons(api, ns, "half"), until=lambda rs: "LoRAUnloadFailed" in rs, timeout=TIMEOUT
        )
        assert await get_or_none(api, kinds.DYNAMO_MODEL, "half", ns) is not None  # held while retrying
        await eventually(
            lambda: get_or_none(api, kinds.DYNAMO_MODEL, "half", ns),
            until=lambda m: m is None,
            timeout=TIMEOUT,
        )
        deletes = [r[1] for r in servers[up].requests if r[0] == "DELETE"]
        assert deletes and set(deletes) == {"/v1/loras/half"}
