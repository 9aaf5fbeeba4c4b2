"""pytest fixtures for tests against a real kube-apiserver: `cluster`, `kubectl`, `ns`, `local_cluster`.

The cluster is the one in KUBECONFIG when DYNAMO_TEST_USE_EXISTING_CLUSTER=1 (e.g. kind), otherwise a
local control plane (hack/localcluster.py) started once per session in its own state dir and always
stopped at the end. Tests that need its fault hooks take `local_cluster`, which skips elsewhere.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from localcluster import BinariesMissingError, ClusterError, LocalCluster, reap_orphans

USE_EXISTING_ENV = "DYNAMO_TEST_USE_EXISTING_CLUSTER"
KUBECTL_TIMEOUT = 60.0  # seconds, per kubectl call
TEST_NAMESPACE_LABEL = "dynamo-operator.test/namespace"


@dataclass(frozen=True, slots=True)
class Cluster:
    """What a test may use: the admin kubeconfig path, the server URL, and the fault hooks if local."""

    kubeconfig: str
    server: str
    local: LocalCluster | None


class KubectlError(RuntimeError):
    """kubectl exited non-zero; the message carries its stderr."""

    def __init__(self, args: list[str], returncode: int, stderr: str) -> None:
        super().__init__(f"kubectl {' '.join(args)} exited {returncode}: {stderr.strip()}")
        self.returncode = returncode
        self.stderr = stderr


class Kubectl:
    """Runs kubectl against one kubeconfig; returns stdout, raises KubectlError on failure."""

    def __init__(self, kubeconfig: str) -> None:
        self.kubeconfig = kubeconfig

    def __call__(
        self, *args: str, stdin: str | None = None, timeout: float = KUBECTL_TIMEOUT, check: bool = True
    ) -> str:
        argv = list(args)
        try:
            done = subprocess.run(
                ["kubectl", f"--kubeconfig={self.kubeconfig}", *argv],
                input=stdin,
                capture_output=True,
                check=False,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as e:
            raise KubectlError(argv, -1, f"timed out after {timeout:g} s") from e
        if check and done.returncode != 0:
            raise KubectlError(argv, done.returncode, done.stderr)
        return done.stdout

    def json(self, *args: str, timeout: float = KUBECTL_TIMEOUT) -> Any:
        """`kubectl <args> -o json`, parsed."""
        return json.loads(self(*args, "-o", "json", timeout=timeout))


def _existing_cluster() -> Cluster:
    kubeconfig = os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")
    kubectl = Kubectl(kubeconfig)
    try:
        kubectl("get", "--raw", "/readyz", timeout=15)
        server = kubectl("config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}")
    except KubectlError as e:
        pytest.fail(f"{USE_EXISTING_ENV}=1 but the cluster in {kubeconfig} is not usable: {e}", pytrace=False)
    return Cluster(kubeconfig=kubeconfig, server=server.strip(), local=None)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    """The cluster for this test session (see the module docstring)."""
    if os.environ.get(USE_EXISTING_ENV) == "1":
        yield _existing_cluster()
        return
    reap_orphans()  # clusters of earlier sessions that were killed before their teardown
    local = LocalCluster(f"pytest-{os.getpid()}", owner_pid=os.getpid())
    atexit.register(local.down)  # backstop if the session dies between up() and teardown
    # `timeout`, CI runners and IDEs stop pytest with SIGTERM, which would skip every teardown and
    # leave the cluster running: treat it like Ctrl-C, which pytest unwinds through the fixtures.
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        try:
            local.up()
        except BinariesMissingError as e:
            pytest.fail(f"{e}\n(`make test` builds them first)", pytrace=False)
        except ClusterError as e:
            pytest.fail(str(e), pytrace=False)
        yield Cluster(kubeconfig=local.kubeconfig, server=local.server, local=local)
    finally:
        local.down()
        if previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def kubectl(cluster: Cluster) -> Kubectl:
    """kubectl bound to the cluster's admin kubeconfig: `kubectl("get", "pods", "-n", ns)` -> stdout."""
    return Kubectl(cluster.kubeconfig)


@pytest.fixture
def local_cluster(cluster: Cluster) -> LocalCluster:
    """The LocalCluster with its fault hooks; skips the test on an existing cluster."""
    if cluster.local is None:
        pytest.skip(f"needs the fault hooks of the local control plane; {USE_EXISTING_ENV}=1 uses another")
    return cluster.local


def namespace_name(test_name: str) -> str:
    """A fresh DNS-label namespace name derived from the test's name."""
    base = re.sub(r"[^a-z0-9]+", "-", test_name.lower().removeprefix("test_")).strip("-")[:50].rstrip("-")
    return f"{base or 't'}-{secrets.token_hex(3)}"


@pytest.fixture
def ns(request: pytest.FixtureRequest, kubectl: Kubectl) -> Iterator[str]:
    """A fresh namespace named after the test (its default ServiceAccount exists); deleted afterwards
    without waiting for the deletion to finish."""
    name = namespace_name(request.node.name)
    manifest = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {TEST_NAMESPACE_LABEL: "true"}},
    }
    kubectl("create", "-f", "-", stdin=json.dumps(manifest))
    # Pod creation is refused until kcm's serviceaccount controller has made `default`.
    kubectl("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=30s", timeout=40)
    yield name
    # The cluster may be broken on purpose by a fault test: never fail the test on cleanup.
    kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", timeout=20, check=False)


@contextlib.contextmanager
def private_cluster(name: str, *, nodes: int = 2) -> Iterator[Cluster]:
    """A local control plane of its own, for tests that run an operator with flags of their own: on
    the session's cluster the session operator (cluster-wide, default flags) would reconcile the same
    objects and the two would race (e.g. each writing its own Deployment env). Skips on an existing
    cluster, where there is no second one to start."""
    if os.environ.get(USE_EXISTING_ENV) == "1":
        pytest.skip(f"needs a private local control plane; {USE_EXISTING_ENV}=1 runs on one cluster only")
    local = LocalCluster(f"{name}-{os.getpid()}", nodes=nodes, owner_pid=os.getpid())
    atexit.register(local.down)
    try:
        local.up()
    except (BinariesMissingError, ClusterError) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield Cluster(kubeconfig=local.kubeconfig, server=local.server, local=local)
    finally:
        local.down()
