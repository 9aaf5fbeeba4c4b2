#!/usr/bin/env python3
"""Scale benchmark: N three-service DGDs (frontend, decode, prefill: 3·N components) on a fresh local
control plane, with the operator deployed from config/default and run as its own process.

For each N of --graphs (default 100,300,1000; each on its own cluster) it prints:
- baseline: seconds until 3·N bare Deployments (same pod template, no operator) are all available —
  the physical limit of this cluster (scheduler + kwok + kcm on this machine);
- floor: the same cluster's cost of the operator's writes alone — a bench client writes every object
  the operator writes for N graphs (DGDs, RBAC, DCDs, Deployments, Services, Events, statuses)
  through a pool of concurrent writers, with no controller in between, each graph's statuses as soon
  as its Deployments are available (test/bench/write_floor.py); its writes/s is what the API server
  accepted. The writer is the operator's own ServiceAccount (--floor-as), so the API server
  authorizes the same writes the same way (RBAC, and its escalation checks on Roles and
  RoleBindings, which the cluster admin skips); `--floor-as operator,admin` adds an admin floor;
- operator: seconds from the first DGD create until every DGD is Ready, and its ratio to the floor
  (the goal: <= 1.1 at 100, <= 1.2 at 1,000) and to the baseline;
- writes per DGD by verb, resource and code, next to the floor's by kind;
- memory breakdown: bytes per cached object by kind (test/bench/cache_memory.py);
- operator peak RSS (VmHWM) and CPU seconds; API requests by verb, in total and per DGD;
- writes in a quiet period after convergence (goal 0);
- restart: a new operator process replacing the old one — seconds to caches synced (/readyz), to
  quiet (no write for --settle seconds), and the writes it made although nothing changed (goal 0).

Levers are compared on one cluster: each --variant NAME=FLAGS is an operator run with those flags
(its graphs in a namespace of their own, deleted before the next run), and --repeat R runs R rounds
of (floor, every variant), since the host is shared and one run's figure is noisy (every other round
runs the variants in reverse order, and its variants before its floor, so that neither the floor nor
any variant always runs on the cluster as another run left it). Every run is printed;
memory, quiet and restart figures come from the last run (--skip leaves phases out).

At the end, one growth table: a row per size (time, ratios, memory, CPU, writes per graph). Its
op/floor is the best operator run over the fastest floor; `med. pair` the median over rounds of each
operator run against its own round's floor, two rounds of opposite order taken together
(`balanced_median`: the steadier figure once --repeat is 4 or more, and even); `90% of med` the
range that holds the median of such pairs with 90 % confidence (`median_interval`; from 5 pairs, i.e.
--repeat 10, on); `med. adm` the same against the admin's floor, when one ran.

Usage: .venv/bin/python test/bench/bench_scale.py [--graphs 100,300,1000] [--timeout 1800]
         [--variant w16=--max-concurrent-reconciles=16 ...] [--repeat 2] [--skip baseline,restart]
Bounded: --timeout per size; the cluster and operators are always stopped. Sizes run in order and
the first one that does not finish in its bound stops the run (the figures so far are printed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import functools
import math
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(Path(__file__).resolve().parent), str(REPO / "hack"), str(REPO / "hack" / "faults")]

import apiserver_metrics as am  # noqa: E402
import bench_graph as bg  # noqa: E402
import cache_memory  # noqa: E402
import harness as h  # noqa: E402
import write_floor as wf  # noqa: E402
from dynamo_operator import eventloop  # noqa: E402
from dynamo_operator.internal import kinds  # noqa: E402
from dynamo_operator.internal.client.client import Client  # noqa: E402
from dynamo_operator.internal.client.resource import DEPLOYMENT, LEASE, NAMESPACE  # noqa: E402
from dynamo_operator.internal.stored_version import speaking_v1alpha1  # noqa: E402

NS = "bench"
BASELINE_NS = "baseline"
SERVICES = 3
CREATE_CONCURRENCY = 24
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE")


# Who writes the floor (--floor-as).
OPERATOR_SA, ADMIN = "operator", "admin"
IDENTITY_NAMES = {OPERATOR_SA: "the operator's ServiceAccount", ADMIN: "the cluster admin"}


def bare_deployment(name: str, namespace: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": h.IMAGE}]},
            },
        },
    }


def available(dep: dict[str, Any]) -> bool:
    status = dep.get("status") or {}
    return bool(
        status.get("availableReplicas") == 1
        and status.get("observedGeneration") == dep["metadata"]["generation"]
    )


async def count_until(
    api: Client,
    resource: Any,
    namespace: str,
    want: int,
    ok: Any,
    *,
    timeout: float,  # noqa: ASYNC109
) -> float:
    started = time.monotonic()
    await h.eventually(
        lambda: api.list(resource, namespace=namespace),
        lambda items: sum(1 for i in items if ok(i)) >= want,
        timeout=timeout,
        interval=2.0,
        what=f"{want} {resource.plural} ready",
    )
    return time.monotonic() - started


LEASES = "leases.coordination.k8s.io"


def writes(samples: list[tuple[str, dict[str, str], float]]) -> float:
    """Writes to anything but the leader Lease (renewed every retry period by design)."""
    return sum(
        v
        for n, labels, v in samples
        if n == "rest_client_requests_total"
        and labels.get("method") in WRITE_VERBS
        and labels.get("resource") != LEASES
    )


def write_delta(
    before: list[tuple[str, dict[str, str], float]], after: list[tuple[str, dict[str, str], float]]
) -> dict[str, float]:
    """Writes between two scrapes, by `METHOD resource code` (leases left out)."""

    def table(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, float]:
        return {
            f"{labels['method']} {labels['resource']} {labels['code']}": v
            for n, labels, v in samples
            if n == "rest_client_requests_total"
            and labels.get("method") in WRITE_VERBS
            and labels.get("resource") != LEASES
        }

    old, new = table(before), table(after)
    return {k: v - old.get(k, 0.0) for k, v in new.items() if v - old.get(k, 0.0)}


LATENCY_METRICS = {
    "controller_runtime_reconcile_time_seconds": "controller",
    "workqueue_queue_duration_seconds": "name",
    "workqueue_work_duration_seconds": "name",
    "rest_client_request_duration_seconds": "verb",
}


def latencies(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, str]:
    """Where the operator's wall time goes: count and mean of reconciles per controller, of queue
    waits and work per queue, and of requests per verb (the operator is latency-bound, so these
    say more than a CPU profile)."""
    sums: dict[str, list[float]] = {}
    for name, labels, value in samples:
        family, _, part = name.rpartition("_")
        label = LATENCY_METRICS.get(family)
        if label is None or part not in ("sum", "count"):
            continue
        key = f"{family.removesuffix('_seconds')} {labels.get(label, '')}"
        entry = sums.setdefault(key, [0.0, 0.0])
        entry[0 if part == "count" else 1] += value
    return {k: f"n={c:.0f} mean={1000 * t / c:.1f}ms" for k, (c, t) in sorted(sums.items()) if c}


def gc_pauses(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, float]:
    """Seconds the operator's garbage collector has run so far, by generation."""
    return {
        labels.get("generation", ""): v for n, labels, v in samples if n == "python_gc_pause_seconds_total"
    }


