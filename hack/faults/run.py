#!/usr/bin/env python3
"""Fault scenarios against a fresh local control plane, one command each:

    .venv/bin/python hack/faults/run.py leader-failover | apiserver-restart | compaction |
                                        throttling | invalid-input | pvc-safety | restart-delete | all

Each scenario starts its own loopback cluster, deploys config/default, runs the operator as local
processes authenticated as its own ServiceAccount, injects the fault, prints what it checked and its
figures on stdout, and ends with the invariant line ("every DGD converged, no duplicate or orphaned
object, no lost user PVC"). Exit 0 on pass, 1 on a failed check. Bounded: --timeout (default 600 s,
restart-delete 1200 s) per scenario; the cluster and every operator process are always stopped.

restart-delete (issue #10, defect 5) rolls out 10 batches of 3 graphs, then 10 times restarts
kube-apiserver and deletes one batch 0-10 s after it is back (one delay per iteration), and waits
(bounded) until nothing of the deleted graphs' subtrees is left: DCDs, Deployments, ReplicaSets,
Pods, Services, ServiceAccounts, Roles, RoleBindings, ConfigMaps, PVCs, adapters. The operator's
own objects must be gone within 120 s of their graph's deletion (each iteration waits for that);
ReplicaSets and pods, which Kubernetes' garbage collector removes, are checked for every batch once
the restarts stop (180 s). It reports what is left by kind and owner UID, and fails on any leftover
and on any object the operator created for a graph after that graph's deletion. About 9 minutes
(bounded at 20): every informer backs off while the API server is down and resets only after two
quiet minutes, so with a restart a minute the operator and kube-controller-manager may each see
nothing for a minute after it is back.
"""

from __future__ import annotations

import argparse
import asyncio
import calendar
import contextlib
import os
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # PYTHONSAFEPATH=1 drops the script dir

import harness as h
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound
from dynamo_operator.internal.client.resource import (
    CONFIG_MAP,
    DEPLOYMENT,
    INGRESS,
    LEASE,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    REPLICA_SET,
    ROLE,
    ROLE_BINDING,
    SERVICE,
    SERVICE_ACCOUNT,
    Resource,
)
from dynamo_operator.internal.stored_version import speaking_v1alpha1
from localcluster import LocalCluster

PV = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
NS = "faults"
LEASE_NAME = "dynamo-operator-leader"
# Longer than any injected outage: a leader whose renewals fail past renew-deadline exits by design
# (controller-runtime's rule), and these scenarios measure recovery of the *same* process.
PATIENT_LEASE = ("--leader-election-lease-duration=60s", "--leader-election-renew-deadline=45s")
WORKERS = "--max-concurrent-reconciles=4"


class CheckFailed(AssertionError):
    """A scenario check did not hold."""


@dataclass
class Run:
    """One scenario's cluster, clients, operator processes and the lines it reports."""

    name: str
    cluster: LocalCluster
    workdir: Path
    api: Client
    op_kubeconfig: str
    operators: list[h.OperatorProcess] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    failed: bool = False

    def check(self, ok: bool, what: str) -> None:
        self.lines.append(f"  [{'ok' if ok else 'FAIL'}] {what}")
        print(self.lines[-1], flush=True)
        if not ok:
            raise CheckFailed(what)

    def figure(self, name: str, value: Any) -> None:
        self.lines.append(f"  figure: {name} = {value}")
        print(self.lines[-1], flush=True)

    async def reconnect(self) -> None:
        await self.api.close()
        self.api = await Client.from_kubeconfig(
            self.cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        )

    def operator(self, *extra: str) -> h.OperatorProcess:
        op = h.OperatorProcess(
            self.op_kubeconfig, self.workdir / f"operator-{len(self.operators)}.log", extra_args=extra
        ).start()
        self.operators.append(op)
        return op

    async def invariants(self, *, expect: list[str] | None = None, user_pvcs: list[str] = ()) -> None:  # type: ignore[assignment]
        # The garbage collector deletes grandchildren a moment after their owner: give it a bound.
        deadline = time.monotonic() + 60.0
        while True:
            report = await h.check_invariants(self.api, NS, expect_converged=expect, user_pvcs=user_pvcs)
            if not report.problems or time.monotonic() > deadline:
                break
            await asyncio.sleep(1.0)
        for problem in report.problems[:20]:
            print(f"    problem: {problem}", flush=True)
        self.check(not report.problems, report.line())


