"""The secure metrics endpoint against the real API server: every scrape is authenticated by a
TokenReview and authorized by a SubjectAccessReview, with the roles config/rbac ships.

The in-process manager runs as a ServiceAccount holding exactly config/rbac/metrics_auth_role.yaml;
scrapers are ServiceAccounts with tokens from the TokenRequest API, bound (or not) to
config/rbac/metrics_reader_role.yaml. The flood test (issue #34) sends thousands of made-up tokens
from another process (flood_client.py), half of them hanging up, and prints its figures; the last
test runs the real `dynamo-operator --metrics-secure`.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import os
import re
import signal
import socket
import sys
import tracemalloc
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio
import yaml
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.metrics import requests_count
from dynamo_operator.internal.client.resource import SERVICE_ACCOUNT, Resource
from dynamo_operator.internal.manager import Manager, ManagerOptions
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import install_crds
from testsupport.process import start_operator

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[3]
RBAC = REPO / "config" / "rbac"
CLUSTER_ROLE = Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False)
CLUSTER_ROLE_BINDING = Resource(
    "rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False
)
REVIEWS = {
    "tokenreviews": "tokenreviews.authentication.k8s.io",
    "subjectaccessreviews": "subjectaccessreviews.authorization.k8s.io",
}
READER_USER = "system:serviceaccount:{ns}:prometheus"


# -- the cluster side: ServiceAccounts, tokens, the shipped roles ------------------------------------


async def service_account_token(api: Client, ns: str, name: str) -> str:
    """A new ServiceAccount and a bound token for it from the TokenRequest API."""
    await api.create(SERVICE_ACCOUNT, {"metadata": {"name": name, "namespace": ns}})
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    answer = await api.request("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token", body=request)
    token: str = answer["status"]["token"]
    return token


async def grant(api: Client, ns: str, role_file: str, service_account: str) -> list[str]:
    """The ClusterRole of `role_file` under a name unique to `ns`, bound to the ServiceAccount; returns
    the cluster-scoped names to delete afterwards (they outlive the namespace)."""
    role = yaml.safe_load((RBAC / role_file).read_text())
    name = f"{ns}-{role['metadata']['name']}"
    await api.create(CLUSTER_ROLE, {**copy.deepcopy(role), "metadata": {"name": name}})
    await api.create(
        CLUSTER_ROLE_BINDING,
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": ns}],
        },
    )
    return [name]


async def delete_cluster_scoped(api: Client, names: list[str]) -> None:
    for name in names:
        for resource in (CLUSTER_ROLE_BINDING, CLUSTER_ROLE):
            with contextlib.suppress(NotFound):
                await api.delete(resource, name)


def token_kubeconfig(kubectl: Kubectl, token: str, path: Path) -> str:
    """The admin kubeconfig's server and CA with `token` as the only credential."""
    admin = orjson.loads(kubectl("config", "view", "--raw", "--minify", "--flatten", "-o", "json"))
    cluster = admin["clusters"][0]["cluster"]
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path.write_text(yaml.safe_dump(config))
    return str(path)


# -- the scraper side ---------------------------------------------------------------------------------


async def scrape(session: aiohttp.ClientSession, url: str, token: str | None = None) -> tuple[int, str]:
    """GET like `curl -k [-H "Authorization: Bearer ..."]`: the certificate is self-signed."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with session.get(url, headers=headers, ssl=False) as resp:
        return resp.status, await resp.text()


def reviews_sent() -> dict[str, float]:
    """Review requests this process has sent so far, from the client's metrics."""
    return {
        kind: requests_count(methods=frozenset({"POST"}), resource=label) for kind, label in REVIEWS.items()
    }


def reviews_in(metrics_text: str) -> dict[str, float]:
    """Review requests a process reports in its own /metrics text."""
    out = dict.fromkeys(REVIEWS, 0.0)
    for kind, label in REVIEWS.items():
        for line in metrics_text.splitlines():
            if line.startswith("rest_client_requests_total{") and f'resource="{label}"' in line:
                out[kind] += float(line.rsplit(" ", 1)[1])
    return out


@dataclass(frozen=True, slots=True)
class SecureMetrics:
    """A running secure metrics endpoint and the tokens of a permitted and a non-permitted scraper."""

    url: str
    health_url: str
    reader_token: str
    stranger_token: str


