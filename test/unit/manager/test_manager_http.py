"""Probe and metrics endpoints, bind-address parsing, and controller-name uniqueness."""

from __future__ import annotations

import aiohttp
import pytest
from dynamo_operator.internal.manager import http


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        pytest.param(":8080", ("0.0.0.0", 8080), id="all-interfaces"),
        pytest.param("127.0.0.1:0", ("127.0.0.1", 0), id="loopback-any-port"),
        pytest.param("[::1]:9090", ("::1", 9090), id="ipv6"),
        pytest.param("0", None, id="disabled"),
        pytest.param("", None, id="empty-disabled"),
    ],
)
def test_parse_bind_address(address: str, parsed: tuple[str, int] | None) -> None:
    """Go-style bind addresses; "0" turns a server off."""
    assert http.parse_bind_address(address) == parsed


def test_parse_bind_address_rejects_garbage() -> None:
    """A port must be numeric."""
    with pytest.raises(ValueError):
        http.parse_bind_address("localhost:http")


async def test_probes_report_each_check() -> None:
    """/healthz ok; /readyz 500 listing the failing check until it passes."""
    ready = {"value": False}
    server = http.Server(
        http.probes_app(healthz={"ping": lambda: True}, readyz={"informers-synced": lambda: ready["value"]}),
        host="127.0.0.1",
        port=0,
    )
    await server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{base}/healthz") as resp:
                assert (resp.status, await resp.text()) == (200, "ok")
            async with session.get(f"{base}/readyz") as resp:
                assert resp.status == 500
                assert "[-]informers-synced failed" in await resp.text()
            ready["value"] = True
            async with session.get(f"{base}/readyz?verbose") as resp:
                assert resp.status == 200
                assert "[+]informers-synced ok" in await resp.text()
    finally:
        await server.stop()


async def test_metrics_endpoint_serves_registry_text() -> None:
    """/metrics is Prometheus text including process metrics and the collector's pauses."""
    http.register_process_collectors()
    http.register_process_collectors()  # idempotent
    server = http.Server(http.metrics_app(), host="127.0.0.1", port=0)
    await server.start()
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{server.port}/metrics") as resp,
        ):
            assert resp.status == 200
            body = await resp.text()
        assert "process_resident_memory_bytes" in body or "python_info" in body
        assert "python_gc_pause_seconds_total" in body
    finally:
        await server.stop()