@contextlib.asynccontextmanager
async def scenario(name: str, *, nodes: int = 4, keep: bool = False) -> AsyncIterator[Run]:
    """Cluster up, config/default deployed, admin client and operator token ready; all torn down."""
    workdir = Path(tempfile.mkdtemp(prefix=f"dynamo-fault-{name}-"))
    h.say(f"{name}: starting a local control plane (work dir {workdir})")
    cluster = h.start_cluster(f"fault-{name}-{os.getpid()}", nodes=nodes, owned=not keep)
    run: Run | None = None
    try:
        h.deploy_default(cluster.kubeconfig)
        op_kubeconfig = h.operator_kubeconfig(cluster, workdir / "operator.kubeconfig")
        api = await Client.from_kubeconfig(
            cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        )
        try:
            await h.ensure_namespace(api, NS)
            await h.eventually(
                lambda: api.list(Resource("", "v1", "serviceaccounts", "ServiceAccount"), namespace=NS),
                lambda sas: any(s["metadata"]["name"] == "default" for s in sas),
                timeout=30,
                what="default ServiceAccount",
            )
            run = Run(name, cluster, workdir, api, op_kubeconfig)
            yield run
        finally:
            keep = keep and (run is None or run.failed)  # --keep keeps only what failed
            if run is not None and not keep:
                for op in run.operators:
                    op.stop(timeout=20)
            await (run.api if run is not None else api).close()
    finally:
        if keep:
            pids = [op.pid for op in run.operators] if run else []
            h.say(
                f"--keep: operators {pids}, KUBECONFIG={cluster.kubeconfig}; stop with: "
                f"kill {' '.join(map(str, pids))}; "
                f".venv/bin/python hack/localcluster.py down --name {cluster.name}"
            )
        else:
            cluster.down()


async def create_graphs(api: Client, names: list[str], *, services: int = 2, limit: int = 16) -> None:
    await h.bounded_gather((api.create(h.DGD, h.graph(n, NS, services=services)) for n in names), limit=limit)


async def lease_holder(api: Client) -> str:
    lease = await api.get(LEASE, LEASE_NAME, namespace=h.OPERATOR_NAMESPACE)
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


def reconciles(op: h.OperatorProcess) -> float:
    return h.metric_sum(op.metrics(), "controller_runtime_reconcile_total")


def rbac_denials(run: Run, op: h.OperatorProcess, *, before: dict[str, float] | None = None) -> None:
    """No 403 in the operator's requests (since `before`, a snapshot of forbidden_requests())."""
    now = h.forbidden_requests(op.metrics()) if op.alive() else {}
    denied = {k: v - (before or {}).get(k, 0.0) for k, v in now.items() if v - (before or {}).get(k, 0.0)}
    run.check(not denied, f"no RBAC denial in the operator's requests (403s: {denied or 0})")


# --- scenarios -------------------------------------------------------------------------------------


async def leader_failover(run: Run) -> None:
    """SIGKILL the leader during a rollout of 50 DGDs; the standby takes over within lease + retry."""
    lease_duration, retry = 15.0, 2.0  # the CLI defaults, which this scenario keeps
    leader = run.operator(WORKERS)
    leader.wait_ready()
    first = await h.eventually(lambda: lease_holder(run.api), bool, timeout=30, interval=0.1, what="a leader")
    standby = run.operator(WORKERS)
    standby.wait_ready()
    await asyncio.sleep(2 * retry)  # the standby has tried (and failed) to acquire at least once
    run.check(await lease_holder(run.api) == first, "exactly one leader while both run")
    names = [f"g{i:03d}" for i in range(50)]
    creating = asyncio.create_task(create_graphs(run.api, names))
    # Mid-rollout: some graphs have children already, most are not converged.
    await h.eventually(
        lambda: run.api.list(h.DCD, namespace=NS), lambda dcds: len(dcds) >= 20, timeout=60, interval=0.1
    )
    killed_at = time.monotonic()
    leader.kill(signal.SIGKILL)
    h.say("leader SIGKILLed mid-rollout")
    await creating
    second = await h.eventually(
        lambda: lease_holder(run.api),
        lambda who: who not in ("", first),
        timeout=60,
        interval=0.1,
        what="failover",
    )
    failover = time.monotonic() - killed_at
    run.figure("failover time (SIGKILL → standby holds the Lease)", f"{failover:.1f} s")
    bound = lease_duration + retry * 1.2 + 1.0  # lease + one jittered retry period + polling slack
    run.check(
        failover <= bound, f"standby took over within lease + retry ({failover:.1f} s <= {bound:.1f} s)"
    )
    run.check(bool(second), f"new holder {second} is the standby")
    took = await h.wait_converged(run.api, NS, names, timeout=240)
    run.figure(
        "all 50 DGDs converged after the kill", f"{time.monotonic() - killed_at:.1f} s (wait {took:.1f} s)"
    )
    run.check(standby.alive(), "the standby process is alive and leading")
    rbac_denials(run, standby)
    await run.invariants(expect=names)


