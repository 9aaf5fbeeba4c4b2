#!/usr/bin/env python3
"""Benchmark of the graph controllers: 100 two-service DGDs on the local control plane.

Prints, for one cluster:
- baseline: seconds until the equivalent bare Deployments (the ones the operator would generate,
  without owners) are all Ready — the physical limit of this cluster (scheduler + kwok + kcm);
- operator: seconds from the first DGD create until every DGD is Ready, and the ratio to baseline;
- API requests the operator sent per DGD, by verb and resource (from its own /metrics);
- writes during a quiet period after convergence;
- operator peak RSS and CPU seconds (the operator runs as its own process, `dynamo-operator`).
Goals: ratio <= 1.2, <= 15 writes per DGD, 0 quiet writes.

Usage: .venv/bin/python test/bench/bench_graph.py [--graphs 100] [--quiet-seconds 30] [--timeout 600]
Everything is bounded in count and time; the cluster and the operator are always stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import datetime
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO / "hack"), str(REPO / "test")]

import psutil  # noqa: E402
import write_floor as wf  # noqa: E402
from dynamo_operator.internal import kinds  # noqa: E402
from dynamo_operator.internal.client.client import Client  # noqa: E402
from dynamo_operator.internal.client.errors import NotFound, TooManyRequests  # noqa: E402
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, NAMESPACE, Resource  # noqa: E402
from dynamo_operator.internal.dynamo.common.context import GenContext  # noqa: E402
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects  # noqa: E402
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds  # noqa: E402
from dynamo_operator.internal.stored_version import speaking_v1alpha1  # noqa: E402
from localcluster import LocalCluster  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402
from testsupport.graphs import two_service_graph  # noqa: E402
from testsupport.operator import install_crds  # noqa: E402

FIELD_MANAGER = "bench"

CREATE_CONCURRENCY = 20
LOG_LEVEL = os.environ.get("BENCH_OPERATOR_LOG_LEVEL", "warning")
# --max-concurrent-reconciles of the operator under test: on a 2-core host 16 beat 8 and 32 (2.08 vs
# 2.77 and 2.37 ratio at 100 graphs); more only adds API-server contention.
WORKERS = int(os.environ.get("BENCH_OPERATOR_WORKERS", "16"))
POLL_SECONDS = 0.5
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


def graph(name: str, namespace: str) -> dict[str, Any]:
    """A two-service graph: a frontend and a worker, one replica each."""
    return two_service_graph(name, namespace)


def bare_deployments(dgd: dict[str, Any]) -> list[dict[str, Any]]:
    """The Deployments the operator would generate for `dgd`, without owners or operator stamps."""
    namespace = dgd["metadata"]["namespace"]
    ctx = GenContext(namespace=namespace)
    out = []
    for dcd in desired_dcds(dgd, ctx):
        orphan = copy.deepcopy(dcd)
        orphan["metadata"].pop("ownerReferences", None)
        for obj in desired_component_objects(orphan, ctx):
            if obj["kind"] == "Deployment":
                obj["metadata"].pop("ownerReferences", None)
                # The per-graph discovery ServiceAccount is an operator object; bare pods use `default`.
                obj["spec"]["template"]["spec"].pop("serviceAccountName", None)
                obj["metadata"].pop("annotations", None)
                out.append(obj)
    return out


async def bounded(jobs: Iterable[Callable[[], Awaitable[Any]]], limit: int = CREATE_CONCURRENCY) -> None:
    sem = asyncio.Semaphore(limit)

    async def run(job: Callable[[], Awaitable[Any]]) -> None:
        async with sem:
            await job()

    await asyncio.gather(*(run(j) for j in jobs))


async def wait_until(probe: Callable[[], Awaitable[bool]], *, timeout: float, what: str) -> float:  # noqa: ASYNC109
    """Poll until `probe()`; returns the monotonic time it first held. Raises TimeoutError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await probe():
            return time.monotonic()
        await asyncio.sleep(POLL_SECONDS)
    raise TimeoutError(f"{what} not reached within {timeout:g} s")


