"""The webhook's HTTPS server on loopback: a self-signed pair, a test converter, aiohttp as the client."""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import AsyncIterator, Mapping

import aiohttp
import orjson
import pytest_asyncio
from dynamo_operator.internal.manager import tls
from dynamo_operator.internal.webhook import review
from dynamo_operator.internal.webhook.server import WebhookServer


def rename(obj: Mapping[str, object], to: str) -> dict[str, object]:
    return {**obj, "apiVersion": to}


def review_body(objects: list[dict[str, object]], uid: str = "u") -> bytes:
    return orjson.dumps(
        {
            "apiVersion": review.API_VERSION,
            "kind": review.KIND,
            "request": {"uid": uid, "desiredAPIVersion": "example.com/v2", "objects": objects},
        }
    )


def client_context(pair: tls.PemPair) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=pair.cert.decode())
    return context


@pytest_asyncio.fixture
async def pair() -> tls.PemPair:
    return tls.self_signed_pair("localhost")


async def started(pair: tls.PemPair, convert: review.Converter = rename, **kw: object) -> WebhookServer:
    context = tls.server_context()
    tls.load_pair(context, pair)
    server = WebhookServer(convert, host="127.0.0.1", port=0, ssl_context=context, **kw)  # type: ignore[arg-type]
    await server.start()
    return server


@pytest_asyncio.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


async def test_a_review_is_answered_over_https(pair: tls.PemPair, session: aiohttp.ClientSession) -> None:
    server = await started(pair)
    try:
        url = f"https://localhost:{server.port}/convert"
        obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"}}
        async with session.post(url, data=review_body([obj], "x1"), ssl=client_context(pair)) as resp:
            assert resp.status == 200
            out = await resp.json()
        assert out["response"]["uid"] == "x1"
        assert out["response"]["convertedObjects"][0]["apiVersion"] == "example.com/v2"
        assert server.serving
    finally:
        await server.stop()
    assert not server.serving


async def test_a_body_over_the_limit_is_refused_with_413(
    pair: tls.PemPair, session: aiohttp.ClientSession
) -> None:
    server = await started(pair, max_body_bytes=1024)
    try:
        big = [{"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a" * 2000}}]
        url = f"https://localhost:{server.port}/convert"
        async with session.post(url, data=review_body(big), ssl=client_context(pair)) as resp:
            assert resp.status == 413
        assert server.reviews == 0
    finally:
        await server.stop()


async def test_a_wrong_review_version_is_answered_400(
    pair: tls.PemPair, session: aiohttp.ClientSession
) -> None:
    server = await started(pair)
    try:
        bad = orjson.dumps({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview"})
        url = f"https://localhost:{server.port}/convert"
        async with session.post(url, data=bad, ssl=client_context(pair)) as resp:
            assert resp.status == 400
            assert "v1beta1" in await resp.text()
    finally:
        await server.stop()


async def test_a_conversion_past_the_timeout_is_answered_with_a_failure(
    pair: tls.PemPair, session: aiohttp.ClientSession
) -> None:
    release = threading.Event()

    def stuck(obj: Mapping[str, object], to: str) -> dict[str, object]:
        release.wait(10)
        return rename(obj, to)

    server = await started(pair, stuck, timeout=0.2)
    try:
        url = f"https://localhost:{server.port}/convert"
        obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"}}
        async with session.post(url, data=review_body([obj], "t"), ssl=client_context(pair)) as resp:
            out = await resp.json()
        assert out["response"]["uid"] == "t"
        assert out["response"]["result"]["status"] == "Failure"
        assert "longer than" in out["response"]["result"]["message"]
    finally:
        release.set()
        await server.stop()


async def test_two_servers_can_share_one_port(pair: tls.PemPair, session: aiohttp.ClientSession) -> None:
    """SO_REUSEPORT: replicas on one host listen on one address; either one answering is fine."""
    first = await started(pair)
    assert first.port is not None
    context = tls.server_context()
    tls.load_pair(context, pair)
    second = WebhookServer(rename, host="127.0.0.1", port=first.port, ssl_context=context)
    await second.start()
    try:
        await first.stop()
        url = f"https://localhost:{second.port}/convert"
        obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"}}
        for _ in range(5):
            async with session.post(url, data=review_body([obj]), ssl=client_context(pair)) as resp:
                assert resp.status == 200
        assert second.reviews == 5
    finally:
        await second.stop()
        await asyncio.sleep(0)


async def test_a_request_reaching_a_stopping_server_is_refused_and_its_connection_closed(
    pair: tls.PemPair, session: aiohttp.ClientSession
) -> None:
    """stop() marks the server not serving before it closes connections; a kept-alive connection that
    slips past the close (its TLS handshake ended just after) must not go on converting."""
    server = await started(pair)
    try:
        server.serving = False  # what stop() does first
        url = f"https://localhost:{server.port}/convert"
        obj = {"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "a"}}
        async with session.post(url, data=review_body([obj]), ssl=client_context(pair)) as resp:
            assert resp.status == 503
            assert resp.headers.get("Connection", "").lower() == "close"
        assert server.reviews == 0
    finally:
        await server.stop()
