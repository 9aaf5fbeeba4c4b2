"""Two operator replicas (processes: a manager with leader election and the operator's webhook wiring,
test/testsupport/webhook.py) share one loopback webhook address, as two pods behind the webhook
Service would. The leader is killed while a reader converts without pause: conversions never fail,
because the standby was serving them all along."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from testsupport.api import eventually
from testsupport.webhook import Tally, conversions, convert_once, widget_crd, widget_resource

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

REPLICA = Path(__file__).resolve().parents[2] / "testsupport" / "webhook.py"
LEASE = "webhook-replicas"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Replica:
    proc: subprocess.Popen[bytes]
    log: Path
    metrics_port: int
    probe_port: int

    async def get(self, session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
        try:
            async with session.get(url) as resp:
                return resp.status, await resp.text()
        except aiohttp.ClientError:
            return 0, ""

    async def leading(self, session: aiohttp.ClientSession) -> bool:
        _, text = await self.get(session, f"http://127.0.0.1:{self.metrics_port}/metrics")
        return f'leader_election_master_status{{name="{LEASE}"}} 1.0' in text

    async def readyz(self, session: aiohttp.ClientSession) -> tuple[int, str]:
        return await self.get(session, f"http://127.0.0.1:{self.probe_port}/readyz?verbose")


@pytest.fixture
def launch(cluster: Any, ns: str, tmp_path: Path) -> Iterator[Any]:
    started: list[Replica] = []

    def start(tag: str, crd: str, port: int) -> Replica:
        metrics_port, probe_port = free_port(), free_port()
        log = tmp_path / f"{tag}.log"
        argv = [
            sys.executable, str(REPLICA), "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns,
            "--crd", crd, "--port", str(port), "--metrics-port", str(metrics_port),
            "--probe-port", str(probe_port), "--lease-name", LEASE,
        ]  # fmt: skip
        env = {**os.environ, "PYTHONSAFEPATH": "1"}
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        replica = Replica(proc, log, metrics_port, probe_port)
        started.append(replica)
        return replica

    yield start
    for replica in started:
        if replica.proc.poll() is None:
            replica.proc.kill()
        replica.proc.wait(timeout=10)


@pytest.fixture
async def crd(api: Client) -> AsyncIterator[tuple[str, str, int]]:
    group = f"w{secrets.token_hex(4)}.webhook.dynamo.test"
    port = free_port()
    doc = widget_crd(group, f"https://127.0.0.1:{port}/convert")
    await api.apply(CUSTOM_RESOURCE_DEFINITION, doc, field_manager="integration-test", force=True)
    try:
        yield doc["metadata"]["name"], group, port
    finally:
        with contextlib.suppress(NotFound):
            await api.delete(CUSTOM_RESOURCE_DEFINITION, doc["metadata"]["name"])


@pytest.mark.parametrize("kill", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
async def test_conversions_never_fail_while_the_leader_is_killed(
    api: Client, ns: str, launch: Any, crd: tuple[str, str, int], kill: signal.Signals
) -> None:
    name, group, port = crd
    async with aiohttp.ClientSession() as session:
        a, b = launch("a", name, port), launch("b", name, port)
        for replica in (a, b):
            _, text = await eventually(
                lambda r=replica: r.readyz(session), until=lambda st: st[0] == 200, timeout=60, interval=0.2
            )
            assert "[+]conversion-webhook ok" in text
        leaders = await eventually(
            lambda: asyncio.gather(a.leading(session), b.leading(session)),
            until=lambda ls: sum(ls) == 1,
            timeout=30,
            interval=0.2,
        )
        leader, standby = (a, b) if leaders[0] else (b, a)
        await api.create(
            widget_resource(group, "v1"),
            {"metadata": {"name": "a", "namespace": ns}, "spec": {"replicas": 1}},
        )

        async def converted() -> bool:
            tally = Tally()
            await convert_once(api, group, ns, "a", tally)
            return tally.ok == 1

        await eventually(converted, timeout=30, interval=0.2)

        stop = asyncio.Event()
        reader = asyncio.create_task(
            conversions(api, group, ns, "a", stop=stop, max_count=5_000, max_seconds=60)
        )
        await asyncio.sleep(2.0)  # conversions before the kill
        leader.proc.send_signal(kill)
        await asyncio.to_thread(leader.proc.wait, 30)
        await eventually(lambda: standby.leading(session), timeout=30, interval=0.2)
        await asyncio.sleep(2.0)  # and after it
        stop.set()
        tally = await reader
        print(f"{kill.name}: conversions {tally.ok}, failed {tally.failed}")
        assert tally.failed == 0, tally.errors
        assert tally.ok > 20