@pytest_asyncio.fixture(loop_scope="session")
async def secure_metrics(
    api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> AsyncIterator[SecureMetrics]:
    """The manager with --metrics-secure, running as a ServiceAccount with only metrics-auth-role."""
    cleanup: list[str] = []
    operator_token = await service_account_token(api, ns, "operator")
    reader_token = await service_account_token(api, ns, "prometheus")
    stranger_token = await service_account_token(api, ns, "stranger")
    try:
        cleanup += await grant(api, ns, "metrics_auth_role.yaml", "operator")
        cleanup += await grant(api, ns, "metrics_reader_role.yaml", "prometheus")
        client = await Client.from_kubeconfig(
            token_kubeconfig(kubectl, operator_token, tmp_path / "operator")
        )
        mgr = Manager(
            client,
            options=ManagerOptions(
                namespace=ns,
                metrics_bind_address="127.0.0.1:0",
                health_probe_bind_address="127.0.0.1:0",
                metrics_secure=True,
            ),
        )
        task = asyncio.create_task(mgr.run())
        try:
            await eventually(lambda: mgr.ready or task.done(), timeout=30)
            assert not task.done(), task
            yield SecureMetrics(
                url=f"https://127.0.0.1:{mgr.metrics_port}/metrics",
                health_url=f"http://127.0.0.1:{mgr.health_probe_port}/healthz",
                reader_token=reader_token,
                stranger_token=stranger_token,
            )
        finally:
            mgr.stop()
            await asyncio.wait_for(task, 30)
            await client.close()
    finally:
        await delete_cluster_scoped(api, cleanup)


async def test_a_scrape_without_a_token_gets_401(secure_metrics: SecureMetrics) -> None:
    """No bearer token: 401 and one word, no metrics."""
    async with aiohttp.ClientSession() as session:
        assert await scrape(session, secure_metrics.url) == (401, "Unauthorized")


async def test_a_token_the_api_server_does_not_accept_gets_401(secure_metrics: SecureMetrics) -> None:
    """A made-up token fails the TokenReview: 401."""
    async with aiohttp.ClientSession() as session:
        assert await scrape(session, secure_metrics.url, "not-a-real-token") == (401, "Unauthorized")


async def test_a_service_account_without_metrics_reader_gets_403(secure_metrics: SecureMetrics) -> None:
    """A valid ServiceAccount token whose account lacks the ClusterRole: 403 and one word."""
    async with aiohttp.ClientSession() as session:
        assert await scrape(session, secure_metrics.url, secure_metrics.stranger_token) == (403, "Forbidden")


async def test_a_service_account_bound_to_metrics_reader_gets_the_metrics(
    secure_metrics: SecureMetrics,
) -> None:
    """The ClusterRole of config/rbac/metrics_reader_role.yaml is enough: 200 and Prometheus text; and
    the operator needed no more than config/rbac/metrics_auth_role.yaml to decide."""
    async with aiohttp.ClientSession() as session:
        status, body = await scrape(session, secure_metrics.url, secure_metrics.reader_token)
    assert status == 200
    assert "# TYPE rest_client_requests_total counter" in body
    assert 'resource="tokenreviews.authentication.k8s.io"' in body


async def test_many_scrapes_cost_a_handful_of_reviews(secure_metrics: SecureMetrics) -> None:
    """40 scrapes by one scraper, ten at a time on a cold cache: at most two reviews of each kind.
    (Each scrape renders every series the test session's operators made: 40 make the point.)"""
    before = reviews_sent()
    async with aiohttp.ClientSession() as session:
        for _ in range(4):
            batch = [scrape(session, secure_metrics.url, secure_metrics.reader_token) for _ in range(10)]
            assert {status for status, _ in await asyncio.gather(*batch)} == {200}
    after = reviews_sent()
    sent = {kind: after[kind] - before[kind] for kind in REVIEWS}
    assert 1 <= sent["tokenreviews"] <= 2, sent
    assert 1 <= sent["subjectaccessreviews"] <= 2, sent


async def test_probes_stay_plain_http_without_a_token(secure_metrics: SecureMetrics) -> None:
    """The kubelet's probes need neither TLS nor a token."""
    async with aiohttp.ClientSession() as session, session.get(secure_metrics.health_url) as resp:
        assert (resp.status, await resp.text()) == (200, "ok")


async def test_plain_http_is_not_served_on_the_secure_port(secure_metrics: SecureMetrics) -> None:
    """No clear-text fallback: an http:// request to the metrics port gets no answer."""
    plain = secure_metrics.url.replace("https://", "http://")
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientError):
            async with session.get(plain, headers={"Authorization": f"Bearer {secure_metrics.reader_token}"}):
                pass