async def crds_serving(api: Client) -> bool:
    """The converted CRDs carry the webhook's CA and their objects can be listed again. The
    operator writes the CA into each CRD at its first start; the API server then rebuilds that
    kind's storage and refuses its requests (429, "storage is (re)initializing") for a few seconds."""
    crds = {c["metadata"]["name"]: c for c in await api.list(CUSTOM_RESOURCE_DEFINITION)}
    converted = [
        c for c in crds.values() if ((c["spec"].get("conversion") or {}).get("strategy")) == "Webhook"
    ]
    if not converted:
        return False
    for crd in converted:
        client_config = crd["spec"]["conversion"]["webhook"].get("clientConfig") or {}
        if not client_config.get("caBundle"):
            return False
        stored = next(v["name"] for v in crd["spec"]["versions"] if v["storage"])
        plural, group = crd["spec"]["names"]["plural"], crd["spec"]["group"]
        try:
            await api.list_page(Resource(group, stored, plural, crd["spec"]["names"]["kind"]), limit=1)
        except TooManyRequests:
            return False
    return True


async def make_namespace(api: Client, name: str) -> None:
    await api.apply(
        NAMESPACE,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        field_manager=FIELD_MANAGER,
    )
    sa = kinds.Resource("", "v1", "serviceaccounts", "ServiceAccount")

    async def has_default_sa() -> bool:
        try:
            await api.get(sa, "default", namespace=name)
            return True
        except NotFound:
            return False

    await wait_until(has_default_sa, timeout=60, what=f"default ServiceAccount in {name}")


async def drop_namespace(api: Client, name: str, *, timeout: float) -> None:  # noqa: ASYNC109
    with contextlib.suppress(NotFound):
        await api.delete(NAMESPACE, name)

    async def gone() -> bool:
        try:
            await api.get(NAMESPACE, name)
            return False
        except NotFound:
            return True

    with contextlib.suppress(TimeoutError):
        await wait_until(gone, timeout=timeout, what=f"namespace {name} deleted")


# A local control plane with nothing to do spends 0.01-0.04 of a core (one kwok node, measured over
# 2 s windows: node heartbeats, leases, the controllers' resyncs); a run's writes, 1.3-2.
IDLE_CORES = 0.1
IDLE_WINDOW_S = 1.0
IDLE_BOUND_S = 90.0