def by_verb_without_leases(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n, labels, v in samples:
        if n == "rest_client_requests_total" and labels.get("resource") != LEASES:
            out[labels["method"]] = out.get(labels["method"], 0) + int(v)
    return dict(sorted(out.items()))


async def wait_quiet(op: h.OperatorProcess, *, settle: float, timeout: float) -> tuple[float, float]:  # noqa: ASYNC109
    """Seconds from now until the operator's writes stopped moving for `settle` s, and writes meanwhile."""
    started = time.monotonic()
    first = last = writes(op.metrics())
    since = time.monotonic()
    while time.monotonic() - started < timeout:
        await asyncio.sleep(1.0)
        now = writes(op.metrics())
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= settle:
            return since - started, last - first
    raise TimeoutError(f"operator did not go quiet within {timeout} s")


@dataclass(frozen=True)
class Variant:
    """One way of running the operator (a lever setting); its flags follow the defaults."""

    name: str
    args: tuple[str, ...] = ()

    @staticmethod
    def parse(text: str) -> Variant:
        """`NAME=--flag=value --other` (or just `NAME` for the defaults)."""
        name, _, args = text.partition("=")
        return Variant(name, tuple(args.split()))


DEFAULT_VARIANT = Variant("default")


async def drop_namespace(api: Client, name: str, *, timeout: float) -> None:  # noqa: ASYNC109
    """Delete `name` and wait until it is gone, so its garbage collection is billed to no phase."""
    with contextlib.suppress(Exception):
        await api.delete(NAMESPACE, name)
    await h.eventually(
        lambda: api.list(NAMESPACE), lambda nss: not any(
            n["metadata"]["name"] == name for n in nss
        ), timeout=timeout, interval=2.0, what=f"namespace {name} gone",
    )  # fmt: skip


MILESTONES = (
    ("DCD created", kinds.DCD, None),
    ("Deployment created", DEPLOYMENT, None),
    ("Deployment Available", DEPLOYMENT, "Available"),
    ("DCD Available", kinds.DCD, "Available"),
    ("DGD Ready", kinds.DGD, "Ready"),
)


async def timeline(api: Client, namespace: str, started_wall: float) -> dict[str, tuple[float, float, int]]:
    """When (seconds after the first DGD create, 1 s resolution) half and all of the objects of each
    stage reached it: where the run's time went, stage by stage."""
    out = {}
    for label, resource, condition in MILESTONES:
        items = await api.list(resource, namespace=namespace)
        stamps = sorted(
            t - started_wall
            for i in items
            if (
                t := bg._ts(i["metadata"].get("creationTimestamp"))
                if condition is None
                else bg._cond_time(i, condition)
            )
            is not None
        )
        if stamps:
            out[label] = (stamps[len(stamps) // 2], stamps[-1], len(stamps))
    return out


async def all_found(
    wanted: set[str],
    found: set[str],
    changed: asyncio.Event,
    watching: asyncio.Task[None],
    *,
    timeout: float,  # noqa: ASYNC109 - a bound on the wait
) -> None:
    """Wait until `wanted` <= `found` (kept by `write_floor.track`, which sets `changed`); a failed
    watch fails the wait."""
    async with asyncio.timeout(timeout):
        while not wanted <= found:
            if watching.done():
                watching.result()
                raise RuntimeError("the watch ended")
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), 1.0)


async def operator_phase(
    api: Client,
    cluster: Any,
    workdir: Path,
    n: int,
    *,
    variant: Variant,
    namespace: str,
    timeout: float,  # noqa: ASYNC109
    last: bool,
    skip: set[str],
    settle: float,
    quiet_window: float,
    ops: list[h.OperatorProcess],
    cluster_cpu: bg.ClusterCPU,
    profile: Callable[[], asyncio.Task[None] | None] = lambda: None,
) -> dict[str, Any]:
    """N graphs under one operator process; with `last`, also memory, quiet and restart figures."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(30.0, deadline - time.monotonic())

    fig: dict[str, Any] = {"details_of_run": variant.name}
    await h.ensure_namespace(api, namespace)
    await asyncio.sleep(3)  # the namespace's default ServiceAccount
    op_kubeconfig = h.operator_kubeconfig(cluster, workdir / "operator.kubeconfig")
    # The operator's defaults unless the variant says otherwise.
    args = ("--log-level=warning", *variant.args)
    op = h.OperatorProcess(op_kubeconfig, workdir / f"operator-{len(ops)}.log", extra_args=args).start()
    ops.append(op)
    op.wait_ready(timeout=120)
    await h.eventually(
        lambda: bg.crds_serving(api), bool, timeout=120, what="CRDs serving with the webhook's CA"
    )
    h.say(f"N={n} [{variant.name}]: operator ready; creating {n} DGDs")
    graphs = [f"g{i:05d}" for i in range(n)]
    converged: set[str] = set()
    changed = asyncio.Event()
    # Watched, as the floor watches its Deployments: a LIST of every DGD per poll loaded the API
    # server the operator shares (at 1,000 graphs more than the operator's own requests did).
    watching = asyncio.create_task(
        wf.track(api, h.DGD, namespace, h.is_converged, found=converged, changed=changed)
    )
    profiling = None
    try:
        # As the floor's: the clock starts on an idle control plane (`ClusterCPU.wait_idle`).
        fig["idle_wait_s"] = await cluster_cpu.wait_idle()
        # Every "before" sample is taken before the clock starts, as the floor's are: parsing the API
        # server's /metrics (megabytes of text) kept the bench's event loop busy for 1-2 s, and inside
        # the clock that was time in which no graph had been created yet (up to a tenth of a
        # 100-graph run, charged to the operator alone).
        sampling = time.monotonic()
        served_before = await am.apiserver_served(api)
        gc_before = gc_pauses(op.metrics())
        fig["sampling_s"] = round(time.monotonic() - sampling, 1)
        cpu_before, op_cpu_before = cluster_cpu.sample(), op.cpu_seconds()
        profiling = profile()
        t0, t0_wall = time.monotonic(), time.time()
        await h.bounded_gather(
            (api.create(h.DGD, three_service_graph(g, namespace)) for g in graphs), limit=CREATE_CONCURRENCY
        )
        fig["create_s"] = round(time.monotonic() - t0, 1)
        await all_found(set(graphs), converged, changed, watching, timeout=left())
        fig["operator_s"] = round(time.monotonic() - t0, 1)
        # What the operator spent on the graphs alone (start-up and the quiet window aside): the
        # figure to hold against the floor client's CPU.
        fig["run_cpu_s"] = round(op.cpu_seconds() - op_cpu_before, 1)
        gc_run = {g: s - gc_before.get(g, 0.0) for g, s in gc_pauses(op.metrics()).items()}
        fig["run_gc_s"] = round(sum(gc_run.values()), 2)
        fig["run_gc_s_by_generation"] = {g: round(s, 2) for g, s in sorted(gc_run.items())}
    finally:
        watching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watching
        await finish(profiling)
    fig["control_plane_cpu"] = bg.ClusterCPU.spent(cluster_cpu.sample(), cpu_before)
    fig["served"] = am.per_graph(await am.apiserver_served(api) - served_before, n)
    h.say(f"N={n} [{variant.name}]: all Ready in {fig['operator_s']} s")
    probe_heap(op)
    at_ready = writes(op.metrics())
    if "quiet" not in skip:
        # Events go out through background senders and trail the status writes: let them land
        # before judging quiet, and report how long that took.
        settled_at, _ = await wait_quiet(op, settle=settle, timeout=left())
        fig["settle_after_ready_s"] = round(settled_at, 1)
    samples = op.metrics()
    fig["writes_after_ready"] = writes(samples) - at_ready
    by_verb = by_verb_without_leases(samples)
    fig["requests_by_verb"] = by_verb  # the leader Lease renewals left out
    fig["requests_per_dgd"] = {k: round(v / n, 1) for k, v in sorted(by_verb.items())}
    fig["writes_per_dgd"] = round(writes(samples) / n, 1)
    fig["writes_per_dgd_by"] = {k: round(v / n, 2) for k, v in sorted(write_delta([], samples).items())}
    fig["rss_peak_mb"] = round(op.peak_rss_mb(), 1)
    fig["cpu_s"] = round(op.cpu_seconds(), 1)
    fig["latency"] = latencies(samples)
    fig["timeline"] = await timeline(api, namespace, t0_wall)
    if last and "memory" not in skip:
        fig["memory"] = await cache_memory.breakdown(api, namespace)
    if last and "quiet" not in skip:
        # Quiet: nothing changes, so nothing should be written.
        before_samples = op.metrics()
        before = writes(before_samples)
        await asyncio.sleep(quiet_window)
        after_samples = op.metrics()
        fig["quiet_writes"] = writes(after_samples) - before
        fig["quiet_writes_by"] = write_delta(before_samples, after_samples)
        fig["quiet_window_s"] = quiet_window
        probe_heap(op)
    if last and "restart" not in skip:
        # Restart: a fresh process must sync its caches and go quiet without writing anything.
        op.stop(timeout=60)
        op = h.OperatorProcess(op_kubeconfig, workdir / f"operator-{len(ops)}.log", extra_args=args)
        t0 = time.monotonic()
        op.start()
        ops.append(op)
        fig["restart_ready_s"] = round(op.wait_ready(timeout=left()), 1)
        called = time.monotonic() - t0
        quiet_at, restart_writes = await wait_quiet(op, settle=settle, timeout=left())
        # From process start until its last write (or until synced, when it wrote nothing).
        fig["restart_quiet_s"] = round(called + quiet_at, 1)
        fig["restart_writes"] = restart_writes
        fig["restart_reconciles"] = h.metric_sum(op.metrics(), "controller_runtime_reconcile_total")
        fig["restart_rss_peak_mb"] = round(op.peak_rss_mb(), 1)
        fig["restart_cpu_s"] = round(op.cpu_seconds(), 1)
        fig["rbac_denials"] = h.forbidden_requests(op.metrics()) or 0
    if not last:
        # The next run starts from an empty namespace; the operator stays up while its graphs go.
        await drop_namespace(api, namespace, timeout=left())
        op.stop(timeout=60)
    return fig


def profile_apiserver(api: Client, where: Path | None, name: str, n: int) -> asyncio.Task[None] | None:
    """With `where`, a task that profiles the API server's CPU over the run about to start (0.1 s per
    graph, 10 s at least: the first creates through the busiest part) into `where/apiserver-<name>.pprof`."""
    if where is None:
        return None
    where.mkdir(parents=True, exist_ok=True)
    return asyncio.create_task(am.cpu_profile(api, max(10, n // 10), where / f"apiserver-{name}.pprof"))


async def finish(task: asyncio.Task[None] | None) -> None:
    """Wait for a profile still being taken; a failed one is reported, never fails the run."""
    if task is None:
        return
    try:
        await task
    except Exception as err:  # an instrument must not end the benchmark
        h.say(f"API server profile failed: {type(err).__name__}: {err}")


STANDBY_LEASE = "bench-standby"
"""The Lease a standby operator waits on: the bench holds it for an hour, so the operator never leads."""


async def start_standby(
    api: Client,
    cluster: Any,
    workdir: Path,
    ops: list[h.OperatorProcess],
    variant: Variant,
    *,
    timeout: float,  # noqa: ASYNC109
) -> h.OperatorProcess:
    """An operator whose caches sync and whose informers run while another identity holds its Lease."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": STANDBY_LEASE, "namespace": h.OPERATOR_NAMESPACE},
        "spec": {
            "holderIdentity": "bench-scale",
            "leaseDurationSeconds": 3600,
            "acquireTime": now,
            "renewTime": now,
        },
    }
    with contextlib.suppress(Exception):
        await api.delete(LEASE, STANDBY_LEASE, namespace=h.OPERATOR_NAMESPACE)
    await api.create(LEASE, lease)
    op_kubeconfig = h.operator_kubeconfig(cluster, workdir / "operator.kubeconfig")
    args = ("--log-level=warning", f"--leader-election-id={STANDBY_LEASE}", *variant.args)
    op = h.OperatorProcess(op_kubeconfig, workdir / f"operator-{len(ops)}.log", extra_args=args).start()
    ops.append(op)
    op.wait_ready(timeout=min(timeout, 120))
    return op


