"""The LoRA HTTP client against a real aiohttp server on 127.0.0.1: order, 2xx/non-2xx, escaping,
and the bounds (in-flight limit, per-request and per-batch timeouts)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from dynamo_operator.internal.lora.client import Limits, LoraClient

pytestmark = pytest.mark.asyncio(loop_scope="session")


class Server:
    """Answers by path: /slow/... sleeps, /fail/... answers 500, anything else 200; counts concurrency."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.delay = 0.0

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        self.seen.append((request.method, request.raw_path, body))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if request.path.startswith("/slow"):
                await asyncio.sleep(2)
            elif self.delay:
                await asyncio.sleep(self.delay)
            if request.path.startswith("/fail"):
                return web.Response(status=500, text="engine not ready")
            return web.json_response({}, status=201 if request.method == "POST" else 200)
        finally:
            self.in_flight -= 1


@pytest_asyncio.fixture(loop_scope="session")
async def server() -> AsyncIterator[tuple[Server, str]]:
    srv = Server()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", srv.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield srv, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_load_posts_body_and_reports_in_input_order(server: tuple[Server, str]) -> None:
    srv, base = server
    client = LoraClient()
    try:
        results = await client.load(
            [base, f"{base}/fail", f"{base}/"], lora_name="org/l", source_uri="s3://b/l"
        )
    finally:
        await client.close()
    assert [r.ok for r in results] == [True, False, True]
    assert "HTTP 500: engine not ready" in results[1].error
    # Sent concurrently, so the server may see them in any order; results keep the input order.
    assert sorted((m, p) for m, p, _ in srv.seen) == [
        ("POST", "/fail/v1/loras"),
        ("POST", "/v1/loras"),
        ("POST", "/v1/loras"),
    ]
    assert all(b == {"lora_name": "org/l", "source": {"uri": "s3://b/l"}} for _, _, b in srv.seen)


async def test_unload_escapes_name(server: tuple[Server, str]) -> None:
    srv, base = server
    client = LoraClient()
    try:
        [result] = await client.unload([base], lora_name="org/l")
    finally:
        await client.close()
    assert result.ok
    assert srv.seen == [("DELETE", "/v1/loras/org%2Fl", None)]


async def test_unreachable_endpoint_fails_fast() -> None:
    client = LoraClient()
    try:
        # Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
        [result] = await client.load(["http://127.0.0.1:9"], lora_name="l", source_uri="s3://x")
    finally:
        await client.close()
    assert not result.ok and "ClientConnectorError" in result.error


async def test_in_flight_requests_are_bounded(server: tuple[Server, str]) -> None:
    srv, base = server
    srv.delay = 0.05
    client = LoraClient(limits=Limits(max_in_flight=3))
    try:
        results = await client.load([base] * 12, lora_name="l", source_uri="s3://x")
    finally:
        await client.close()
    assert all(r.ok for r in results) and len(srv.seen) == 12
    assert srv.max_in_flight == 3


async def test_request_and_batch_timeouts_bound_a_hung_endpoint(server: tuple[Server, str]) -> None:
    _, base = server
    client = LoraClient(limits=Limits(request_timeout=0.2, batch_timeout=5.0))
    try:
        slow, fast = await client.load([f"{base}/slow", base], lora_name="l", source_uri="s3://x")
    finally:
        await client.close()
    assert (slow.ok, fast.ok) == (False, True)
    assert "timed out" in slow.error
    client = LoraClient(limits=Limits(request_timeout=10.0, batch_timeout=0.3))
    try:
        [late] = await client.unload([f"{base}/slow"], lora_name="l")
    finally:
        await client.close()
    assert not late.ok and "no answer within 0.3s" in late.error
