"""pytest fixtures for tests against a real kube-apiserver: `cluster`, `kubectl`, `ns`, `local_cluster`.

The cluster is the one in KUBECONFIG when DYNAMO_TEST_USE_EXISTING_CLUSTER=1 (e.g. kind), otherwise a
local control plane (hack/localcluster.py) started once per session in its own state dir and always
stopped at the end. Tests that need its fault hooks take `local_cluster`, which skips elsewhere.

Add-ons (hack/cluster_addons.py: the real LeaderWorkerSet controller; Grove's CRDs, with Grove's
operator when GROVE_OPERATOR names it) are opt-in per session, as they change what the cluster does (LWS
objects become ready): the session's local cluster runs those named by DYNAMO_TEST_CLUSTER_ADDONS
(`lws,grove`), or, when that is unset and every collected test that uses the cluster is marked
`@pytest.mark.addons(...)`, the union of those marks (so `pytest test/integration/controllers_multinode`
just works). With an existing cluster (DYNAMO_TEST_USE_EXISTING_CLUSTER=1), DYNAMO_TEST_CLUSTER_ADDONS
declares what it runs. A test marked with an add-on the session does not run is skipped, saying why
(`needs_addons`).
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import functools
import json
import os
import re
import secrets
import signal
import ssl
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cluster_addons
import pytest
import yaml
from localcluster import (
    AddonNotBuiltError,
    BinariesMissingError,
    ClusterError,
    LocalCluster,
    http,
    reap_orphans,
)

from testsupport import eventually_sync

USE_EXISTING_ENV = "DYNAMO_TEST_USE_EXISTING_CLUSTER"
KUBECTL_TIMEOUT = 60.0  # seconds, per kubectl call
TEST_NAMESPACE_LABEL = "dynamo-operator.test/namespace"
ADDONS_ENV = "DYNAMO_TEST_CLUSTER_ADDONS"
ADDONS_MARK = "addons"
# Installed before a local cluster's controller-manager starts (LocalCluster's `crds`): its garbage
# collector then knows the project's kinds from the first moment, instead of within 30 s of their
# installation (until then, deleting a graph leaves its components and their workloads in place).
PROJECT_CRDS = Path(__file__).resolve().parents[2] / "config" / "crd" / "bases"


@dataclass(frozen=True, slots=True)
class Cluster:
    """What a test may use: the admin kubeconfig path, the server URL, and the fault hooks if local."""

    kubeconfig: str
    server: str
    local: LocalCluster | None
    addons: tuple[str, ...] = ()  # the add-ons this cluster runs
    # add-on -> why the session runs without it although asked (not built, existing cluster)
    addons_missing: tuple[tuple[str, str], ...] = ()

    def why_not(self, addon: str) -> str | None:
        """None when the add-on runs, else the reason it does not."""
        if addon in self.addons:
            return None
        reasons = dict(self.addons_missing)
        return reasons.get(addon) or (
            f"the session's cluster runs without the {addon} add-on; "
            f"{ADDONS_ENV}={addon} (or `make multinode`) starts it"
        )


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

    @functools.cached_property
    def direct(self) -> DirectApi | None:
        """The same identity over HTTP from this process, for fixtures that run per test; None when the
        kubeconfig authenticates other than by an embedded client certificate (then use kubectl)."""
        return DirectApi.from_kubeconfig(self.kubeconfig)


class DirectApi:
    """A few raw requests to the API server as the kubeconfig's client certificate, without a kubectl
    process: each kubectl call costs about 0.2 s of CPU (over a second of wall time on a busy machine),
    and the per-test namespace fixture made three of them for every test."""

    def __init__(self, server: str, context: ssl.SSLContext) -> None:
        self.server = server.rstrip("/")
        self.context = context

    @classmethod
    def from_kubeconfig(cls, path: str) -> DirectApi | None:
        try:
            config = yaml.safe_load(Path(path).read_text())
            current = config["current-context"]
            [context] = [c["context"] for c in config["contexts"] if c["name"] == current]
            [cluster] = [c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"]]
            [user] = [u["user"] for u in config["users"] if u["name"] == context["user"]]
            if set(user) != {"client-certificate-data", "client-key-data"}:
                return None  # a token, an exec plugin, files: kubectl knows them all
            ctx = ssl.create_default_context(
                cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
            )
            # load_cert_chain reads files only: a private directory that lives for this call.
            with tempfile.TemporaryDirectory() as tmp:
                cert, key = Path(tmp, "client.crt"), Path(tmp, "client.key")
                cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
                key.write_bytes(base64.b64decode(user["client-key-data"]))
                ctx.load_cert_chain(str(cert), str(key))
            return cls(cluster["server"], ctx)
        except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError, ssl.SSLError):
            return None

    def request(
        self, method: str, path: str, body: Any = None, *, timeout: float = 10.0
    ) -> tuple[int, bytes]:
        """(status, body) for any HTTP status; OSError when the server is unreachable."""
        return http(self.server + path, method=method, body=body, context=self.context, timeout=timeout)

    def send(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        content_type: str,
        as_user: str | None = None,
        timeout: float = 10.0,
    ) -> tuple[int, Any]:
        """(status, parsed JSON answer) of a request whose body is sent as `content_type` (a merge
        patch, say), optionally impersonating `as_user` (kubectl's `--as`); OSError when the server is
        unreachable."""
        req = urllib.request.Request(self.server + path, data=json.dumps(body).encode(), method=method)
        req.add_header("Content-Type", content_type)
        if as_user is not None:
            req.add_header("Impersonate-User", as_user)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.context) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def kubectl_like(
        self,
        argv: list[str],
        method: str,
        path: str,
        body: Any,
        *,
        content_type: str,
        as_user: str | None = None,
    ) -> str:
        """`send`, answered as kubectl answers: the object as JSON, or KubectlError carrying the API
        server's message (tests match on that message, which kubectl prints as it is)."""
        status, answer = self.send(method, path, body, content_type=content_type, as_user=as_user)
        if status >= 400:
            message = answer.get("message", "") if isinstance(answer, dict) else str(answer)
            raise KubectlError(argv, 1, f"Error from server: {message}")
        return json.dumps(answer)


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


def session_addons(items: list[pytest.Item]) -> tuple[str, ...]:
    """The add-ons this session asks for (see the module docstring)."""
    if (forced := os.environ.get(ADDONS_ENV)) is not None:
        return cluster_addons.parse(forced)
    users = [item for item in items if "cluster" in getattr(item, "fixturenames", ())]
    marks = [list(item.iter_markers(ADDONS_MARK)) for item in users]
    if not users or not all(marks):
        return ()
    return cluster_addons.parse([name for ms in marks for m in ms for name in m.args])


def _buildable_addons(wanted: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(the wanted add-ons that are built, (add-on, why not) for the others)."""
    ready, missing = [], []
    for name in wanted:
        addon = cluster_addons.ADDONS[name]
        try:
            cluster_addons.built(addon, cluster_addons.addon_dir(addon))
            ready.append(name)
        except cluster_addons.AddonMissingError as e:
            missing.append((name, str(e)))
    return tuple(ready), tuple(missing)


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """The cluster for this test session (see the module docstring)."""
    wanted = session_addons(request.session.items)
    if os.environ.get(USE_EXISTING_ENV) == "1":
        # An existing cluster runs what it runs: DYNAMO_TEST_CLUSTER_ADDONS says which add-ons those are.
        existing = _existing_cluster()
        declared = cluster_addons.parse(os.environ.get(ADDONS_ENV))
        why = f"the existing cluster ({USE_EXISTING_ENV}=1) is not declared to run it ({ADDONS_ENV})"
        missing = tuple((a, why) for a in wanted if a not in declared)
        yield Cluster(existing.kubeconfig, existing.server, None, declared, missing)
        return
    reap_orphans()  # clusters of earlier sessions that were killed before their teardown
    addons, missing = _buildable_addons(wanted)
    local = LocalCluster(f"pytest-{os.getpid()}", owner_pid=os.getpid(), addons=addons, crds=[PROJECT_CRDS])
    atexit.register(local.down)  # backstop if the session dies between up() and teardown
    # `timeout`, CI runners and IDEs stop pytest with SIGTERM, which would skip every teardown and
    # leave the cluster running: treat it like Ctrl-C, which pytest unwinds through the fixtures.
    previous = signal.getsignal(signal.SIGTERM)
    if previous == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        try:
            local.up()
        except AddonNotBuiltError as e:  # built a moment ago, gone now: nothing to skip around
            pytest.fail(str(e), pytrace=False)
        except BinariesMissingError as e:
            pytest.fail(f"{e}\n(`make test` builds them first)", pytrace=False)
        except ClusterError as e:
            pytest.fail(str(e), pytrace=False)
        yield Cluster(local.kubeconfig, local.server, local, addons, missing)
    finally:
        local.down()
        if previous == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="session")
def kubectl(cluster: Cluster) -> Kubectl:
    """kubectl bound to the cluster's admin kubeconfig: `kubectl("get", "pods", "-n", ns)` -> stdout."""
    return Kubectl(cluster.kubeconfig)


def needs_addons(cluster: Cluster, request: pytest.FixtureRequest) -> None:
    """Skip the requesting test unless the cluster runs every add-on of its `addons` marks."""
    for mark in request.node.iter_markers(ADDONS_MARK):
        for addon in mark.args:
            if (why := cluster.why_not(addon)) is not None:
                pytest.skip(f"needs the {addon} add-on: {why}")


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


@contextlib.contextmanager
def fresh_namespace(kubectl: Kubectl, name: str) -> Iterator[str]:
    """Namespace `name` (its default ServiceAccount exists) for the block; deleted afterwards without
    waiting for the deletion to finish."""
    manifest = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {TEST_NAMESPACE_LABEL: "true"}},
    }
    if (api := kubectl.direct) is None:
        kubectl("create", "-f", "-", stdin=json.dumps(manifest))
        # Pod creation is refused until kcm's serviceaccount controller has made `default`.
        kubectl("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=30s", timeout=40)
    else:
        status, body = api.request("POST", "/api/v1/namespaces", manifest)
        if status != 201:
            raise KubectlError(["create", "namespace", name], status, body.decode(errors="replace"))
        eventually_sync(
            lambda: api.request("GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0],
            until=lambda code: code == 200,
            timeout=30,
            interval=0.05,
            what=f"serviceaccount/default in {name}",
        )
    try:
        yield name
    finally:
        # The cluster may be broken on purpose by a fault test: never fail the test on cleanup.
        if api is None:
            kubectl(
                "delete", "namespace", name, "--wait=false", "--ignore-not-found", timeout=20, check=False
            )
        else:
            with contextlib.suppress(OSError):
                api.request("DELETE", f"/api/v1/namespaces/{name}", timeout=20)


@pytest.fixture
def ns(request: pytest.FixtureRequest, kubectl: Kubectl) -> Iterator[str]:
    """A fresh namespace named after the test (see `fresh_namespace`)."""
    with fresh_namespace(kubectl, namespace_name(request.node.name)) as name:
        yield name


@pytest.fixture
def short_ns(kubectl: Kubectl) -> Iterator[str]:
    """A fresh namespace with a short name, for label values built from it: upstream's Grove objects
    carry `<ns>-<graph>` (`nvidia.com/dynamo-namespace`), which Grove holds to 63 characters, and the
    `ns` fixture's names (after the test) are longer than a user's usually are."""
    with fresh_namespace(kubectl, f"grove-{secrets.token_hex(3)}") as name:
        yield name


@contextlib.contextmanager
def private_cluster(name: str, *, nodes: int = 2) -> Iterator[Cluster]:
    """A local control plane of its own, for tests that run an operator with flags of their own: on
    the session's cluster the session operator (cluster-wide, default flags) would reconcile the same
    objects and the two would race (e.g. each writing its own Deployment env). Skips on an existing
    cluster, where there is no second one to start."""
    if os.environ.get(USE_EXISTING_ENV) == "1":
        pytest.skip(f"needs a private local control plane; {USE_EXISTING_ENV}=1 runs on one cluster only")
    local = LocalCluster(f"{name}-{os.getpid()}", nodes=nodes, owner_pid=os.getpid(), crds=[PROJECT_CRDS])
    atexit.register(local.down)
    try:
        local.up()
    except (BinariesMissingError, ClusterError) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield Cluster(kubeconfig=local.kubeconfig, server=local.server, local=local)
    finally:
        local.down()