async def one_size(
    n: int,
    *,
    timeout: float,  # noqa: ASYNC109
    settle: float,
    quiet_window: float,
    variants: list[Variant],
    repeat: int,
    skip: set[str],
    floor_concurrency: list[int],
    standbys: list[Variant] | None = None,
    profile_dir: Path | None = None,
    floor_identities: Sequence[str] = (OPERATOR_SA,),
) -> dict[str, Any]:
    """One cluster for size `n`: baseline, then `repeat` rounds of (floor, each variant), every other
    round (counted back from the last) the variants first."""
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(30.0, deadline - time.monotonic())

    fig: dict[str, Any] = {"graphs": n, "components": 3 * n}
    workdir = Path(tempfile.mkdtemp(prefix=f"dynamo-bench-scale-{n}-"))
    nodes = max(4, (6 * n) // 900 + 1)  # pods per node is capped at 1000
    h.say(f"N={n}: local control plane with {nodes} nodes (work dir {workdir})")
    cluster = h.start_cluster(f"bench-scale-{n}-{os.getpid()}", nodes=nodes)
    ops: list[h.OperatorProcess] = []
    runs: list[dict[str, Any]] = []
    fig["runs"] = runs
    try:
        api = await Client.from_kubeconfig(
            cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        )
        writers_as: dict[str, Client] = {ADMIN: api}  # the floor's writer per identity
        try:
            if "baseline" not in skip:
                fig["baseline_s"] = await baseline(api, n, timeout=left())
                h.say(f"N={n}: baseline {fig['baseline_s']} s")
            # CRDs installed, the in-cluster operator scaled to 0: nothing reconciles the floor's objects.
            h.deploy_default(cluster.kubeconfig)
            cpu = bg.ClusterCPU(cluster)
            if OPERATOR_SA in floor_identities:
                writers_as[OPERATOR_SA] = await Client.from_kubeconfig(
                    h.operator_kubeconfig(cluster, workdir / "floor.kubeconfig"),
                    codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR),
                )

            async def write_floors(r: int) -> RoundFloors:
                """Round `r`'s floors (every writer count as every identity, then with standbys)."""
                floors = RoundFloors()
                plan = floor_plan(floor_concurrency, floor_identities, standbys or [], r)
                for k, (writers, with_standby, identity) in enumerate([] if "floor" in skip else plan):
                    h.say(
                        f"N={n}: write floor #{r + 1}, {writers} writers as {IDENTITY_NAMES[identity]}:"
                        " the operator's writes, no operator"
                        + (
                            f" reconciling (standby operator {with_standby.name} attached)"
                            if with_standby
                            else ""
                        )
                    )
                    standby = (
                        await start_standby(api, cluster, workdir, ops, with_standby, timeout=left())
                        if with_standby
                        else None
                    )
                    standby_cpu = standby.cpu_seconds() if standby is not None else 0.0
                    label = floor_label(identity, floor_identities[0], with_standby)
                    profiling = profile_apiserver(api, profile_dir, f"{label}-{writers}-r{r + 1}", n)
                    try:
                        floor, floor_cpu = await bg.write_floor(
                            api, n, left(), cpu, make_graph=three_service_graph, concurrency=writers,
                            count_served=lambda: am.apiserver_served(api), writer=writers_as[identity],
                            namespace=floor_namespace(r, k), wait_idle=True,
                            stages=functools.partial(timeline, api),
                        )  # fmt: skip
                        if standby is not None:
                            standby_cpu = standby.cpu_seconds() - standby_cpu
                            h.say(
                                f"N={n}: the standby operator spent {standby_cpu:.1f} CPU s meanwhile;"
                                f" its requests since it started: {by_verb_without_leases(standby.metrics())}"
                            )
                    finally:
                        if standby is not None:
                            standby.stop(timeout=60)
                        await finish(profiling)
                    served = am.per_graph(floor.served, n)
                    if identity != floor_identities[0]:  # the admin's, beside the operator's
                        floors.admin.append(floor.seconds)
                    elif with_standby is None:
                        floors.plain.append(floor.seconds)
                    elif standbys and with_standby == standbys[0]:
                        floors.watched.append(floor.seconds)
                    runs.append({
                        "run": f"{label}/{writers}",
                        "round": r + 1,
                        "seconds": round(floor.seconds, 1),
                        "write_phase_s": round(floor.write_phase_s, 1),
                        "writes_per_s": round(floor.writes_per_second),
                        "writes_per_dgd": floor.total_writes / n,
                        "cpu_s": round(floor.client_cpu_s, 1),
                        **control_plane_cpu(floor_cpu),
                        "idle_wait_s": floor.idle_wait_s,
                        "served": served,
                        "stages": floor.stages,
                    })  # fmt: skip
                    fig.setdefault("floor_writes_by", dict(sorted(floor.writes.items())))
                    h.say(f"N={n}: floor {floor.seconds:.1f} s ({floor.writes_per_second:.0f} writes/s)")
                return floors

            async def run_variants(r: int) -> list[dict[str, Any]]:
                """Round `r`'s operator runs, one per variant; their rows, ratios to come."""
                rows: list[dict[str, Any]] = []
                order = run_order(len(variants), r, repeat)
                for place, i in enumerate(order):
                    variant = variants[i]
                    last = r == repeat - 1 and place == len(order) - 1
                    op_fig = await operator_phase(
                        api, cluster, workdir, n, variant=variant, namespace=operator_namespace(r, i),
                        timeout=left(), last=last, skip=skip, settle=settle,
                        quiet_window=quiet_window, ops=ops, cluster_cpu=cpu,
                        profile=functools.partial(
                            profile_apiserver, api, profile_dir, f"{variant.name}-r{r + 1}", n
                        ),
                    )  # fmt: skip
                    rows.append({
                        "run": variant.name, "round": r + 1, "seconds": op_fig["operator_s"],
                        "writes_per_dgd": op_fig["writes_per_dgd"],
                        "cpu_s": op_fig["run_cpu_s"], "gc_s": op_fig["run_gc_s"],
                        "rss_peak_mb": op_fig["rss_peak_mb"],
                        **control_plane_cpu(op_fig["control_plane_cpu"]),
                        "idle_wait_s": op_fig["idle_wait_s"],
                        "served": op_fig["served"],
                        "stages": op_fig["timeline"],
                    })  # fmt: skip
                    runs.append(rows[-1])
                    if last:
                        fig.update(op_fig)
                return rows

            for r in range(repeat):
                if floors_first(r, repeat):
                    floors = await write_floors(r)
                    rows = await run_variants(r)
                else:
                    rows = await run_variants(r)
                    floors = await write_floors(r)
                for row in rows:
                    row.update(floor_ratios(row["seconds"], floors.plain, floors.watched, admin=floors.admin))
            floor_runs = [x for x in runs if x["run"].startswith("floor/")]
            # The floor is a lower bound: its fastest run; the operator's is its first variant's best.
            first = [x["seconds"] for x in runs if x["run"] == variants[0].name]
            fig["operator_s"] = min(first)
            if floor_runs:
                fig["floor_s"] = min(x["seconds"] for x in floor_runs)
                fig["floor_writes_per_s"] = max(x["writes_per_s"] for x in floor_runs)
                fig["ratio_to_floor"] = round(fig["operator_s"] / fig["floor_s"], 2)
                # Each round's operator run against that round's floor: the host's drift between
                # rounds cancels, and so, over two rounds of opposite order, does the order's.
                paired = [x["to_floor"] for x in runs if x["run"] == variants[0].name]
                fig["paired_ratio_median"] = balanced_median(paired)
                pairs = balanced_values(paired)
                fig["paired_ratios"] = [round(v, 2) for v in pairs]
                if (interval := median_interval(pairs)) is not None:
                    fig["paired_ratio_interval"] = f"{interval[0]:.2f}-{interval[1]:.2f}"
            if admin_runs := [x for x in runs if x["run"].startswith(f"floor-{ADMIN}/")]:
                fig["admin_floor_s"] = min(x["seconds"] for x in admin_runs)
                paired = [x["to_admin_floor"] for x in runs if x["run"] == variants[0].name]
                fig["paired_admin_ratio_median"] = balanced_median(paired)
            if "baseline_s" in fig:
                fig["ratio"] = round(fig["operator_s"] / fig["baseline_s"], 2)
        finally:
            for writer in writers_as.values():
                await writer.close()  # the admin's is `api`
    finally:
        for op in ops:
            with contextlib.suppress(Exception):
                op.stop(timeout=30)
        cluster.down()
    return fig