# -- a flood of made-up tokens (issue #34) ---------------------------------------------------------

FLOOD_CLIENT = Path(__file__).with_name("flood_client.py")
FLOOD_REQUESTS = 3000  # made-up tokens, each a new one; every other one hangs up
FLOOD_CONNECTIONS = 150  # of them open at once
FLOOD_BOUND = 8  # reviews in flight the manager allows (2 of them kept for renewing grants)
FLOOD_TIME_CAP = 300.0  # seconds: the flood stops there whatever it reached
# What this process (the manager and the real scraper; the flood is another process) may keep from
# the flood, in Python allocations still alive after it: the two caches' refusals (2 x 1,024 hashes)
# and slack for the interpreter's own caches; far below what 3,000 retained requests would hold.
FLOOD_RETAINED_BYTES = 8 * 2**20


def _memory_kib() -> dict[str, int]:
    """VmRSS and VmHWM of this process (the manager runs in it), KiB."""
    fields = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


async def run_flood(port: int) -> dict[str, Any]:
    """flood_client.py against `port`, bounded by its own time cap and a kill past it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(FLOOD_CLIENT), str(port),
        "--requests", str(FLOOD_REQUESTS), "--connections", str(FLOOD_CONNECTIONS),
        "--time-cap", str(FLOOD_TIME_CAP),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), FLOOD_TIME_CAP + 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()[-3000:]
    result: dict[str, Any] = orjson.loads(out.splitlines()[-1])
    return result


# A load scenario (a minute of 3,000 TLS handshakes and the reviews they cause): `make faults` runs it.
@pytest.mark.fault
@pytest.mark.timeout(600)
async def test_a_flood_of_made_up_tokens_keeps_reviews_and_memory_bounded_and_scrapes_answered(
    api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """3,000 random bearer tokens from another process, 150 connections at a time, half of them
    hanging up: the reviews in flight never pass the bound (the rest get 503 with Retry-After at
    once), nothing is left in flight, the memory kept is bounded, and the real scraper, scraping all
    along, gets its metrics every time."""
    operator_token = await service_account_token(api, ns, "operator")
    reader_token = await service_account_token(api, ns, "prometheus")
    cleanup = await grant(api, ns, "metrics_auth_role.yaml", "operator")
    cleanup += await grant(api, ns, "metrics_reader_role.yaml", "prometheus")
    client = await Client.from_kubeconfig(token_kubeconfig(kubectl, operator_token, tmp_path / "operator"))
    mgr = Manager(
        client,
        options=ManagerOptions(
            namespace=ns,
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address="0",
            metrics_secure=True,
            metrics_max_reviews_in_flight=FLOOD_BOUND,
        ),
    )
    task = asyncio.create_task(mgr.run())
    reader_during: list[int] = []
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=30)
        assert not task.done(), task
        authorizer = mgr.metrics_authorizer
        assert authorizer is not None and mgr.metrics_port is not None
        url = f"https://127.0.0.1:{mgr.metrics_port}/metrics"
        async with aiohttp.ClientSession() as session:  # the real scraper's, as a Prometheus has its own
            assert (await scrape(session, url, reader_token))[0] == 200  # before the flood
            gc.collect()
            memory_before = _memory_kib()
            sent_before = reviews_sent()
            tracemalloc.start()
            done = asyncio.Event()

            async def real_scraper() -> None:
                while not done.is_set():
                    reader_during.append((await scrape(session, url, reader_token))[0])
                    await asyncio.sleep(0.2)

            scraper = asyncio.create_task(real_scraper())
            try:
                flood = await run_flood(mgr.metrics_port)
            finally:
                done.set()
                await scraper
            await eventually(lambda: authorizer.limiter.in_flight == 0, timeout=30, interval=0.05)
            gc.collect()
            retained, traced_peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            memory_after = _memory_kib()
            sent = {kind: reviews_sent()[kind] - sent_before[kind] for kind in REVIEWS}
            after_status, _ = await scrape(session, url, reader_token)
        limiter = authorizer.limiter
        statuses: dict[str, int] = flood["statuses"]
        cancelled = authorizer.users.cancelled + authorizer.access.cancelled
        print(
            f"\nflood: {FLOOD_REQUESTS} made-up tokens from another process, {FLOOD_CONNECTIONS} connections "
            f"at once, {flood['hung_up']} hung up, time cap reached: {flood['capped']}; bound {FLOOD_BOUND}\n"
            f"  answers to the {sum(statuses.values())} requests that waited: {statuses}\n"
            f"  reviews started {limiter.started}, cancelled on hang-up {cancelled}, "
            f"refused busy (503) {limiter.refused}, peak in flight {limiter.peak}\n"
            f"  sent to the API server: {sent}\n"
            f"  real scraper during the flood: {len(reader_during)} scrapes, "
            f"{reader_during.count(200)} answered 200\n"
            f"  operator process memory: Python allocations kept {retained / 2**20:.2f} MiB "
            f"(peak during the flood {traced_peak / 2**20:.1f} MiB); "
            f"RSS {memory_before['VmRSS'] / 1024:.0f} -> {memory_after['VmRSS'] / 1024:.0f} MiB, "
            f"high-water {memory_before['VmHWM'] / 1024:.0f} -> {memory_after['VmHWM'] / 1024:.0f} MiB"
        )
        assert not flood["capped"] and flood["hung_up"] == FLOOD_REQUESTS // 2
        assert 1 <= limiter.peak <= FLOOD_BOUND
        assert limiter.refused > 0  # the flood did press on the bound
        assert cancelled > 0  # and reviews of callers who hung up were cancelled
        assert set(statuses) <= {"401", "503"}, statuses  # never a 500, never a dropped connection
        assert flood["retry_after"] in ([], ["1"])
        assert sent["tokenreviews"] <= limiter.started
        assert sent["tokenreviews"] >= statuses.get("401", 0)  # each 401 was a TokenReview
        # No made-up token reaches a SubjectAccessReview: only the real scraper's user is asked about.
        assert {user.username for user, _, _ in authorizer.access.stored_keys()} <= {
            READER_USER.format(ns=ns)
        }
        assert sent["subjectaccessreviews"] <= 1 + len(reader_during)
        assert len(authorizer.users) <= 2 * 1024 and authorizer.users.in_flight == 0
        assert retained < FLOOD_RETAINED_BYTES
        assert reader_during and set(reader_during) == {200}, reader_during
        assert after_status == 200
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        mgr.stop()
        await asyncio.wait_for(task, 30)
        await client.close()
        await delete_cluster_scoped(api, cleanup)


NETWORK_POLICY = Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy")


async def test_the_shipped_network_policy_is_accepted_as_written(api: Client, ns: str) -> None:
    """config/network-policy passes the API server's validation (endPort included) and is stored as
    written: nothing is defaulted into a rule that would widen or narrow it."""
    policy = yaml.safe_load((REPO / "config" / "network-policy" / "metrics_ingress.yaml").read_text())
    policy["metadata"]["namespace"] = ns
    created = await api.create(NETWORK_POLICY, policy)
    assert created["spec"] == policy["spec"]


# -- the real process ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_operator_process_with_metrics_secure_serves_only_authorized_scrapers(
    cluster: Any, api: Client, ns: str, tmp_path: Path
) -> None:
    """`dynamo-operator --metrics-secure`: 401 without a token, 200 for metrics-reader, and after 100
    scrapes its own client metrics count at most two reviews of each kind."""
    await install_crds(api)
    reader_token = await service_account_token(api, ns, "prometheus")
    cleanup = await grant(api, ns, "metrics_reader_role.yaml", "prometheus")
    metrics, probes = free_port(), free_port()
    log = tmp_path / "operator.log"
    proc = start_operator(
        "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns,
        "--metrics-secure", f"--metrics-bind-address=127.0.0.1:{metrics}",
        f"--health-probe-bind-address=127.0.0.1:{probes}",
        log=log,
    )  # fmt: skip
    url = f"https://127.0.0.1:{metrics}/metrics"
    try:
        async with aiohttp.ClientSession() as session:

            async def unauthenticated() -> tuple[int, str]:
                try:
                    return await scrape(session, url)
                except aiohttp.ClientError:
                    return 0, ""  # not listening yet

            await eventually(
                unauthenticated, until=lambda r: r[0] != 0 or proc.poll() is not None, timeout=60
            )
            assert proc.poll() is None, log.read_text()[-3000:]
            assert await scrape(session, url) == (401, "Unauthorized")
            for _ in range(100):
                status, body = await scrape(session, url, reader_token)
                assert status == 200
        counted = reviews_in(body)
        assert 1 <= counted["tokenreviews"] <= 2, counted
        assert 1 <= counted["subjectaccessreviews"] <= 2, counted
        assert re.search(r'"secure": ?true', log.read_text()), "the start-up line says the endpoint is secure"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.to_thread(proc.wait, 45)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            await delete_cluster_scoped(api, cleanup)