async def apiserver_restart(run: Run) -> None:
    """Stop and restart kube-apiserver mid-run; the same operator process recovers."""
    op = run.operator(WORKERS, *PATIENT_LEASE)
    op.wait_ready()
    pid = op.pid
    first = [f"a{i:02d}" for i in range(20)]
    await create_graphs(run.api, first)
    await h.wait_converged(run.api, NS, first, timeout=120)
    second = [f"b{i:02d}" for i in range(20)]
    await create_graphs(run.api, second)
    await asyncio.sleep(1.0)  # mid-rollout
    stopped_at = time.monotonic()
    run.cluster.stop_component("kube-apiserver")
    h.say("kube-apiserver stopped")
    await asyncio.sleep(8.0)
    healthz_during = op.get("/healthz")[0] if op.alive() else None
    run.cluster.start_component("kube-apiserver")
    back_at = time.monotonic()
    run.figure("API server outage", f"{back_at - stopped_at:.1f} s")
    h.say("kube-apiserver back; creating a probe graph")
    # Recreate the client's connections too: the admin client's pool died with the server.
    probe = ["probe"]
    await h.eventually(lambda: run.api.create(h.DGD, h.graph("probe", NS)), lambda _: True, timeout=30)
    await h.wait_converged(run.api, NS, [*second, *probe], timeout=180, interval=0.25)
    recovery = time.monotonic() - back_at
    # A restarted kube-apiserver answers 403 for a moment while its RBAC caches fill (readyz is
    # already ok): those say nothing about config/rbac, so only later 403s count.
    transient = h.forbidden_requests(op.metrics())
    run.figure("403s while the restarted API server's authorizer warmed up", sum(transient.values()))
    run.figure("recovery time (API server ready → every pending and new DGD converged)", f"{recovery:.1f} s")
    run.check(op.alive() and op.pid == pid, f"operator never restarted (pid {pid} alive)")
    run.check(healthz_during == 200, f"operator /healthz answered during the outage ({healthz_during})")
    # A delete after the restart is seen: the watches were re-established, not just the lists.
    dep = f"{first[0]}-frontend"
    await run.api.delete(DEPLOYMENT, dep, namespace=NS)
    deleted_at = time.monotonic()
    await h.eventually(
        lambda: run.api.get(DEPLOYMENT, dep, namespace=NS),
        lambda d: not d["metadata"].get("deletionTimestamp"),
        timeout=60,
        what=f"deleted Deployment {dep} recreated",
    )
    run.figure("deleted child Deployment recreated after", f"{time.monotonic() - deleted_at:.1f} s")
    run.check(True, "a child Deployment deleted after the restart was recreated (watches live)")
    await h.wait_converged(run.api, NS, [*first, *second, *probe], timeout=120)
    rbac_denials(run, op, before=transient)
    await run.invariants(expect=[*first, *second, *probe])


def gone_relists(op: h.OperatorProcess) -> int:
    return sum(1 for line in op.log_text().splitlines() if "reflector step failed" in line and "Gone" in line)