@dataclass
class RoundFloors:
    """The seconds of one round's floors, by what an operator run is held against."""

    plain: list[float] = field(default_factory=list)
    watched: list[float] = field(default_factory=list)  # with the first standby attached
    admin: list[float] = field(default_factory=list)  # beside the operator's (--floor-as operator,admin)


def floors_first(round_: int, rounds: int) -> bool:
    """Whether round `round_` (from 0) of `rounds` writes its floors before its operator runs.

    The rounds alternate, so neither the floor nor the operator always runs on the cluster as the
    other left it (the second run of a round has measured faster whichever side it was, in some sets
    of rounds and not in others; the cause is not known). Counted back from the last round, which
    writes its floors first: its last operator run keeps running for the memory, quiet and restart
    figures, and a floor written while an operator runs would be reconciled by it."""
    return (rounds - 1 - round_) % 2 == 0


def balanced_groups(rounds: int) -> list[tuple[int, ...]]:
    """The rounds (by index) `balanced_median` takes together: each two consecutive rounds, which
    `floors_first` runs in opposite order; with an odd number the first round alone."""
    alone = rounds % 2
    return [(0,)] * alone + [(i, i + 1) for i in range(alone, rounds, 2)]


def balanced_values(ratios: Sequence[float]) -> list[float]:
    """A variant's per-round ratios (in round order) as `balanced_median` takes them: each group of
    `balanced_groups` as the geometric mean of its ratios."""
    return [math.prod(ratios[i] for i in group) ** (1 / len(group)) for group in balanced_groups(len(ratios))]


