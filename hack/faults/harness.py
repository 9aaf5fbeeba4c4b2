"""What the fault scenarios, the scale benchmark and the e2e suite share: a local control plane with
config/default deployed, the operator as a local process authenticated as its own ServiceAccount,
its /metrics scraped, and the end-of-run invariants ("every DGD converged, no duplicate or orphaned
object, no lost user PVC").

Everything is loopback and bounded in time. The operator Deployment of config/default is scaled to 0:
on this cluster kwok would only simulate its pod (Running/Ready while reconciling nothing), so the
real operator runs as a host process with the same ServiceAccount, arguments and POD_NAMESPACE.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parents[2]
HACK = REPO / "hack"
if str(HACK) not in sys.path:
    sys.path.insert(0, str(HACK))

from dynamo_operator.internal.client.client import Client  # noqa: E402
from dynamo_operator.internal.client.errors import NotFound  # noqa: E402
from dynamo_operator.internal.client.resource import (  # noqa: E402
    CUSTOM_RESOURCE_DEFINITION,
    DEPLOYMENT,
    NAMESPACE,
    PERSISTENT_VOLUME_CLAIM,
    SERVICE,
)
from dynamo_operator.internal.kinds import DCD, DGD  # noqa: E402
from localcluster import LocalCluster  # noqa: E402

OPERATOR_NAMESPACE = "dynamo-system"
OPERATOR_SA = "dynamo-operator-controller-manager"
OPERATOR_DEPLOYMENT = "dynamo-operator-controller-manager"
OPERATOR_BIN = REPO / ".venv" / "bin" / "dynamo-operator"
GROUP = "nvidia.com"
# DGD and DCD are the operator's descriptors (v1beta1, the storage version): benchmarks and fault runs
# write graphs in v1alpha1 through `stored_version.speaking_v1alpha1`, converted in process.
MANAGED_BY = "nvidia.com/managed-by"
IMAGE = "registry.example/ai-dynamo/vllm-runtime:0.6.1"
KUBECTL_TIMEOUT = 120.0

T = TypeVar("T")


def say(message: str) -> None:
    """Progress on stderr, so stdout carries only the figures."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubectl(kubeconfig: str, *args: str, stdin: str | None = None, timeout: float = KUBECTL_TIMEOUT) -> str:
    """Run kubectl; raise with its stderr on failure."""
    done = subprocess.run(
        ["kubectl", f"--kubeconfig={kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


async def eventually(
    probe: Callable[[], Awaitable[T]],
    until: Callable[[T], bool],
    *,
    timeout: float,  # noqa: ASYNC109 - a polling bound
    interval: float = 0.5,
    what: str = "condition",
) -> T:
    """Poll `probe` until `until(result)`; TimeoutError (with the last result) after `timeout`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        with contextlib.suppress(Exception):
            last = await probe()
            if until(last):
                return last  # type: ignore[no-any-return]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:g} s; last: {str(last)[:500]}")
        await asyncio.sleep(interval)


# --- cluster and deployment ----------------------------------------------------------------------


def start_cluster(
    name: str, *, nodes: int = 4, extra_apiserver_args: Sequence[str] = (), owned: bool = True
) -> LocalCluster:
    """A fresh local control plane in its own state dir; `owned` (by this process) lets test sessions
    reap it once this process is gone, so a cluster kept for debugging must not be owned."""
    cluster = LocalCluster(name, nodes=nodes, owner_pid=os.getpid() if owned else None)
    cluster.down()  # leftovers of an earlier, killed run with the same name
    cluster.up()
    if extra_apiserver_args:
        cluster.restart_apiserver(list(extra_apiserver_args))
    return cluster


def deploy_default(kubeconfig: str, *, scale_to_zero: bool = True) -> None:
    """`kustomize config/default | kubectl apply --server-side`, wait for the CRDs; scale the
    in-cluster operator to 0 (see the module docstring)."""
    manifests = kubectl(kubeconfig, "kustomize", str(REPO / "config" / "default"))
    kubectl(kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", "-", stdin=manifests)
    kubectl(kubeconfig, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
    if scale_to_zero:
        kubectl(
            kubeconfig, "-n", OPERATOR_NAMESPACE, "scale", f"deployment/{OPERATOR_DEPLOYMENT}", "--replicas=0"
        )


def operator_kubeconfig(cluster: LocalCluster, path: Path) -> str:
    """A kubeconfig with a bound token of the operator's own ServiceAccount: RBAC applies for real."""
    return cluster.token_kubeconfig(OPERATOR_SA, OPERATOR_NAMESPACE, path, duration="4h")


# --- the operator process --------------------------------------------------------------------------


def parse_metrics(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Prometheus text format → (name, labels, value) samples."""
    from prometheus_client.parser import text_string_to_metric_families

    out: list[tuple[str, dict[str, str], float]] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.append((sample.name, dict(sample.labels), float(sample.value)))
    return out


def metric_sum(samples: Iterable[tuple[str, dict[str, str], float]], name: str, **match: str) -> float:
    """Sum of the samples called `name` whose labels contain `match`."""
    return sum(
        v for n, labels, v in samples if n == name and all(labels.get(k) == want for k, want in match.items())
    )


@dataclass
class OperatorProcess:
    """One `dynamo-operator --leader-elect` process on loopback ports, logging to a file."""

    kubeconfig: str
    log_path: Path
    extra_args: Sequence[str] = ()
    metrics_port: int = field(default_factory=free_port)
    health_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.health_port}"

    def start(self) -> OperatorProcess:
        env = {**os.environ, "POD_NAMESPACE": OPERATOR_NAMESPACE, "PYTHONSAFEPATH": "1"}
        env.pop("KUBECONFIG", None)
        argv = [
            str(OPERATOR_BIN),
            f"--kubeconfig={self.kubeconfig}",
            "--leader-elect",
            f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
            "--metrics-secure=false",  # plain HTTP on loopback: the harness scrapes without a token
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            # The webhook on a loopback port of its own: the default, :9443 on every interface,
            # would take that port from every test session's webhook on this host (the API server
            # of these clusters is not routed to it; it only keeps the CRDs' CA bundle current).
            "--webhook-bind-address=127.0.0.1:0",
            *self.extra_args,
        ]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def get(self, path: str, *, timeout: float = 5.0) -> tuple[int, str]:
        url = self.metrics_url if path == "/metrics" else self.health_url + path
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:
                return int(resp.status), resp.read().decode()
        except urllib.error.HTTPError as e:
            return int(e.code), e.read().decode()

    def wait_ready(self, timeout: float = 60.0) -> float:
        """Seconds until /readyz answers ok (caches synced)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if not self.alive():
                raise RuntimeError(
                    f"operator exited with {self.proc and self.proc.returncode}; see {self.log_path}"
                )
            with contextlib.suppress(OSError):
                if self.get("/readyz", timeout=2.0)[0] == 200:
                    return time.monotonic() - started
            time.sleep(0.1)
        raise TimeoutError(f"operator not ready within {timeout} s; see {self.log_path}")

    def metrics(self) -> list[tuple[str, dict[str, str], float]]:
        status, text = self.get("/metrics", timeout=10.0)
        if status != 200:
            raise RuntimeError(f"/metrics answered {status}")
        return parse_metrics(text)

    def peak_rss_mb(self) -> float:
        """VmHWM: the kernel's record of the process's peak resident set."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks  # utime + stime

    def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self, timeout: float = 40.0) -> int | None:
        """SIGTERM, SIGKILL after `timeout`; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def forbidden_requests(samples: Iterable[tuple[str, dict[str, str], float]]) -> dict[str, float]:
    """Requests the API server refused with 403, by `method resource` (RBAC denials)."""
    out: dict[str, float] = {}
    for name, labels, value in samples:
        if name == "rest_client_requests_total" and labels.get("code") == "403" and value:
            key = f"{labels.get('method')} {labels.get('resource')}"
            out[key] = out.get(key, 0.0) + value
    return out


def requests_by_verb(samples: Iterable[tuple[str, dict[str, str], float]]) -> Counter[str]:
    out: Counter[str] = Counter()
    for name, labels, value in samples:
        if name == "rest_client_requests_total":
            out[str(labels.get("method"))] += int(value)
    return out


# --- objects ------------------------------------------------------------------------------------


def graph(name: str, namespace: str, *, services: int = 2, pvc: str | None = None) -> dict[str, Any]:
    """A small graph: a frontend plus `services - 1` workers, optionally mounting a user PVC
    (`create: false`, i.e. the graph must never delete it)."""
    specs: dict[str, Any] = {
        "Frontend": {
            "componentType": "frontend",
            "replicas": 1,
            "extraPodSpec": {"mainContainer": {"image": IMAGE}},
        }
    }
    kinds = ["decode", "prefill"]
    for i in range(services - 1):
        sub = kinds[i] if i < len(kinds) else f"w{i}"
        worker: dict[str, Any] = {
            "componentType": "worker",
            "replicas": 1,
            "extraPodSpec": {
                "mainContainer": {"image": IMAGE, "command": ["python3"], "args": ["-m", "dynamo.vllm"]}
            },
        }
        if services > 2:
            worker["subComponentType"] = sub
        if pvc:
            worker["volumeMounts"] = [{"name": pvc, "mountPoint": "/opt/models"}]
        specs[f"Worker{sub.capitalize()}"] = worker
    spec: dict[str, Any] = {"backendFramework": "vllm", "services": specs}
    if pvc:
        spec["pvcs"] = [{"name": pvc, "create": False}]
    return {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def user_pvc(name: str, namespace: str) -> dict[str, Any]:
    """A PVC the user made (not the operator): label-free, owner-free."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace, "labels": {"owner": "user"}},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }


async def ensure_namespace(api: Client, name: str) -> None:
    with contextlib.suppress(Exception):
        await api.create(NAMESPACE, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


async def bounded_gather(coros: Iterable[Awaitable[T]], *, limit: int = 32) -> list[T]:
    """Run coroutines with at most `limit` in flight (the API server's fairness, not ours, decides)."""
    slots = asyncio.Semaphore(limit)

    async def one(c: Awaitable[T]) -> T:
        async with slots:
            return await c

    return await asyncio.gather(*(one(c) for c in coros))


def is_converged(dgd: Mapping[str, Any]) -> bool:
    """state successful, Ready=True for the current generation."""
    status = dgd.get("status") or {}
    if status.get("state") != "successful":
        return False
    gen = (dgd.get("metadata") or {}).get("generation")
    for cond in status.get("conditions") or ():
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True" and cond.get("observedGeneration", gen) == gen)
    return False


async def wait_converged(
    api: Client,
    namespace: str,
    names: Iterable[str],
    *,
    timeout: float,  # noqa: ASYNC109 - a polling bound
    interval: float = 1.0,
) -> float:
    """Seconds until every named DGD in `namespace` is converged."""
    wanted = set(names)
    started = time.monotonic()

    async def pending() -> set[str]:
        dgds = await api.list(DGD, namespace=namespace)
        done = {d["metadata"]["name"] for d in dgds if is_converged(d)}
        return wanted - done

    await eventually(
        pending, lambda p: not p, timeout=timeout, interval=interval, what=f"{len(wanted)} DGDs converged"
    )
    return time.monotonic() - started


@dataclass
class InvariantReport:
    """What check_invariants() found; `problems` empty means pass."""

    dgds: int = 0
    converged: int = 0
    dcds: int = 0
    deployments: int = 0
    user_pvcs: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        verdict = "PASS" if not self.problems else "FAIL"
        return (
            f"{verdict}: every DGD converged ({self.converged}/{self.dgds}), "
            f"no duplicate or orphaned object ({self.dcds} DCDs, {self.deployments} Deployments checked), "
            f"no lost user PVC ({self.user_pvcs} kept)"
        )


def _controller_uid(obj: Mapping[str, Any]) -> str | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


async def check_invariants(
    api: Client,
    namespace: str,
    *,
    expect_converged: Iterable[str] | None = None,
    user_pvcs: Iterable[str] = (),
) -> InvariantReport:
    """Every expected DGD converged; each DGD has exactly one DCD per service and each DCD exactly one
    Deployment and Service; every operator-managed DCD/Deployment/Service has a live controller owner;
    every user PVC still exists and is not being deleted."""
    report = InvariantReport()
    dgds = await api.list(DGD, namespace=namespace)
    dcds = await api.list(DCD, namespace=namespace)
    deployments = await api.list(DEPLOYMENT, namespace=namespace)
    services = await api.list(SERVICE, namespace=namespace)
    by_uid = {o["metadata"]["uid"]: o for o in [*dgds, *dcds]}
    report.dgds, report.dcds, report.deployments = len(dgds), len(dcds), len(deployments)
    expected = {d["metadata"]["name"] for d in dgds} if expect_converged is None else set(expect_converged)
    for d in dgds:
        name = d["metadata"]["name"]
        if name in expected:
            if is_converged(d):
                report.converged += 1
            else:
                report.problems.append(f"DGD {name} not converged: {json.dumps(d.get('status'))[:300]}")
    report.dgds = len(expected)
    dcds_of: Counter[tuple[str, str]] = Counter()
    for dcd in dcds:
        owner = _controller_uid(dcd)
        if owner is None or owner not in by_uid:
            report.problems.append(f"orphaned DCD {dcd['metadata']['name']} (controller {owner})")
            continue
        service = (dcd.get("spec") or {}).get("serviceName") or dcd["metadata"]["name"]
        dcds_of[(owner, str(service))] += 1
    report.problems += [f"duplicate DCDs for {k}: {n}" for k, n in dcds_of.items() if n > 1]
    for d in dgds:
        want = len((d.get("spec") or {}).get("services") or {})
        have = sum(n for (uid, _), n in dcds_of.items() if uid == d["metadata"]["uid"])
        if d["metadata"]["name"] in expected and have != want:
            report.problems.append(f"DGD {d['metadata']['name']}: {have} DCDs for {want} services")
    for kind, objs in (("Deployment", deployments), ("Service", services)):
        per_owner: Counter[str] = Counter()
        for obj in objs:
            labels = obj["metadata"].get("labels") or {}
            owner = _controller_uid(obj)
            if owner is None and MANAGED_BY not in labels:
                continue  # not ours
            if owner is None or owner not in by_uid:
                report.problems.append(f"orphaned {kind} {obj['metadata']['name']} (controller {owner})")
                continue
            if (
                by_uid[owner]["kind"] == DCD.kind
                and obj["metadata"]["name"] == by_uid[owner]["metadata"]["name"]
            ):
                per_owner[owner] += 1
        report.problems += [f"duplicate {kind}s for DCD uid {k}: {n}" for k, n in per_owner.items() if n > 1]
    for pvc in user_pvcs:
        try:
            live = await api.get(PERSISTENT_VOLUME_CLAIM, pvc, namespace=namespace)
        except NotFound:
            report.problems.append(f"user PVC {pvc} was deleted")
            continue
        if live["metadata"].get("deletionTimestamp"):
            report.problems.append(f"user PVC {pvc} is being deleted")
        else:
            report.user_pvcs += 1
    return report


async def crds_established(api: Client) -> bool:
    crds = await api.list(CUSTOM_RESOURCE_DEFINITION)
    ours = [c for c in crds if c["metadata"]["name"].endswith("." + GROUP)]
    return len(ours) >= 5
