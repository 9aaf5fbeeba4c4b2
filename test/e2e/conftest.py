"""Fixtures for the e2e suite, which runs against an operator deployed by hack/test-e2e.sh.

`cluster`/`kubectl`/`ns` come from testsupport.cluster (with DYNAMO_TEST_USE_EXISTING_CLUSTER=1 they
use KUBECONFIG). `deployed` says how to reach the operator under test: on the local control plane
it is a host process whose loopback URLs, log and pid hack/test-e2e.sh passes in the environment;
on kind it is the in-cluster pod, reached through the API server's proxy.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from testsupport.cluster import Cluster, Kubectl, cluster, kubectl, ns  # noqa: F401
from testsupport.dcd_view import alpha_view

OPERATOR_NAMESPACE = "dynamo-system"
OPERATOR_LABEL = "control-plane=controller-manager"
OPERATOR_DEPLOYMENT = "dynamo-operator-controller-manager"
# config/default serves /metrics over HTTPS to readers only; on kind the suite reads them from inside the
# pod with the pod's own token, so its ServiceAccount gets the reader role for the session (as a
# kubebuilder e2e suite does). The API server's service proxy cannot be used: it forwards no token.
METRICS_READER_BINDING = "dynamo-operator-e2e-metrics-reader"
_IN_POD_SCRAPE = (
    "import ssl, urllib.request\n"
    "token = open('/var/run/secrets/kubernetes.io/serviceaccount/token').read()\n"
    "auth = {'Authorization': 'Bearer ' + token}\n"
    "req = urllib.request.Request('https://127.0.0.1:8443/metrics', headers=auth)\n"
    "ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE\n"
    "print(urllib.request.urlopen(req, context=ctx, timeout=10).read().decode())\n"
)


@dataclass(frozen=True, slots=True)
class Deployed:
    """The operator under test: how to read its /metrics, /readyz and log."""

    mode: str  # "local" (host process) or "kind" (in-cluster pod)
    kubectl: Kubectl
    metrics_url: str = ""
    health_url: str = ""
    log_path: Path | None = None
    pid: int | None = None

    def _get(self, url: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as e:
            return int(e.code), e.read().decode()

    def metrics(self) -> str:
        if self.mode == "local":
            status, text = self._get(self.metrics_url)
            assert status == 200, f"/metrics answered {status}"
            return text
        return self.kubectl(
            "exec", "-n", OPERATOR_NAMESPACE, f"deploy/{OPERATOR_DEPLOYMENT}", "-c", "manager",
            "--", "python", "-c", _IN_POD_SCRAPE,
        )  # fmt: skip

    def health(self, path: str) -> tuple[int, str]:
        if self.mode == "local":
            return self._get(self.health_url + path)
        pod = self.kubectl(
            "get",
            "pods",
            "-n",
            OPERATOR_NAMESPACE,
            "-l",
            OPERATOR_LABEL,
            "-o",
            "jsonpath={.items[0].metadata.name}",
        )
        out = self.kubectl(
            "get", "--raw", f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/pods/{pod}:8081/proxy{path}"
        )
        return 200, out

    def log_text(self) -> str:
        """The host process's log; empty on kind (no `kubectl logs` here: /metrics carries the 403s)."""
        if self.log_path is not None and self.log_path.exists():
            return self.log_path.read_text(errors="replace")
        return ""


@pytest.fixture(scope="session")
def deployed(cluster: Cluster, kubectl: Kubectl) -> Iterator[Deployed]:  # noqa: F811
    """The deployed operator; the suite needs hack/test-e2e.sh (`make test-e2e`) to have set it up."""
    mode = os.environ.get("DYNAMO_E2E_MODE", "")
    if mode == "local":
        log = os.environ.get("DYNAMO_E2E_OPERATOR_LOG")
        pid = os.environ.get("DYNAMO_E2E_OPERATOR_PID")
        yield Deployed(
            mode=mode,
            kubectl=kubectl,
            metrics_url=os.environ["DYNAMO_E2E_METRICS_URL"],
            health_url=os.environ["DYNAMO_E2E_HEALTH_URL"],
            log_path=Path(log) if log else None,
            pid=int(pid) if pid else None,
        )
        return
    if mode == "kind":
        kubectl("delete", "clusterrolebinding", METRICS_READER_BINDING, "--ignore-not-found", check=False)
        kubectl(
            "create", "clusterrolebinding", METRICS_READER_BINDING,
            "--clusterrole=dynamo-operator-metrics-reader",
            f"--serviceaccount={OPERATOR_NAMESPACE}:{OPERATOR_DEPLOYMENT}",
        )  # fmt: skip
        try:
            yield Deployed(mode=mode, kubectl=kubectl)
        finally:
            kubectl("delete", "clusterrolebinding", METRICS_READER_BINDING, "--ignore-not-found", check=False)
        return
    pytest.skip("the e2e suite runs through `make test-e2e` (hack/test-e2e.sh), which deploys the operator")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def api(cluster: Cluster) -> AsyncIterator[Client]:  # noqa: F811
    """An admin client of the test itself (not the operator's)."""
    client = await Client.from_kubeconfig(cluster.kubeconfig, codecs=alpha_view())
    try:
        yield client
    finally:
        await client.close()
