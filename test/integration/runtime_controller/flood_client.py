"""A flood of made-up bearer tokens at a secure metrics endpoint on loopback, as a process of its own
(so the endpoint's process measures only its own memory): used by test_runtime_secure_metrics.py.

    python flood_client.py PORT --requests 3000 --connections 150 --time-cap 300 --seed 34

Every request carries a new random token. Odd-numbered requests hang up: the connection is aborted
right after the request is written, or a few milliseconds later (while its review is in flight).
The others wait for their answer. Prints one JSON line: the answers by status, the Retry-After values
seen on 503s, how many hung up and whether the time cap cut the flood short.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import ssl
import sys

import aiohttp


def unverified_tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the endpoint's certificate is self-signed; tokens are the point
    return context


async def hang_up(port: int, token: str, context: ssl.SSLContext, rng: random.Random) -> bool:
    """Write a request with `token`, then abort the connection; False when it could not connect."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    except OSError:
        return False
    try:
        request = f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
        writer.write(request.encode())
        await writer.drain()
        if rng.random() < 0.5:
            await asyncio.sleep(rng.uniform(0.0, 0.005))
    except OSError:
        pass
    finally:
        writer.transport.abort()  # no close_notify, no FIN handshake: the way a killed client goes
    return True


async def flood(port: int, requests: int, connections: int, time_cap: float, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    context = unverified_tls()
    url = f"https://127.0.0.1:{port}/metrics"
    statuses: dict[str, int] = {}
    retry_after: set[str] = set()
    hung_up = 0
    slots = asyncio.Semaphore(connections)

    async def one(i: int, session: aiohttp.ClientSession) -> None:
        nonlocal hung_up
        token = secrets.token_urlsafe(32)
        async with slots:
            if i % 2:
                # Not `hung_up += await ...`: that reads the count before the await and loses updates.
                connected = await hang_up(port, token, context, rng)
                hung_up += connected
                return
            try:
                async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as resp:
                    status = str(resp.status)
                    if resp.status == 503:
                        retry_after.add(resp.headers.get("Retry-After", "<none>"))
            except aiohttp.ClientError as err:
                status = type(err).__name__
            statuses[status] = statuses.get(status, 0) + 1

    capped = False
    connector = aiohttp.TCPConnector(ssl=context, limit=connections, force_close=True)
    async with aiohttp.ClientSession(connector=connector) as session:
        try:
            async with asyncio.timeout(time_cap):
                await asyncio.gather(*(one(i, session) for i in range(requests)))
        except TimeoutError:
            capped = True
    return {"statuses": statuses, "retry_after": sorted(retry_after), "hung_up": hung_up, "capped": capped}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--connections", type=int, default=150)
    parser.add_argument("--time-cap", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args()
    result = asyncio.run(flood(args.port, args.requests, args.connections, args.time_cap, args.seed))
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