MEDIAN_CONFIDENCE = 0.9


def median_interval(
    values: Sequence[float], confidence: float = MEDIAN_CONFIDENCE
) -> tuple[float, float] | None:
    """A distribution-free interval for the median of what `values` were drawn from: the k-th
    smallest and k-th largest value, k as large as keeps the chance that the median lies between them
    at `confidence` or more (the number of values below the median is Binomial(n, 1/2)). None when
    there are too few values for that confidence (5 for 90 %: [min, max] then holds the median with
    probability 1 - 2 / 2^5 = 94 %).

    The host moves a run's seconds by more than the 10 % the 100-graph goal allows, so a median of a
    few pairs can land either side of it; the interval says how far a set of rounds pins it down."""
    n = len(values)
    below = [math.comb(n, i) / 2**n for i in range(n + 1)]  # P(exactly i values below the median)
    k = 0
    while k < n // 2 and 1 - 2 * sum(below[: k + 1]) >= confidence:
        k += 1
    if k == 0:
        return None
    ordered = sorted(values)
    return round(ordered[k - 1], 2), round(ordered[n - k], 2)


def balanced_median(ratios: Sequence[float]) -> float:
    """The median of a variant's per-round ratios to the floor (in round order), each two rounds of
    opposite order (`floors_first`) taken together as the geometric mean of their two ratios.

    Whichever side ran second in a round has measured faster in some sets: at 100 graphs, 12 rounds
    in alternating order gave 1.14-1.29 with the operator first and 0.83-1.13 with the floor first
    (every floor then in one namespace name, so a floor-first round's floor, written right after the
    round before's, paid the live lookups `floor_namespace` describes). A
    plain median of such rounds is set by the two rounds nearest the gap between the groups; a pair
    of rounds of opposite order cancels the order's effect, as a round's pair cancels the host's
    drift. With an odd number of rounds the first stands alone."""
    return round(statistics.median(balanced_values(ratios)), 2)