async def compaction(run: Run) -> None:
    """etcd compacted while the operator's watches are behind: it relists (410) and misses no delete."""
    op = run.operator(WORKERS, *PATIENT_LEASE)
    op.wait_ready()
    names = [f"c{i:02d}" for i in range(20)]
    await create_graphs(run.api, names)
    await h.wait_converged(run.api, NS, names, timeout=120)
    # Freeze the operator so its watches fall behind everything that follows.
    op.kill(signal.SIGSTOP)
    try:
        deleted_graphs, kept = names[:8], names[8:]
        for n in deleted_graphs:
            await run.api.delete(h.DGD, n, namespace=NS)
        # Children deleted behind the operator's back: only a relist that notices deletes restores them.
        lost_deps = [f"{n}-frontend" for n in kept[:6]]
        for d in lost_deps:
            await run.api.delete(DEPLOYMENT, d, namespace=NS)
        # Worker DCDs are named with the graph's worker hash: find them by their labels.
        lost_dcds = [
            d["metadata"]["name"]
            for d in await run.api.list(
                h.DCD, namespace=NS, label_selector="nvidia.com/dynamo-component=WorkerDecode"
            )
            if d["metadata"]["labels"].get("nvidia.com/dynamo-graph-deployment-name") in kept[6:9]
        ]
        for d in lost_dcds:
            with contextlib.suppress(NotFound):
                await run.api.delete(h.DCD, d, namespace=NS)
        # Churn, so the operator's last resourceVersions are far behind, then compact and empty the
        # watch cache: every resume from an old resourceVersion now gets 410 Gone.
        for i in range(50):
            cm = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"churn-{i}", "namespace": NS},
            }
            await run.api.create(CONFIG_MAP, cm)
        revision = run.cluster.compact_etcd()
        run.figure("etcd compacted at revision", revision)
        run.cluster.restart_apiserver()
    finally:
        op.kill(signal.SIGCONT)
    resumed = time.monotonic()
    gone_prefixes = tuple(f"{n}-" for n in deleted_graphs)
    await h.eventually(
        lambda: run.api.list(h.DCD, namespace=NS),
        lambda dcds: not any(d["metadata"]["name"].startswith(gone_prefixes) for d in dcds),
        timeout=90,
        what="children of the deleted graphs gone",
    )
    await h.wait_converged(run.api, NS, kept, timeout=180, interval=0.25)
    for d in lost_deps:
        await run.api.get(DEPLOYMENT, d, namespace=NS)
    run.figure("time from resume to reconverged", f"{time.monotonic() - resumed:.1f} s")
    relists = gone_relists(op)
    run.figure("watches that got 410 Gone and relisted", relists)
    run.check(relists > 0, "the operator's reflectors saw 410 Gone and relisted")
    run.check(op.alive(), "operator alive (no restart)")
    live = {d["metadata"]["name"] for d in await run.api.list(h.DGD, namespace=NS)}
    run.check(live == set(kept), f"deleted DGDs stay deleted ({len(live)} remain)")
    run.check(
        True, f"{len(lost_deps)} Deployments and {len(lost_dcds)} DCDs deleted behind its back were recreated"
    )
    rbac_denials(run, op)
    await run.invariants(expect=kept)


async def throttling(run: Run) -> None:
    """Tight in-flight limits: 429s honoured (Retry-After), convergence still reached."""
    run.cluster.restart_apiserver(["--max-requests-inflight=4", "--max-mutating-requests-inflight=1"])
    await run.reconnect()  # the admin client's pooled connections died with the old server
    op = run.operator(WORKERS, *PATIENT_LEASE)
    op.wait_ready(timeout=120)
    names = [f"t{i:02d}" for i in range(40)]
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": NS}}
    await run.api.create(CONFIG_MAP, cm)
    probe = await Client.from_kubeconfig(run.op_kubeconfig)  # same ServiceAccount: not exempt
    from dynamo_operator.internal.client.metrics import REQUESTS

    def local_429() -> float:
        return sum(
            s.value
            for m in REQUESTS.collect()
            for s in m.samples
            if s.name.endswith("_total") and s.labels["code"] == "429"
        )

    started = time.monotonic()
    creating = asyncio.create_task(create_graphs(run.api, names))  # admin (system:masters) is exempt
    honoured, probed, throttled_probes, slowest = True, 0, 0, 0.0
    try:
        # Sequential writes while the operator rolls out: each probe's 429s are its own.
        while probed < 300 and throttled_probes < 10 and time.monotonic() - started < 120:
            before, t0 = local_429(), time.monotonic()
            with contextlib.suppress(ApiError):
                await probe.patch(CONFIG_MAP, "probe", {"data": {"i": str(probed)}}, namespace=NS)
            seen, took = local_429() - before, time.monotonic() - t0
            probed += 1
            if seen:
                throttled_probes += 1
                slowest = max(slowest, took / seen)
                honoured &= took >= 0.9 * seen  # the in-flight filter answers Retry-After: 1
    finally:
        await probe.close()
        await creating
    took = await h.wait_converged(run.api, NS, names, timeout=420, interval=1.0)
    samples = op.metrics()
    got_429 = h.metric_sum(samples, "rest_client_requests_total", code="429")
    total = sum(h.requests_by_verb(samples).values())
    run.figure("time to converge 40 DGDs under throttling", f"{time.monotonic() - started:.1f} s")
    run.figure(
        "operator requests answered 429", f"{got_429:.0f} of {total} ({100 * got_429 / max(total, 1):.1f} %)"
    )
    run.figure("probe writes throttled (same ServiceAccount)", f"{throttled_probes} of {probed}")
    run.check(got_429 > 0, "the operator was throttled (429s in rest_client_requests_total)")
    run.check(
        throttled_probes > 0 and honoured,
        f"every throttled probe waited at least Retry-After (1 s) per 429 ({throttled_probes} throttled)",
    )
    run.check(op.alive(), "operator alive")
    rbac_denials(run, op)
    await run.invariants(expect=names)
    del took


