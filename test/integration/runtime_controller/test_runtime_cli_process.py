"""The real `dynamo-operator` console script against the real API server, on each event loop it
offers: it becomes ready, leads, serves metrics, reconciles a graph to Ready, and on SIGTERM releases
its Lease and exits 0 (loopback only, bounded)."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from dynamo_operator.eventloop import EVENT_LOOPS
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import LEASE
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.objects import condition
from testsupport.operator import install_crds
from testsupport.process import start_operator

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def fetch(session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    try:
        async with session.get(url) as resp:
            return resp.status, await resp.text()
    except aiohttp.ClientError:
        return 0, ""


@pytest.mark.parametrize("event_loop", EVENT_LOOPS)
async def test_cli_runs_leads_reconciles_and_stops_cleanly_on_sigterm(
    cluster: Any, api: Client, ns: str, tmp_path: Path, event_loop: str
) -> None:
    """Ready after sync, leader gauge 1, a graph reconciled to Ready, SIGTERM → Lease released and
    exit code 0; the same on uvloop (the default) and on the standard library's loop."""
    await install_crds(api)
    metrics, probes = free_port(), free_port()
    log = tmp_path / "operator.log"
    proc = start_operator(
        "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns,
        "--metrics-secure=false", "--metrics-bind-address", f"127.0.0.1:{metrics}",
        "--health-probe-bind-address", f"127.0.0.1:{probes}",
        "--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", "cli-test",
        "--log-format", "json", "--event-loop", event_loop,
        log=log,
    )  # fmt: skip
    try:
        async with aiohttp.ClientSession() as session:
            await eventually(
                lambda: fetch(session, f"http://127.0.0.1:{probes}/readyz"),
                until=lambda r: r == (200, "ok") or proc.poll() is not None,
                timeout=90,
                interval=0.2,
            )
            assert proc.poll() is None, log.read_text()[-3000:]
            _, body = await eventually(
                lambda: fetch(session, f"http://127.0.0.1:{metrics}/metrics"),
                until=lambda r: 'leader_election_master_status{name="cli-test"} 1.0' in r[1],
                timeout=30,
                interval=0.2,
            )
            assert "controller_runtime_max_concurrent_reconciles" in body
            lease = await api.get(LEASE, "cli-test", namespace=ns)
            assert lease["spec"]["holderIdentity"].count("_") >= 1
            await api.create(kinds.DGD, two_service_graph("g", ns))
            await eventually(
                lambda: api.get(kinds.DGD, "g", namespace=ns),
                until=lambda d: condition(d, "Ready").get("status") == "True" or proc.poll() is not None,
                timeout=90,
            )
            assert proc.poll() is None, log.read_text()[-3000:]

        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 45)
        assert code == 0, log.read_text()[-3000:]
        lease = await api.get(LEASE, "cli-test", namespace=ns)
        assert lease["spec"].get("holderIdentity", "") == ""
        assert lease["spec"]["leaseDurationSeconds"] == 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