def floor_ratios(
    seconds: float, floors: Sequence[float], watched: Sequence[float], *, admin: Sequence[float] = ()
) -> dict[str, float]:
    """An operator run against its round's fastest floor, fastest floor with a standby attached and
    fastest floor written as the cluster admin (when that is not the floor's own identity); a ratio
    whose floor did not run (`--skip floor`) is left out, so the runs table shows "-"."""
    ratios: dict[str, float] = {}
    for key, runs in (("to_floor", floors), ("to_watched_floor", watched), ("to_admin_floor", admin)):
        if runs:
            ratios[key] = round(seconds / min(runs), 2)
    return ratios


def floor_plan(
    writers: Sequence[int], identities: Sequence[str], standbys: Sequence[Variant], round_: int
) -> list[tuple[int, Variant | None, str]]:
    """The floors of round `round_` (from 0): (writers, standby attached, identity). Every writer
    count as every identity, the identities in reverse every other round (as variants, `run_order`);
    standby floors as the first identity, the one whose floors the operator is held against."""
    order = list(identities) if round_ % 2 == 0 else list(reversed(identities))
    plain = [(w, None, identity) for identity in order for w in writers]
    return plain + [(w, sb, identities[0]) for sb in standbys for w in writers]


def operator_namespace(round_: int, variant: int) -> str:
    """The namespace of round `round_`'s run of variant `variant` (by index): used once per cluster."""
    return f"{NS}-{round_}-{variant}"


def floor_namespace(round_: int, index: int) -> str:
    """The namespace of round `round_`'s `index`-th floor (its place in `floor_plan`): a name no
    other run of the cluster uses, as each operator run's (`operator_namespace`). Into a name deleted
    under 30 s before, every write costs the API server a live lookup of the namespace
    (`bench_graph.write_floor`), which the operator's runs, each in a new name, never paid; with one
    name for every floor, the second of two back-to-back floors paid it."""
    return f"{NS}-floor-{round_}-{index}"


def floor_label(identity: str, primary: str, standby: Variant | None) -> str:
    """`floor` for the floor the operator is held against, `floor+NAME` with a standby attached,
    `floor-IDENTITY` for a floor written as another identity."""
    if identity != primary:
        return f"floor-{identity}"
    return f"floor+{standby.name}" if standby else "floor"


FLOOR_AS = ((OPERATOR_SA,), (ADMIN,), (OPERATOR_SA, ADMIN))
"""What --floor-as accepts: one identity, or the operator's floor with the admin's beside it (the
`/floor-adm` ratios); the first is the floor the operator is held against."""


def parse_floor_identities(text: str) -> list[str]:
    """`--floor-as`: `operator`, `admin` or `operator,admin`."""
    names = tuple(x.strip() for x in text.split(","))
    if names not in FLOOR_AS:
        accepted = ", ".join(",".join(x) for x in FLOOR_AS)
        raise argparse.ArgumentTypeError(f"expected one of {accepted}; got {text!r}")
    return list(names)


def run_order(variants: int, round_: int, rounds: int) -> list[int]:
    """The order the variants run in, by index, in round `round_` (from 0) of `rounds`.

    Every other round runs them in reverse: the cluster's history (etcd size, warm caches) then
    favours no variant by its place in the list. The very last run of a size also takes its memory,
    quiet and restart figures, which the growth row shows beside the first variant's time: so the
    last round always ends with the first variant."""
    order = list(range(variants))
    if round_ % 2:
        order.reverse()
    if round_ == rounds - 1:
        order = [i for i in order if i != 0] + [0]
    return order