async def invalid_input(run: Run) -> None:
    """200 fuzzed invalid graphs among 200 valid ones: refused or conditioned; valid converge; no spin."""
    import fuzz

    op = run.operator(WORKERS, *PATIENT_LEASE)
    op.wait_ready()
    pid = op.pid
    crd = await run.api.get(
        Resource(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            namespaced=False,
        ),
        "dynamographdeployments.nvidia.com",
    )
    invalid = fuzz.invalid_graphs(crd, count=200, namespace=NS)
    valid = [h.graph(f"v{i:03d}", NS) for i in range(200)]
    mixed = [x for pair in zip(valid, invalid, strict=True) for x in pair]
    refused: list[str] = []
    accepted: list[str] = []

    async def send(obj: dict[str, Any]) -> None:
        try:
            await run.api.create(h.DGD, obj)
        except ApiError as err:
            if obj["metadata"]["name"].startswith("v"):
                raise
            refused.append(f"{err.code}")
            return
        if not obj["metadata"]["name"].startswith("v"):
            accepted.append(obj["metadata"]["name"])

    await h.bounded_gather((send(o) for o in mixed), limit=16)
    run.figure("fuzzed invalid graphs refused by the API server", f"{len(refused)} of {len(invalid)}")
    run.figure("fuzzed graphs the API server accepted", len(accepted))
    names = [v["metadata"]["name"] for v in valid]
    took = await h.wait_converged(run.api, NS, names, timeout=400, interval=2.0)
    run.figure("200 valid DGDs converged in", f"{took:.1f} s")
    await asyncio.sleep(15)  # let the accepted-but-broken ones reach their condition and backoff
    by_name = {d["metadata"]["name"]: d for d in await run.api.list(h.DGD, namespace=NS)}
    silent = [
        n
        for n in accepted
        if not h.is_converged(by_name[n]) and not (by_name[n].get("status") or {}).get("conditions")
    ]
    converged_fuzz = sum(1 for n in accepted if h.is_converged(by_name[n]))
    run.figure(
        "accepted fuzzed graphs that converged anyway / carry a not-ready condition",
        f"{converged_fuzz} / {len(accepted) - converged_fuzz}",
    )
    run.check(
        not silent, f"every accepted fuzzed graph converged or carries a condition (silent: {silent[:5]})"
    )
    window = 60.0
    before = reconciles(op)
    await asyncio.sleep(window)
    per_minute = (reconciles(op) - before) * 60.0 / window
    bound = max(60.0, 2.0 * len(accepted))
    run.figure("reconciles per minute after convergence (400 objects)", f"{per_minute:.0f}")
    run.check(per_minute <= bound, f"no hot loop: {per_minute:.0f} reconciles/min <= {bound:.0f}")
    run.check(op.alive() and op.pid == pid, f"operator never crashed (pid {pid} alive throughout)")
    rbac_denials(run, op)
    await run.invariants(expect=names)


async def pvc_safety(run: Run) -> None:
    """Deleting a DGD whose PVC has `create: false` never deletes that PVC (background and foreground)."""
    op = run.operator(WORKERS)
    op.wait_ready()
    pvcs = []
    for policy in ("Background", "Foreground"):
        pvc = f"models-{policy.lower()}"
        pv = {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{NS}-{pvc}"},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "",
                "hostPath": {"path": f"/tmp/dynamo-fault-pv/{pvc}"},
                "claimRef": {"namespace": NS, "name": pvc},
            },
        }
        await run.api.create(PV, pv)
        claim = h.user_pvc(pvc, NS)
        claim["spec"]["storageClassName"] = ""
        await run.api.create(PERSISTENT_VOLUME_CLAIM, claim)
        pvcs.append(pvc)
    await h.eventually(
        lambda: run.api.list(PERSISTENT_VOLUME_CLAIM, namespace=NS),
        lambda items: sum((p.get("status") or {}).get("phase") == "Bound" for p in items) == 2,
        timeout=60,
        what="user PVCs bound",
    )
    names = []
    for policy, pvc in zip(("Background", "Foreground"), pvcs, strict=True):
        name = f"uses-{policy.lower()}"
        await run.api.create(h.DGD, h.graph(name, NS, pvc=pvc))
        names.append(name)
    await h.wait_converged(run.api, NS, names, timeout=120)
    await run.invariants(expect=names, user_pvcs=pvcs)
    for policy, name in zip(("Background", "Foreground"), names, strict=True):
        await run.api.delete(h.DGD, name, namespace=NS, propagation_policy=policy)
    await h.eventually(
        lambda: run.api.list(h.DCD, namespace=NS),
        lambda dcds: not dcds,
        timeout=90,
        what="DCDs garbage-collected",
    )
    await h.eventually(
        lambda: run.api.list(DEPLOYMENT, namespace=NS), lambda ds: not ds, timeout=90, what="Deployments gone"
    )
    await h.eventually(
        lambda: run.api.list(h.DGD, namespace=NS), lambda ds: not ds, timeout=90, what="DGDs gone"
    )
    await asyncio.sleep(5)  # anything that would delete the PVC has had its chance
    run.check(True, "both DGDs and all their children are gone (background and foreground deletion)")
    rbac_denials(run, op)
    await run.invariants(expect=[], user_pvcs=pvcs)