class ClusterCPU:
    """CPU seconds of each control-plane process: a measure of the work a phase cost the cluster that,
    unlike wall time, barely moves when other programs share the host."""

    def __init__(self, cluster: LocalCluster) -> None:
        self._procs = {name: psutil.Process(pid) for name, pid in cluster.pids().items()}

    def sample(self) -> dict[str, float]:
        out = {}
        for name, proc in self._procs.items():
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                out[name] = times.user + times.system
        return out

    @staticmethod
    def spent(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
        return {name: after[name] - before.get(name, 0.0) for name in after}

    async def wait_idle(
        self,
        *,
        idle_cores: float = IDLE_CORES,
        window: float = IDLE_WINDOW_S,
        bound: float = IDLE_BOUND_S,
    ) -> float:
        """Wait until the control plane spends under `idle_cores` over a `window` (at most `bound`
        seconds); the seconds waited. A guard, so that no run's clock starts while the cluster still
        works on the run before (e.g. the namespace it just deleted): in every run measured so far
        the control plane was already idle after the first window."""
        started = time.monotonic()
        before = self.sample()
        while True:
            await asyncio.sleep(window)
            after = self.sample()
            waited = time.monotonic() - started
            if is_idle(self.spent(after, before), window, idle_cores) or waited >= bound:
                return round(waited, 1)
            before = after


def is_idle(spent: dict[str, float], window: float, idle_cores: float) -> bool:
    """Whether CPU seconds `spent` by the control plane's processes over `window` seconds come to
    under `idle_cores` cores."""
    return sum(spent.values()) < idle_cores * window


async def baseline(
    api: Client,
    n: int,
    timeout: float,  # noqa: ASYNC109 - a polling bound
    cluster_cpu: ClusterCPU,
) -> tuple[float, dict[str, float]]:
    """Seconds until 2n bare Deployments are all Ready, and the control plane's CPU seconds until then."""
    ns = "bench-baseline"
    await make_namespace(api, ns)
    deployments = [d for i in range(n) for d in bare_deployments(graph(f"g{i:03d}", ns))]
    cpu_before = cluster_cpu.sample()
    start = time.monotonic()
    await bounded(
        lambda d=d: api.apply(kinds.DEPLOYMENT, d, field_manager=FIELD_MANAGER) for d in deployments
    )

    async def all_ready() -> bool:
        items = await api.list(kinds.DEPLOYMENT, namespace=ns)
        ready = [
            d
            for d in items
            if (d.get("status") or {}).get("readyReplicas") == (d["spec"].get("replicas") or 1)
        ]
        return len(ready) == len(deployments)

    end = await wait_until(all_ready, timeout=timeout, what="bare Deployments Ready")
    spent = ClusterCPU.spent(cluster_cpu.sample(), cpu_before)
    await drop_namespace(api, ns, timeout=timeout)
    return end - start, spent


async def write_floor(
    api: Client,
    n: int,
    timeout: float,  # noqa: ASYNC109 - a polling bound
    cluster_cpu: ClusterCPU,
    *,
    make_graph: Callable[[str, str], dict[str, Any]] = graph,
    concurrency: int = wf.DEFAULT_CONCURRENCY,
    count_served: Callable[[], Awaitable[Counter[str]]] | None = None,
    writer: Client | None = None,
    namespace: str = "bench-floor",
    wait_idle: bool = False,
    stages: Callable[[str, float], Awaitable[dict[str, tuple[float, float, int]]]] | None = None,
) -> tuple[wf.FloorFigures, dict[str, float]]:
    """The cost of the writes alone (test/bench/write_floor.py): every object the operator writes for
    `n` graphs, sent through a pool of `concurrency` writers with no controller in between, by
    `writer` (default `api`: whose identity the API server authenticates and authorizes), into
    `namespace` (created here, deleted after). Returns the floor's figures and the control plane's
    CPU seconds meanwhile; with `count_served`, the figures carry what it counted over the run (the
    namespace's deletion after it left out). With `wait_idle`, the clock starts once the control plane
    is idle (`ClusterCPU.wait_idle`; `idle_wait_s` in the figures says how long that took). With
    `stages`, `stages(namespace, wall clock at the first write)` is read before the namespace goes
    (the figures' `stages`: when each stage of the chain was reached).

    A caller running several floors gives each a namespace name never used before in the cluster:
    for 30 s after a namespace's DELETE the API server's NamespaceLifecycle admission looks the
    namespace up live (a GET through its own loopback client, to etcd) on every request into a
    namespace of that name but deletes, so a floor written into a name just deleted pays thousands
    of extra reads the operator's runs (fresh names) never do."""
    ns = namespace
    await make_namespace(api, ns)
    idle_wait = await cluster_cpu.wait_idle() if wait_idle else None
    served_before = await count_served() if count_served else Counter[str]()
    cpu_before = cluster_cpu.sample()
    manifests = [make_graph(f"g{i:05d}", ns) for i in range(n)]
    started_wall = time.time()
    fig = await wf.run_floor(writer or api, manifests, namespace=ns, timeout=timeout, concurrency=concurrency)
    spent = ClusterCPU.spent(cluster_cpu.sample(), cpu_before)
    if count_served:
        fig.served = await count_served() - served_before
    fig.idle_wait_s = idle_wait
    if stages is not None:
        fig.stages = await stages(ns, started_wall)
    await drop_namespace(api, ns, timeout=timeout)
    return fig, spent


def _ts(value: str | None) -> float | None:
    if not value:
        return None
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC).timestamp()


