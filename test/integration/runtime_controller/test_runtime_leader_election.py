"""Two operator processes with leader election on the real API server (loopback only, bounded).

Each process is test/testsupport/mirror_operator.py with short election timings; the test reads
each one's leader gauge and reconcile counters from its /metrics, and the Lease from the API.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CONFIG_MAP, LEASE
from dynamo_operator.internal.leaderelection.record import parse_micro_time
from testsupport.api import eventually
from testsupport.mirror_operator import CONTROLLER_NAME, RECONCILED_BY, mirror_name

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

MIRROR_OPERATOR = Path(__file__).resolve().parents[2] / "testsupport" / "mirror_operator.py"
LEASE_DURATION = 8.0
RENEW_DEADLINE = 5.0
RETRY_PERIOD = 1.0
JITTER = 1.2
LEASE_NAME = "mirror-operator-leader"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class OperatorProcess:
    proc: subprocess.Popen[bytes]
    identity_file: Path
    log: Path
    metrics_port: int
    probe_port: int

    @property
    def identity(self) -> str:
        return self.identity_file.read_text() if self.identity_file.exists() else ""

    async def metrics(self, session: aiohttp.ClientSession) -> str:
        try:
            async with session.get(f"http://127.0.0.1:{self.metrics_port}/metrics") as resp:
                return await resp.text()
        except aiohttp.ClientError:
            return ""

    async def ready(self, session: aiohttp.ClientSession) -> bool:
        try:
            async with session.get(f"http://127.0.0.1:{self.probe_port}/readyz") as resp:
                return resp.status == 200
        except aiohttp.ClientError:
            return False

    async def leading(self, session: aiohttp.ClientSession) -> bool:
        return f'leader_election_master_status{{name="{LEASE_NAME}"}} 1.0' in await self.metrics(session)

    async def reconciles(self, session: aiohttp.ClientSession) -> float:
        """Sum of controller_runtime_reconcile_total over results for the mirror controller."""
        pattern = (
            rf'controller_runtime_reconcile_total\{{controller="{CONTROLLER_NAME}",result="[a-z_]+"\}} (\S+)'
        )
        return sum(float(v) for v in re.findall(pattern, await self.metrics(session)))


@pytest.fixture
def launch(cluster: Any, ns: str, tmp_path: Path) -> Iterator[Any]:
    """Start mirror_operator processes in `ns`; every one is killed at teardown."""
    started: list[OperatorProcess] = []

    def start(tag: str) -> OperatorProcess:
        metrics_port, probe_port = free_port(), free_port()
        log = tmp_path / f"{tag}.log"
        identity_file = tmp_path / f"{tag}.identity"
        argv = [
            sys.executable, str(MIRROR_OPERATOR),
            "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns,
            "--metrics-bind-address", f"127.0.0.1:{metrics_port}",
            "--health-probe-bind-address", f"127.0.0.1:{probe_port}",
            "--leader-elect", "--leader-election-id", LEASE_NAME,
            "--lease-duration", str(LEASE_DURATION), "--renew-deadline", str(RENEW_DEADLINE),
            "--retry-period", str(RETRY_PERIOD), "--identity-file", str(identity_file),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONSAFEPATH": "1"}
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        op = OperatorProcess(proc, identity_file, log, metrics_port, probe_port)
        started.append(op)
        return op

    yield start
    for op in started:
        if op.proc.poll() is None:
            op.proc.kill()
        op.proc.wait(timeout=10)


async def lease_holder(api: Client, ns: str) -> str | None:
    try:
        lease = await api.get(LEASE, LEASE_NAME, namespace=ns)
    except NotFound:
        return None
    return (lease.get("spec") or {}).get("holderIdentity") or ""


async def mirror_writer(api: Client, ns: str, name: str, data: dict[str, str]) -> str | None:
    """The identity that wrote `name`'s mirror, once the mirror carries `data`."""
    try:
        mirror = await api.get(CONFIG_MAP, mirror_name(name), namespace=ns)
    except NotFound:
        return None
    if mirror.get("data") != data:
        return None
    return str(mirror["metadata"]["annotations"][RECONCILED_BY])


async def two_ready_operators(
    launch: Any, session: aiohttp.ClientSession
) -> tuple[OperatorProcess, OperatorProcess]:
    """Start two candidates; return (leader, standby) once both are ready and exactly one leads."""
    a, b = launch("a"), launch("b")
    await eventually(lambda: a.ready(session), timeout=60, interval=0.2)
    await eventually(lambda: b.ready(session), timeout=60, interval=0.2)

    async def leaders() -> list[OperatorProcess]:
        return [op for op in (a, b) if await op.leading(session)]

    [leader] = await eventually(leaders, until=lambda ls: len(ls) == 1, timeout=30, interval=0.2)
    return leader, (b if leader is a else a)