# --- restart-delete ---------------------------------------------------------------------------------

# In the version its CRD stores, as the operator reads it (internal/kinds.py).
DGDSA = Resource(
    h.GROUP, "v1beta1", "dynamographdeploymentscalingadapters", "DynamoGraphDeploymentScalingAdapter"
)
# Every kind a graph's subtree may hold: the operator's children and the built-in controllers' ones.
SUBTREE_KINDS = (
    h.DGD, h.DCD, DGDSA, DEPLOYMENT, REPLICA_SET, POD, SERVICE, SERVICE_ACCOUNT, ROLE, ROLE_BINDING,
    CONFIG_MAP, PERSISTENT_VOLUME_CLAIM, INGRESS,
)  # fmt: skip
# Written by Kubernetes' own controllers (a Deployment's ReplicaSets, their pods), not the operator.
KUBE_WRITTEN = frozenset({REPLICA_SET.kind, POD.kind})
RESTART_DELETE_DELAYS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.5, 9.0, 10.0)
RESTART_DELETE_GRAPHS = 3
# The bounds, from the deletion. Every informer (the operator's and kube-controller-manager's) backs
# off while the API server is down, 0.8 s doubling to 30 s with jitter, and only resets after two
# quiet minutes: with a restart every minute both may see nothing for up to a minute or two after
# the server is back. The operator's own objects must be gone within OURS_BOUND of their graph's
# deletion (its orphan collector gives the garbage collector 15 s first); what Kubernetes' own
# controllers wrote (ReplicaSets, pods) is the garbage collector's, checked for every batch once the
# restarts stop. The leak this scenario reproduces lasted 8+ minutes.
OURS_BOUND = 120.0
FINAL_BOUND = 180.0


@dataclass(frozen=True)
class Leftover:
    """An object of a deleted graph's subtree that is still there."""

    kind: str
    name: str
    uid: str
    owner: str  # "Kind/name uid" of its controller ownerReference, "-" without one
    owner_alive: bool
    created: str
    managers: str  # who wrote it (managedFields), to tell the operator's writes from the others'
    deleting: bool

    def line(self) -> str:
        alive = "alive" if self.owner_alive else "GONE"
        state = ", being deleted" if self.deleting else ""
        return (
            f"{self.kind}/{self.name} owner {self.owner} ({alive}{state}) "
            f"created {self.created} by {self.managers}"
        )


def _of_graphs(name: str, graphs: list[str]) -> bool:
    """Every generated name starts with its graph's name (children, their ReplicaSets and pods)."""
    return any(name == g or name.startswith(g + "-") for g in graphs)


async def subtree_leftovers(api: Client, graphs: list[str], *, ours_only: bool = False) -> list[Leftover]:
    """What remains of the named graphs' subtrees, objects being deleted included."""
    kinds = [r for r in SUBTREE_KINDS if not (ours_only and r.kind in KUBE_WRITTEN)]
    listed = await asyncio.gather(*(api.list(r, namespace=NS) for r in kinds))
    owners = await asyncio.gather(
        *(api.list(r, namespace=NS) for r in (h.DGD, h.DCD, DEPLOYMENT, REPLICA_SET))
    )
    uids = {o["metadata"]["uid"] for objs in (*listed, *owners) for o in objs}
    out = []
    for resource, objs in zip(kinds, listed, strict=True):
        for obj in objs:
            meta = obj["metadata"]
            if not _of_graphs(meta["name"], graphs):
                continue
            ref = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
            owner = f"{ref['kind']}/{ref['name']} {ref['uid']}" if ref else "-"
            managers = sorted(
                {f"{m.get('manager')}:{m.get('operation')}" for m in meta.get("managedFields") or ()}
            )
            out.append(
                Leftover(
                    kind=resource.kind,
                    name=meta["name"],
                    uid=meta["uid"],
                    owner=owner,
                    owner_alive=ref is not None and ref["uid"] in uids,
                    created=str(meta.get("creationTimestamp")),
                    managers=",".join(managers) or "?",
                    deleting=bool(meta.get("deletionTimestamp")),
                )
            )
    return out


