"""Every metric name the Grafana dashboard and the alert rules of config/prometheus read is served on the
real `dynamo-operator`'s /metrics: the console script runs against the local control plane with one
graph to reconcile, and its endpoint is scraped over loopback HTTP as Prometheus would."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from prometheus_client.parser import text_string_to_metric_families
from testsupport.dashboards import used_metric_names
from testsupport.graphs import two_service_graph
from testsupport.operator import RunningOperator
from testsupport.process import start_operator

pytestmark = [pytest.mark.cluster]

SCRAPES = 240  # at most, half a second apart: the resource counter's first count comes at start-up


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def served(text: str) -> set[str]:
    """Sample names with at least one sample in an exposition: a declared family without children
    (HELP and TYPE lines only) would draw an empty panel, so it does not count as served."""
    return {s.name for family in text_string_to_metric_families(text) for s in family.samples}


async def scrape(session: aiohttp.ClientSession, url: str) -> str:
    try:
        async with session.get(url) as resp:
            return await resp.text() if resp.status == 200 else ""
    except aiohttp.ClientError:
        return ""


async def test_every_metric_the_dashboard_and_alerts_read_is_served(
    cluster: Any, api: Client, operator: RunningOperator, ns: str, tmp_path: Path
) -> None:
    """One graph exists before the operator starts (so the first resource count has a series); the
    operator leads, reconciles it, and within a bounded number of scrapes serves a sample of every
    metric name that a dashboard panel, a dashboard variable or an alert expression uses.

    The session operator (`operator`) is asked for its conversion webhook, which the CRDs name: the
    process under test serves none of its own (it would point the CRDs at a Service no host process
    backs). It reconciles the graph too; what is checked here is only this process's /metrics."""
    await api.create(kinds.DGD, two_service_graph("g", ns))
    wanted = used_metric_names()
    metrics, probes = free_port(), free_port()
    log = tmp_path / "operator.log"
    args = [
        "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns,
        "--metrics-secure=false", "--metrics-bind-address", f"127.0.0.1:{metrics}",
        "--health-probe-bind-address", f"127.0.0.1:{probes}",
        # The session's conversion webhook serves the CRDs; this process must not re-point them.
        "--webhook-bind-address", "0",
        "--leader-elect", "--leader-election-namespace", ns, "--leader-election-id", "dashboard-test",
    ]  # fmt: skip
    proc = start_operator(*args, log=log)
    try:
        missing = set(wanted)
        async with aiohttp.ClientSession() as session:
            for _ in range(SCRAPES):
                if proc.poll() is not None:
                    break
                missing = set(wanted) - served(await scrape(session, f"http://127.0.0.1:{metrics}/metrics"))
                if not missing:
                    break
                await asyncio.sleep(0.5)
        assert proc.poll() is None, log.read_text()[-3000:]
        assert not missing, {name: sorted(wanted[name]) for name in sorted(missing)}
    finally:
        proc.terminate()
        try:
            await asyncio.to_thread(proc.wait, 45)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