async def baseline(api: Client, n: int, *, timeout: float) -> float:  # noqa: ASYNC109
    """Seconds until 3·N bare Deployments are available: the cluster's own limit."""
    h.say(f"N={n}: baseline, {3 * n} bare Deployments")
    await h.ensure_namespace(api, BASELINE_NS)
    await asyncio.sleep(3)  # the namespace's default ServiceAccount
    t0 = time.monotonic()
    names = [f"d{i:05d}" for i in range(3 * n)]
    await h.bounded_gather(
        (api.create(DEPLOYMENT, bare_deployment(x, BASELINE_NS)) for x in names), limit=CREATE_CONCURRENCY
    )
    await count_until(api, DEPLOYMENT, BASELINE_NS, len(names), available, timeout=timeout)
    took = round(time.monotonic() - t0, 1)
    # Wait for the whole namespace, not just its pods: kcm garbage-collecting a thousand leftover
    # Deployments and ReplicaSets would otherwise be billed to the next phase.
    await drop_namespace(api, BASELINE_NS, timeout=timeout)
    return took


def three_service_graph(name: str, namespace: str) -> dict[str, Any]:
    return h.graph(name, namespace, services=SERVICES)


def print_figures(fig: dict[str, Any]) -> None:
    n = fig["graphs"]
    print(f"--- bench_scale: {n} DGDs ({fig['components']} components)", flush=True)
    for key, value in fig.items():
        if key == "timeline":
            print("  timeline (last run; seconds after the first DGD create):", flush=True)
            for what, (half, all_, count) in value.items():
                print(f"    {what:30} half {half:6.0f} s   all {all_:6.0f} s   ({count})", flush=True)
        elif key == "latency":
            print("  latency (last run):", flush=True)
            for what, figure in value.items():
                print(f"    {what:60} {figure}", flush=True)
        elif key not in ("graphs", "components", "memory", "runs"):
            print(f"  {key:20} {value}", flush=True)
    print_runs(fig.get("runs") or [])
    if fig.get("memory"):
        cache_memory.print_breakdown(fig["memory"], graphs=n)


RUN_COLUMNS = (
    ("round", "round"),
    ("run", "run"),
    ("seconds", "seconds"),
    ("to_floor", "/floor"),
    ("to_watched_floor", "/floor+sb"),
    ("to_admin_floor", "/floor-adm"),
    ("write_phase_s", "writing s"),
    ("writes_per_s", "writes/s"),
    ("writes_per_dgd", "writes/DGD"),
    ("cpu_s", "CPU s"),
    ("gc_s", "GC s"),
    ("rss_peak_mb", "RSS MB"),
    ("apiserver_cpu_s", "apisrv CPU"),
    ("cluster_cpu_s", "clust. CPU"),
    ("idle_wait_s", "idle wait"),
)


def control_plane_cpu(spent: dict[str, float]) -> dict[str, float]:
    """The runs table's CPU columns from a `ClusterCPU.spent` (seconds per control-plane process)."""
    return {
        "apiserver_cpu_s": round(spent.get("kube-apiserver", 0.0), 1),
        "cluster_cpu_s": round(sum(spent.values()), 1),
    }


def print_runs(runs: list[dict[str, Any]]) -> None:
    """Every floor and operator run of one size, in the order they ran (the host is shared: the
    spread between rounds is the noise)."""
    if not runs:
        return
    print(
        "  runs (floor/W: W writers; CPU s: of the bench client, or of the operator from the first"
        " create to all Ready; GC s: of it, the operator's garbage-collector pauses; operator /floor:"
        " against the round's fastest floor; /floor+sb: against the round's floor with the first --standby"
        " attached, i.e. the writes plus the watches the operator needs; /floor-adm: against the round's"
        " floor written as the cluster admin (--floor-as operator,admin); apisrv/clust. CPU:"
        " CPU s of the API server / of every control-plane process during the run, which host noise"
        " moves far less than seconds; idle wait: seconds waited before the clock started for the"
        " control plane to go idle, at least one 1-s window, so 1.0 means it already was):",
        flush=True,
    )
    print("    " + " ".join(f"{title:>10}" for _, title in RUN_COLUMNS), flush=True)
    for run in runs:
        print("    " + " ".join(f"{run.get(key, '-')!s:>10}" for key, _ in RUN_COLUMNS), flush=True)
    print(
        "  served per graph in each run (the API server's own counts, every client's writes and every"
        " watcher's events: apiserver_request_total, apiserver_watch_events_*):"
    )
    for run in runs:
        print(f"    round {run.get('round')} {run.get('run')}: {run.get('served', {})}", flush=True)
    print("  stages in each run (seconds after the first DGD create: half / all of the objects there):")
    for run in runs:
        stages = "; ".join(
            f"{what} {half:.0f} / {all_:.0f}" for what, (half, all_, _) in (run.get("stages") or {}).items()
        )
        print(f"    round {run.get('round')} {run.get('run')}: {stages}", flush=True)


GROWTH_COLUMNS = (
    ("graphs", "graphs"),
    ("floor_s", "floor s"),
    ("baseline_s", "base s"),
    ("operator_s", "op s"),
    ("ratio_to_floor", "op/floor"),
    ("paired_ratio_median", "med. pair"),
    ("paired_ratio_interval", "90% of med"),
    ("paired_admin_ratio_median", "med. adm"),
    ("floor_writes_per_s", "floor w/s"),
    ("ratio", "op/base"),
    ("rss_peak_mb", "RSS MB"),
    ("cpu_s", "CPU s"),
    ("writes_per_dgd", "writes/DGD"),
    ("quiet_writes", "quiet w"),
    ("restart_writes", "restart w"),
)


def print_growth(figures: list[dict[str, Any]]) -> None:
    """One row per size: how time, memory and CPU grow with the number of graphs."""
    if not figures:
        return
    print("--- bench_scale: growth", flush=True)
    print("  " + " ".join(f"{title:>10}" for _, title in GROWTH_COLUMNS), flush=True)
    for fig in figures:
        print("  " + " ".join(f"{fig.get(key, '-')!s:>10}" for key, _ in GROWTH_COLUMNS), flush=True)