def created_after(leftover: Leftover, when: float) -> bool:
    """Created clearly after `when`: creationTimestamp has one-second resolution, and a create whose
    owner check read the owner just before its deletion may land a moment later (the orphan
    collector then removes it); two seconds separate those from a create made from a stale cache."""
    created = calendar.timegm(time.strptime(leftover.created, "%Y-%m-%dT%H:%M:%SZ"))
    return created >= int(when) + 2


async def delete_graph(api: Client, name: str) -> None:
    """Delete a DGD (background propagation, as kubectl does); already gone counts as done."""
    with contextlib.suppress(NotFound):
        await api.delete(h.DGD, name, namespace=NS)


@dataclass
class Cleanup:
    """How a deleted batch went away: seconds until nothing was left (None: not within the bound),
    what was left at the bound, and what the operator wrote after the deletion."""

    took: float | None = None
    left: list[Leftover] = field(default_factory=list)
    late: dict[str, Leftover] = field(default_factory=dict)


async def watch_cleanup(
    api: Client,
    graphs: list[str],
    *,
    deleted_at: float,
    bound: float,
    ours_only: bool,
) -> Cleanup:
    """Poll the graphs' subtrees until nothing is left, at most `bound` seconds after `deleted_at`."""
    out = Cleanup()
    while True:
        with contextlib.suppress(ApiError, OSError):
            out.left = await subtree_leftovers(api, graphs, ours_only=ours_only)
            for leftover in out.left:
                if "dynamo-operator" in leftover.managers and created_after(leftover, deleted_at):
                    out.late.setdefault(leftover.uid, leftover)
            if not out.left:
                out.took = time.time() - deleted_at
                return out
        if time.time() - deleted_at > bound:
            return out
        await asyncio.sleep(1.0)


def operator_log_count(op: h.OperatorProcess, event: str) -> int:
    return sum(1 for line in op.log_text().splitlines() if f'"event":"{event}"' in line)


def report_leaks(run: Run, what: str, leaks: list[Leftover]) -> None:
    by_kind: dict[str, int] = {}
    for leftover in leaks:
        by_kind[leftover.kind] = by_kind.get(leftover.kind, 0) + 1
        print(f"      leaked {leftover.line()}", flush=True)
    run.figure(f"{what} left behind, by kind", by_kind or 0)
    if leaks:
        run.figure(f"owners of the {what} left behind", "; ".join(sorted({x.owner for x in leaks})[:20]))