def _cond_time(obj: dict[str, Any], type_: str) -> float | None:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == type_ and cond.get("status") == "True":
            return _ts(cond.get("lastTransitionTime"))
    return None


async def breakdown(api: Client, ns: str) -> dict[str, float]:
    """Median seconds (1 s timestamp resolution) spent in each hop of the chain, over all components."""
    dgds = {d["metadata"]["name"]: d for d in await api.list(kinds.DGD, namespace=ns)}
    dcds = {d["metadata"]["name"]: d for d in await api.list(kinds.DCD, namespace=ns)}
    deps = {d["metadata"]["name"]: d for d in await api.list(kinds.DEPLOYMENT, namespace=ns)}
    hops: dict[str, list[float]] = {
        "DGD created -> DCD created": [],
        "DCD created -> Deployment created": [],
        "Deployment created -> Deployment Available": [],
        "Deployment Available -> DCD Available": [],
        "last DCD Available -> DGD Ready": [],
    }
    for name, dcd in dcds.items():
        graph_name = (dcd["metadata"].get("labels") or {}).get("nvidia.com/dynamo-graph-deployment-name", "")
        dgd, dep = dgds.get(graph_name), deps.get(name)
        if dgd is None or dep is None:
            continue
        points = [
            _ts(dgd["metadata"]["creationTimestamp"]),
            _ts(dcd["metadata"]["creationTimestamp"]),
            _ts(dep["metadata"]["creationTimestamp"]),
            _cond_time(dep, "Available"),
            _cond_time(dcd, "Available"),
        ]
        for (_label, values), a, b in zip(list(hops.items())[:4], points, points[1:], strict=False):
            if a is not None and b is not None:
                values.append(b - a)
    for dgd in dgds.values():
        owned = [
            d
            for d in dcds.values()
            if any(r.get("uid") == dgd["metadata"]["uid"] for r in d["metadata"].get("ownerReferences") or ())
        ]
        last = max((t for d in owned if (t := _cond_time(d, "Available")) is not None), default=None)
        ready = _cond_time(dgd, "Ready")
        if last is not None and ready is not None:
            hops["last DCD Available -> DGD Ready"].append(ready - last)
    return {k: statistics.median(v) for k, v in hops.items() if v}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> dict[tuple[str, str], float]:
    """rest_client_requests_total of the operator, summed by (method, resource)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        if family.name != "rest_client_requests":
            continue
        for sample in family.samples:
            if sample.name.endswith("_total"):
                key = (sample.labels["method"], sample.labels["resource"])
                out[key] = out.get(key, 0.0) + sample.value
    return out


def diff(
    after: dict[tuple[str, str], float], before: dict[tuple[str, str], float]
) -> dict[tuple[str, str], float]:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0)}


def latencies(port: int) -> dict[str, tuple[float, float]]:
    """(count, mean seconds) of reconciles per controller, queue waits, and requests per verb."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    sums: dict[str, list[float]] = {}
    wanted = {
        "controller_runtime_reconcile_time_seconds": "controller",
        "workqueue_queue_duration_seconds": "name",
        "rest_client_request_duration_seconds": "verb",
    }
    for family in text_string_to_metric_families(text):
        label = wanted.get(family.name)
        if label is None:
            continue
        for sample in family.samples:
            if sample.name.endswith(("_sum", "_count")):
                key = f"{family.name.split('_')[0]} {sample.labels.get(label, '')}"
                entry = sums.setdefault(key, [0.0, 0.0])
                entry[0 if sample.name.endswith("_count") else 1] += sample.value
    return {k: (c, t / c) for k, (c, t) in sums.items() if c}