async def test_exactly_one_reconciles_and_sigkill_fails_over(launch: Any, api: Client, ns: str) -> None:
    """Only the leader reconciles; after SIGKILL the standby leads within lease duration + retry."""
    async with aiohttp.ClientSession() as session:
        leader, standby = await two_ready_operators(launch, session)
        assert await lease_holder(api, ns) == leader.identity

        await api.create(
            CONFIG_MAP,
            {"metadata": {"name": "x", "namespace": ns, "labels": {"mirror": "true"}}, "data": {"v": "1"}},
        )
        writer = await eventually(lambda: mirror_writer(api, ns, "x", {"v": "1"}), timeout=30)
        assert writer == leader.identity
        assert await leader.reconciles(session) >= 1
        assert await standby.reconciles(session) == 0, "a standby must not reconcile"
        assert not await standby.leading(session)

        leader.proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        leader.proc.wait(timeout=10)
        await eventually(lambda: standby.leading(session), timeout=LEASE_DURATION + 15, interval=0.1)
        failover = time.monotonic() - killed_at
        print(f"SIGKILL failover: {failover:.2f}s")
        # Expiry counts from the standby's last *observation* of a change, which can come up to one
        # (jittered) retry after the kill (it saw the leader's last renewal late), and the takeover
        # happens at the first retry after expiry: lease duration + 2 jittered retries, + polling slack.
        assert failover <= LEASE_DURATION + 2 * RETRY_PERIOD * JITTER + 1.0, f"failover took {failover:.1f}s"
        assert await lease_holder(api, ns) == standby.identity
        lease = await api.get(LEASE, LEASE_NAME, namespace=ns)
        assert lease["spec"]["leaseTransitions"] >= 1

        await api.patch(CONFIG_MAP, "x", {"data": {"v": "2"}}, namespace=ns)
        writer = await eventually(lambda: mirror_writer(api, ns, "x", {"v": "2"}), timeout=30)
        assert writer == standby.identity


async def test_sigterm_hands_over_before_the_lease_could_expire(launch: Any, api: Client, ns: str) -> None:
    """SIGTERM: the leader releases the Lease and exits 0; the standby takes it at a retry, before
    the leader's last renewal could have expired (what a leader that did not release would cost).
    Judged on the Lease's own times, not on how fast a loaded machine lets the standby report it."""
    async with aiohttp.ClientSession() as session:
        leader, standby = await two_ready_operators(launch, session)
        last_renewal = (await api.get(LEASE, LEASE_NAME, namespace=ns))["spec"]["renewTime"]
        leader.proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(leader.proc.wait, 30)
        exited_at = time.monotonic()
        assert code == 0
        assert "Released leader lease" in leader.log.read_text()
        await eventually(lambda: standby.leading(session), timeout=LEASE_DURATION + 15, interval=0.05)
        print(f"SIGTERM handover: {time.monotonic() - exited_at:.2f}s (retry period {RETRY_PERIOD}s)")
        lease = (await api.get(LEASE, LEASE_NAME, namespace=ns))["spec"]
        assert lease["holderIdentity"] == standby.identity
        acquired, renewed = parse_micro_time(lease["acquireTime"]), parse_micro_time(last_renewal)
        assert acquired is not None and renewed is not None
        taken_after = (acquired - renewed).total_seconds()
        assert taken_after < LEASE_DURATION, f"taken {taken_after:.1f}s after the last renewal: by expiry"

        await api.create(
            CONFIG_MAP,
            {"metadata": {"name": "y", "namespace": ns, "labels": {"mirror": "true"}}, "data": {"v": "1"}},
        )
        writer = await eventually(lambda: mirror_writer(api, ns, "y", {"v": "1"}), timeout=30)
        assert writer == standby.identity


async def test_leader_that_loses_the_lease_exits_non_zero(launch: Any, api: Client, ns: str) -> None:
    """Another holder takes the Lease (as after a partition): the old leader cannot renew, and exits 1
    within the renew deadline instead of reconciling on as a second leader."""
    async with aiohttp.ClientSession() as session:
        leader = launch("solo")
        await eventually(lambda: leader.leading(session), timeout=60, interval=0.2)
        lease = await api.get(LEASE, LEASE_NAME, namespace=ns)
        lease["spec"].update(holderIdentity="intruder", leaseDurationSeconds=3600)
        await api.replace(LEASE, lease)
        taken_at = time.monotonic()
        code = await asyncio.to_thread(leader.proc.wait, RENEW_DEADLINE + LEASE_DURATION + 10)
        lost_after = time.monotonic() - taken_at
        print(f"lost lease → exit after {lost_after:.2f}s")
        assert code == 1
        assert lost_after <= RENEW_DEADLINE + RETRY_PERIOD * JITTER + 2.0
        assert "Leader election lost" in leader.log.read_text()
        assert await lease_holder(api, ns) == "intruder"