async def restart_delete(run: Run) -> None:
    """Delete graphs 0-10 s after a kube-apiserver restart, 10 times: nothing of them may remain."""
    op = run.operator(WORKERS, *PATIENT_LEASE)
    op.wait_ready()
    pid = op.pid
    steady = ["steady"]  # never deleted: the cleanup must not touch a live graph's children
    await create_graphs(run.api, steady)

    def batch(i: int) -> list[str]:
        return [f"r{i:02d}g{j}" for j in range(RESTART_DELETE_GRAPHS)]

    # Every batch is rolled out up front: each restart then hits an operator holding ~30 graphs, and
    # no iteration waits for a rollout while the informers are still backing off from the last one.
    batches = [batch(i) for i in range(len(RESTART_DELETE_DELAYS))]
    await create_graphs(run.api, [g for b in batches for g in b])
    await h.wait_converged(run.api, NS, [*steady, *(g for b in batches for g in b)], timeout=300)
    ours_left: list[Leftover] = []
    late: dict[str, Leftover] = {}
    ours_times: list[float] = []
    deleted: list[str] = []
    for i, (delay, graphs) in enumerate(zip(RESTART_DELETE_DELAYS, batches, strict=True)):
        await h.wait_converged(run.api, NS, [*steady, *graphs], timeout=180)
        run.cluster.stop_component("kube-apiserver")
        await asyncio.sleep(1.0)
        run.cluster.start_component("kube-apiserver")
        await run.reconnect()  # the admin client's pooled connections died with the old server
        await asyncio.sleep(delay)
        deleted_at = time.time()
        for g in graphs:
            await h.eventually(
                lambda g=g: delete_graph(run.api, g), lambda _: True, timeout=30, what=f"delete {g}"
            )
        deleted += graphs
        cleanup = await watch_cleanup(
            run.api, graphs, deleted_at=deleted_at, bound=OURS_BOUND, ours_only=True
        )
        late.update(cleanup.late)
        stamp = time.strftime("%H:%M:%S", time.gmtime(deleted_at))
        if cleanup.took is None:
            print(
                f"    iteration {i}: graphs deleted at {stamp} UTC, {delay:g} s after the restart", flush=True
            )
            ours_left += cleanup.left
            continue
        ours_times.append(cleanup.took)
        h.say(
            f"iteration {i}: {len(graphs)} graphs deleted at {stamp} UTC, {delay:g} s after the API server "
            f"came back; the operator's objects gone {cleanup.took:.0f} s later"
        )
    final = await watch_cleanup(run.api, deleted, deleted_at=time.time(), bound=FINAL_BOUND, ours_only=False)
    run.figure("iterations (graphs deleted 0-10 s after an API server restart)", len(RESTART_DELETE_DELAYS))
    if ours_times:
        run.figure("slowest cleanup of the operator's objects after a deletion", f"{max(ours_times):.0f} s")
    if final.took is not None:
        run.figure("every object of every deleted graph gone after the last deletion", f"{final.took:.0f} s")
    run.figure(
        "creates refused for an owner gone behind the cache",
        operator_log_count(op, "Owner gone behind the cache; created nothing"),
    )
    run.figure("orphans the operator deleted", operator_log_count(op, "Deleted an orphaned child"))
    report_leaks(run, f"operator objects ({OURS_BOUND:g} s after their graph's deletion)", ours_left)
    report_leaks(run, f"objects ({FINAL_BOUND:g} s after the last restart)", final.left)
    for leftover in list(late.values())[:20]:
        print(f"    written after its graph was deleted: {leftover.line()}", flush=True)
    run.check(not late, f"the operator created nothing for a deleted graph ({len(late)} objects)")
    run.check(
        not ours_left, f"no operator object of a deleted graph left after {OURS_BOUND:g} s ({len(ours_left)})"
    )
    run.check(
        not final.left, f"no object of any deleted graph left after {FINAL_BOUND:g} s ({len(final.left)})"
    )
    run.check(op.alive() and op.pid == pid, f"operator never restarted (pid {pid} alive)")
    remaining = [d["metadata"]["name"] for d in await run.api.list(h.DGD, namespace=NS)]
    run.check(remaining == steady, f"only the never-deleted graph remains ({remaining})")
    # Each restarted API server answers 403 for a moment while its RBAC caches fill (see
    # apiserver-restart): a figure here, not a check.
    run.figure("403s around the restarts", sum(h.forbidden_requests(op.metrics()).values()))
    await run.invariants(expect=steady)


SCENARIOS: dict[str, Callable[[Run], Awaitable[None]]] = {
    "leader-failover": leader_failover,
    "apiserver-restart": apiserver_restart,
    "compaction": compaction,
    "throttling": throttling,
    "invalid-input": invalid_input,
    "pvc-safety": pvc_safety,
    "restart-delete": restart_delete,
}
# Scenarios that need more than the default bound (see their docstrings).
TIMEOUTS: dict[str, float] = {"restart-delete": 1200.0}
DEFAULT_TIMEOUT = 600.0


async def run_one(name: str, timeout: float, *, keep: bool = False) -> bool:  # noqa: ASYNC109 - the scenario's bound
    started = time.monotonic()
    print(f"== {name}: {(SCENARIOS[name].__doc__ or '').strip()}", flush=True)
    ok = False
    try:
        async with scenario(name, keep=keep) as run:
            try:
                await asyncio.wait_for(SCENARIOS[name](run), timeout)
                ok = True
            except CheckFailed:
                pass
            except Exception as err:  # report, never hang: the scenario failed
                print(f"  [FAIL] {type(err).__name__}: {str(err)[:800]}", flush=True)
            if not ok:
                run.failed = True
                for op in run.operators:
                    tail = op.log_text().splitlines()[-5:]
                    print(
                        f"  operator log {op.log_path} (last lines):",
                        *(f"    {t[:300]}" for t in tail),
                        sep="\n",
                    )
    except Exception as err:
        print(f"  [FAIL] setup: {type(err).__name__}: {str(err)[:800]}", flush=True)
    print(f"== {name}: {'PASS' if ok else 'FAIL'} in {time.monotonic() - started:.0f} s", flush=True)
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("scenario", choices=[*SCENARIOS, "all"])
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"bound per scenario, seconds (default {DEFAULT_TIMEOUT:g}; restart-delete 1200)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="leave the cluster and operators running (debugging)"
    )
    args = parser.parse_args(argv)
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]

    def bound(name: str) -> float:
        return float(args.timeout) if args.timeout is not None else TIMEOUTS.get(name, DEFAULT_TIMEOUT)

    results = {n: asyncio.run(run_one(n, bound(n), keep=args.keep)) for n in names}
    if len(names) > 1:
        print("summary: " + ", ".join(f"{n} {'PASS' if ok else 'FAIL'}" for n, ok in results.items()))
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
