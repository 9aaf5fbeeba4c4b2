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
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from testsupport.cluster import Cluster, Kubectl, cluster, kubectl, ns  # noqa: F401

OPERATOR_NAMESPACE = "dynamo-system"
METRICS_SERVICE = "dynamo-operator-controller-manager-metrics"
OPERATOR_LABEL = "control-plane=controller-manager"


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
        path = f"/api/v1/namespaces/{OPERATOR_NAMESPACE}/services/http:{METRICS_SERVICE}:8080/proxy/metrics"
        return self.kubectl("get", "--raw", path)

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
def deployed(cluster: Cluster, kubectl: Kubectl) -> Deployed:  # noqa: F811
    """The deployed operator; the suite needs hack/test-e2e.sh (`make test-e2e`) to have set it up."""
    mode = os.environ.get("DYNAMO_E2E_MODE", "")
    if mode == "local":
        log = os.environ.get("DYNAMO_E2E_OPERATOR_LOG")
        pid = os.environ.get("DYNAMO_E2E_OPERATOR_PID")
        return Deployed(
            mode=mode,
            kubectl=kubectl,
            metrics_url=os.environ["DYNAMO_E2E_METRICS_URL"],
            health_url=os.environ["DYNAMO_E2E_HEALTH_URL"],
            log_path=Path(log) if log else None,
            pid=int(pid) if pid else None,
        )
    if mode == "kind":
        return Deployed(mode=mode, kubectl=kubectl)
    pytest.skip("the e2e suite runs through `make test-e2e` (hack/test-e2e.sh), which deploys the operator")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def api(cluster: Cluster) -> AsyncIterator[Client]:  # noqa: F811
    """An admin client of the test itself (not the operator's)."""
    client = await Client.from_kubeconfig(cluster.kubeconfig)
    try:
        yield client
    finally:
        await client.close()