def profiling_launcher(out: Path) -> Path:
    """A stand-in for the operator's console script that runs it under cProfile (the stats are
    written when the process exits after SIGTERM)."""
    out.mkdir(parents=True, exist_ok=True)
    launcher = out / "dynamo-operator-profiled"
    python = REPO / ".venv" / "bin" / "python"
    stats = f"{out.resolve()}/operator-$$.prof"
    launcher.write_text(f'#!/bin/sh\nexec {python} -m cProfile -o "{stats}" -m dynamo_operator "$@"\n')
    launcher.chmod(0o755)
    return launcher


def heap_launcher(out: Path) -> Path:
    """A stand-in for the operator's console script that runs it under the heap probe
    (test/bench/heap_probe.py): each SIGUSR2 writes DIR/heap-<pid>-<n>.txt."""
    out.mkdir(parents=True, exist_ok=True)
    launcher = out / HEAP_LAUNCHER
    python = REPO / ".venv" / "bin" / "python"
    probe = Path(__file__).resolve().parent / "heap_probe.py"
    launcher.write_text(f'#!/bin/sh\nexec {python} {probe} "{out.resolve()}" "$@"\n')
    launcher.chmod(0o755)
    return launcher


HEAP_LAUNCHER = "dynamo-operator-heap"


def probe_heap(op: h.OperatorProcess) -> None:
    """Ask an operator started through heap_launcher for a heap dump (no-op otherwise)."""
    if Path(h.OPERATOR_BIN).name == HEAP_LAUNCHER:
        op.kill(signal.SIGUSR2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--graphs", default="100,300,1000", help="comma-separated sizes, run in order")
    parser.add_argument("--timeout", type=float, default=1800.0, help="bound per size, seconds")
    parser.add_argument("--settle", type=float, default=10.0, help="no write for this long = quiet")
    parser.add_argument("--quiet-window", type=float, default=30.0)
    parser.add_argument(
        "--variant",
        action="append",
        type=Variant.parse,
        help="NAME=operator flags (repeatable): each runs on the same cluster, e.g. "
        "'w16=--max-concurrent-reconciles=16'; the first one is the growth table's",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="run each operator under cProfile, one DIR/operator-<pid>.prof per process (CPU only)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds of (floor, every variant) per size, every other round the variants first"
        " (an even number puts each side first equally often)",
    )
    parser.add_argument("--skip", default="", help="comma-separated: baseline, floor, memory, quiet, restart")
    parser.add_argument(
        "--floor-writers",
        default=str(wf.DEFAULT_CONCURRENCY),
        help="comma-separated writer counts of the floor, each run every round (the fastest is the floor)",
    )
    parser.add_argument(
        "--standby",
        action="append",
        type=Variant.parse,
        help="NAME=operator flags (repeatable): run every floor once more (floor+NAME) with such an"
        " operator attached as a standby: its informers watch and cache everything, it reconciles"
        " nothing (the bench holds its Lease); what the operator's watches alone cost",
    )
    parser.add_argument(
        "--floor-as",
        type=parse_floor_identities,
        default=[OPERATOR_SA],
        help="who writes the floor: operator (its ServiceAccount, RBAC and its escalation checks"
        " applying as they do to the operator), admin (the cluster admin, which RBAC waves through)"
        " or operator,admin (both every round; the operator's is the floor, the admin's gives the"
        " /floor-adm ratios) (default operator)",
    )
    parser.add_argument(
        "--apiserver-profile",
        metavar="DIR",
        help="profile the API server's CPU over the first 0.1 s per graph of every floor and operator"
        " run: DIR/apiserver-<run>-r<round>.pprof, for `go tool pprof -top -diff_base A B`",
    )
    parser.add_argument(
        "--bench-loop",
        choices=eventloop.EVENT_LOOPS,
        default=eventloop.UVLOOP,
        help="the event loop of this process (the floor's writers, the bench's watches): the"
        " operator's default, so the floor's client is as cheap as the operator's (default %(default)s)",
    )
    parser.add_argument(
        "--heap",
        metavar="DIR",
        help="run each operator under test/bench/heap_probe.py: a heap dump in DIR when all graphs are"
        " Ready and after the quiet window (HEAP_PROBE_FRAMES=N adds tracemalloc allocation sites)",
    )
    args = parser.parse_args(argv)
    skip = {x for x in args.skip.split(",") if x}
    # make bench's driver stops an overrunning benchmark with SIGTERM: exit through the finally
    # blocks, which stop the operators and the cluster.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.profile:
        h.OPERATOR_BIN = profiling_launcher(Path(args.profile))
    if args.heap:
        h.OPERATOR_BIN = heap_launcher(Path(args.heap))
    status = 0
    done: list[dict[str, Any]] = []
    for n in [int(x) for x in args.graphs.split(",") if x]:
        try:
            fig = eventloop.run(
                one_size(
                    n,
                    timeout=args.timeout,
                    settle=args.settle,
                    quiet_window=args.quiet_window,
                    variants=args.variant or [DEFAULT_VARIANT],
                    repeat=max(1, args.repeat),
                    skip=skip,
                    floor_concurrency=[int(x) for x in args.floor_writers.split(",") if x],
                    standbys=args.standby,
                    floor_identities=args.floor_as,
                    profile_dir=Path(args.apiserver_profile) if args.apiserver_profile else None,
                ),
                event_loop=args.bench_loop,
            )
        except Exception as err:
            print(
                f"--- bench_scale: {n} DGDs did not finish: {type(err).__name__}: {str(err)[:500]}",
                flush=True,
            )
            status = 1
            break
        print_figures(fig)
        done.append(fig)
    print_growth(done)
    return status


if __name__ == "__main__":
    sys.exit(main())