def writes(counts: dict[tuple[str, str], float], *, events: bool = True) -> float:
    return sum(v for (m, r), v in counts.items() if m in WRITE_VERBS and (events or r != "events"))


class Sampler:
    """Peak RSS of a process, sampled in the background."""

    def __init__(self, proc: psutil.Process) -> None:
        self.proc, self.peak = proc, 0

    async def run(self) -> None:
        while True:
            with contextlib.suppress(psutil.Error):
                self.peak = max(self.peak, self.proc.memory_info().rss)
            await asyncio.sleep(0.2)


async def operator_run(
    api: Client,
    kubeconfig: str,
    n: int,
    *,
    quiet_seconds: float,
    timeout: float,  # noqa: ASYNC109 - a polling bound
    profile: str | None = None,
    cluster_cpu: ClusterCPU | None = None,
) -> dict[str, Any]:
    ns = "bench-graphs"
    await make_namespace(api, ns)
    metrics_port, probe_port = free_port(), free_port()
    log_path = REPO / "build" / "bench-operator.log"
    python = str(REPO / ".venv" / "bin" / "python")
    launcher = (
        [python, "-m", "cProfile", "-o", profile, "-m", "dynamo_operator"]
        if profile
        else [python, "-m", "dynamo_operator"]
    )
    proc = await asyncio.create_subprocess_exec(
        *launcher,
        f"--kubeconfig={kubeconfig}",
        "--metrics-secure=false",  # plain HTTP on loopback: scraped without a token
        f"--metrics-bind-address=127.0.0.1:{metrics_port}",
        f"--health-probe-bind-address=127.0.0.1:{probe_port}",
        f"--max-concurrent-reconciles={WORKERS}",
        f"--log-level={LOG_LEVEL}",
        stdout=await asyncio.to_thread(log_path.open, "w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
    )
    sampler = Sampler(psutil.Process(proc.pid))
    sampling = asyncio.create_task(sampler.run())
    try:

        def readyz() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{probe_port}/readyz", timeout=2) as r:
                return bool(r.status == 200)

        async def operator_ready() -> bool:
            try:
                return await asyncio.to_thread(readyz)
            except OSError:
                if proc.returncode is not None:
                    raise RuntimeError(
                        f"operator exited with {proc.returncode}; see build/bench-operator.log"
                    ) from None
                return False

        await wait_until(operator_ready, timeout=120, what="operator ready")
        await wait_until(lambda: crds_serving(api), timeout=120, what="CRDs serving, the webhook's CA in")
        before = await asyncio.to_thread(scrape, metrics_port)
        cpu_before = cluster_cpu.sample() if cluster_cpu else {}
        dgds = [graph(f"g{i:03d}", ns) for i in range(n)]
        start = time.monotonic()
        await bounded(lambda d=d: api.apply(kinds.DGD, d, field_manager=FIELD_MANAGER) for d in dgds)

        async def all_ready() -> bool:
            items = await api.list(kinds.DGD, namespace=ns)
            ready = [d for d in items if (d.get("status") or {}).get("state") == "successful"]
            return len(ready) == n

        end = await wait_until(all_ready, timeout=timeout, what="DGDs Ready")
        cluster_spent = ClusterCPU.spent(cluster_cpu.sample(), cpu_before) if cluster_cpu else {}
        stages = await breakdown(api, ns)
        timings = await asyncio.to_thread(latencies, metrics_port)
        converged = await asyncio.to_thread(scrape, metrics_port)
        # Let in-flight status writes and Events land, then measure a quiet period.
        settle_deadline = time.monotonic() + 60
        last = writes(await asyncio.to_thread(scrape, metrics_port))
        while time.monotonic() < settle_deadline:
            await asyncio.sleep(3)
            now = writes(await asyncio.to_thread(scrape, metrics_port))
            if now == last:
                break
            last = now
        settled = await asyncio.to_thread(scrape, metrics_port)
        await asyncio.sleep(quiet_seconds)
        quiet = diff(await asyncio.to_thread(scrape, metrics_port), settled)
        cpu = psutil.Process(proc.pid).cpu_times()
        return {
            "seconds": end - start,
            "per_dgd": {k: v / n for k, v in diff(settled, before).items()},
            "until_ready": diff(converged, before),
            "quiet_writes": writes(quiet),
            "quiet": quiet,
            "peak_rss_mib": sampler.peak / 2**20,
            "cpu_seconds": cpu.user + cpu.system,
            "stages": stages,
            "cluster_cpu": cluster_spent,
            "timings": timings,
        }
    finally:
        sampling.cancel()
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 40)
        except TimeoutError:
            proc.kill()


async def main(args: argparse.Namespace) -> int:
    (REPO / "build").mkdir(exist_ok=True)
    cluster = LocalCluster(f"bench-{os.getpid()}", owner_pid=os.getpid())
    try:
        cluster.up()
        api = await Client.from_kubeconfig(
            cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        )
        try:
            await install_crds(api)
            cpu = ClusterCPU(cluster)
            base, base_cpu = await baseline(api, args.graphs, args.timeout, cpu)
            floor_fig, floor_cpu = await write_floor(api, args.graphs, args.timeout, cpu)
            op = await operator_run(
                api,
                cluster.kubeconfig,
                args.graphs,
                quiet_seconds=args.quiet_seconds,
                timeout=args.timeout,
                profile=args.profile,
                cluster_cpu=cpu,
            )
        finally:
            await api.close()
    finally:
        cluster.down()
    per_dgd = op["per_dgd"]
    print(f"graphs: {args.graphs} two-service DGDs ({2 * args.graphs} Deployments)")
    print(f"baseline (bare Deployments Ready): {base:.1f} s")
    ratio = op["seconds"] / base
    print(f"operator (all DGDs Ready):         {op['seconds']:.1f} s  ratio {ratio:.2f} (goal <= 1.2)")
    floor = floor_fig.seconds
    print(
        f"write floor (a client writes what the operator writes, no controller): {floor:.1f} s, "
        f"ratio {floor / base:.2f}, {floor_fig.total_writes / args.graphs:.1f} writes per graph, "
        f"{floor_fig.writes_per_second:.0f} writes/s through {floor_fig.concurrency} writers"
    )
    print(f"operator / write floor: {op['seconds'] / floor:.2f}")
    with_events, without = writes(per_dgd), writes(per_dgd, events=False)
    print(f"writes per DGD: {with_events:.1f} incl. Events, {without:.1f} without (goal <= 15)")
    print("requests per DGD by verb and resource:")
    for (method, resource), value in sorted(per_dgd.items()):
        print(f"  {method:6} {resource:45} {value:6.2f}")
    quiet = f"{op['quiet_writes']:.0f} (goal 0) {op['quiet'] or ''}"
    print(f"quiet period ({args.quiet_seconds:g} s) writes: {quiet}")
    print(f"operator: {WORKERS} workers per controller")
    for stage, seconds in op["stages"].items():
        print(f"  median {stage:45} {seconds:5.1f} s")
    for key, (count, mean) in sorted(op["timings"].items()):
        print(f"  {key:60} n={count:6.0f} mean {mean * 1000:7.1f} ms")
    print("control-plane CPU seconds until all Ready (baseline / write floor / operator):")
    for name in sorted(base_cpu):
        print(
            f"  {name:45} {base_cpu[name]:6.1f} / {floor_cpu.get(name, 0.0):6.1f}"
            f" / {op['cluster_cpu'].get(name, 0.0):6.1f}"
        )
    print(f"operator peak RSS: {op['peak_rss_mib']:.0f} MiB, CPU: {op['cpu_seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=100)
    parser.add_argument("--quiet-seconds", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="bound of each wait, seconds")
    parser.add_argument("--profile", help="write a cProfile of the operator process to this path")
    sys.exit(asyncio.run(main(parser.parse_args())))
