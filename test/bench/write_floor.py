"""The write floor: every object the operator writes for N graphs, written by a plain client with no
controller in between, through a pool of concurrent writers as wide as the operator's workers.

What the operator writes for a graph (and so what the floor writes, counted by `graph_writes`):
  the DGD itself (the user's create), its own children (discovery RBAC, DCDs, ...), each DCD's
  children (Deployment, Service, ...), one Normal Event for the graph's own creations (the operator
  folds one sync's creations into one Event; a graph's components create theirs without one), the
  graph's two annotations (origin version, serving worker hash: one patch) and one status write per
  DGD and DCD once the graph's Deployments are available.

Why a pool and not one coroutine per graph: a graph's writes form a short dependency chain (children
carry their owner's uid, pods need their ServiceAccount), so a client that walks each chain on its own
spends most of its time waiting on round trips and is slower than the operator it should bound. Here a
finished write immediately queues what it unblocks, and free writers take the writes on the way to a
Deployment first (`priority_of`), so `concurrency` requests are always in flight and every graph
reaches its Deployments as early as the API server allows; what nothing waits for fills the gaps.

`plan_*` and `graph_writes` are pure (unit-tested); `WritePool` and `run_floor` talk to the cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply.waves import waves
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects

Obj = dict[str, Any]

FIELD_MANAGER = "bench-floor"
EVENT = kinds.Resource("", "v1", "events", "Event")
# The operator's default is 16 workers for each of the DGD and DCD controllers, and a reconcile sends
# its children's applies concurrently: about 16-32 requests in flight.
DEFAULT_CONCURRENCY = 32
POLL_SECONDS = 0.5


class Priority(enum.IntEnum):
    """Which write a free writer takes first (lower first): the critical path of a graph is
    DGD -> DCD and ServiceAccount -> Deployment -> (cluster starts pods) -> status, so those go
    before what nothing waits for (Services, RBAC rules, Events). Statuses first of all: each one
    ends a graph's clock."""

    STATUS = 0
    DEPLOYMENT = 1
    ENABLER = 2  # what a Deployment needs: its owner DCD, its pods' ServiceAccount
    GRAPH = 3  # the DGD itself
    OTHER = 4
    EVENT = 5


ENABLERS = frozenset({"DynamoComponentDeployment", "ServiceAccount"})


def priority_of(obj: Obj) -> Priority:
    """The pool priority of writing `obj` (pure)."""
    match obj.get("kind"):
        case "Deployment":
            return Priority.DEPLOYMENT
        case "DynamoGraphDeployment":
            return Priority.GRAPH
        case "Event":
            return Priority.EVENT
        case kind if kind in ENABLERS:
            return Priority.ENABLER
        case _:
            return Priority.OTHER


# -- what gets written (pure) -------------------------------------------------------------------------


def plan_graph_children(dgd: Obj, ctx: GenContext) -> list[Obj]:
    """What the graph reconciler writes for a created DGD (it must carry its uid)."""
    return desired_graph_objects(dgd, ctx)


def plan_component_children(dcd: Obj, ctx: GenContext) -> list[Obj]:
    """What the component reconciler writes for a created DCD (it must carry its uid)."""
    return desired_component_objects(dcd, ctx)


def graph_waves(children: list[Obj]) -> list[list[Obj]]:
    """A graph's children in the operator's waves (internal/apply/waves.py): a RoleBinding after
    the rest, since the API server checks it against its Role (and, for a client without RBAC's
    `bind` verb, such as the operator's ServiceAccount, answers 404 while the Role is missing)."""
    return waves(children, lambda obj: str(obj["kind"]))


def is_component(obj: Obj) -> bool:
    return obj.get("kind") == "DynamoComponentDeployment"


def created_event(owner: Obj, created: Iterable[Obj]) -> Obj:
    """One Normal Event naming every child created, as the operator's sync summary does."""
    meta = owner["metadata"]
    names = ", ".join(sorted(f"{o['kind']}/{o['metadata']['name']}" for o in created))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
        "involvedObject": {
            "apiVersion": owner["apiVersion"],
            "kind": owner["kind"],
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
        },
        "reason": "Created",
        "message": f"created: {names}",
        "type": "Normal",
        "source": {"component": FIELD_MANAGER},
    }


def graph_annotations(dgd: Obj) -> dict[str, str]:
    """The two annotations the graph reconciler writes on a new graph (values of the same size)."""
    return {
        consts.ANNOTATION_ORIGIN_VERSION: "0.1.0",
        consts.ANNOTATION_CURRENT_WORKER_HASH: dgd["metadata"]["uid"][:8],
    }


def ready_status(obj: Obj) -> Obj:
    """A status of the size the operator writes once a graph or component is ready."""
    generation = obj["metadata"].get("generation", 1)
    return {
        "status": {
            "observedGeneration": generation,
            "state": "successful",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "AllReady",
                    "message": "all resources are ready",
                    "observedGeneration": generation,
                    "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
            ],
        }
    }


def graph_writes(dgd: Obj, ctx: GenContext) -> Counter[str]:
    """How many writes of each kind the floor sends for `dgd` (placeholder uids; pure).

    Keys: a kind for applies/creates, `Event`, and `<Kind>/status` for status writes.
    """
    out: Counter[str] = Counter({dgd["kind"]: 1})
    live = _with_uid(dgd, "graph")
    children = plan_graph_children(live, ctx)
    out.update(o["kind"] for o in children)
    out["Event"] += 1
    out[f"{dgd['kind']}/status"] += 1
    out[f"{dgd['kind']}/annotations"] += 1
    for i, dcd in enumerate(o for o in children if is_component(o)):
        workload = plan_component_children(_with_uid(dcd, f"component-{i}"), ctx)
        out.update(o["kind"] for o in workload)
        out[f"{dcd['kind']}/status"] += 1
    return out


def _with_uid(obj: Obj, uid: str) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "uid": uid, "generation": 1}}


# -- the pool ------------------------------------------------------------------------------------------


Job = Callable[[], Awaitable[None]]


class WritePool:
    """`concurrency` workers taking jobs by priority (lower first, FIFO within one); a job may submit
    more. `run()` returns when nothing is queued or running; the first failure is raised."""

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency
        self._queue: asyncio.PriorityQueue[tuple[int, int, Job]] = asyncio.PriorityQueue()
        self._seq = itertools.count()
        self._unfinished = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def submit(self, priority: int, job: Job) -> None:
        self._unfinished += 1
        self._idle.clear()
        self._queue.put_nowait((priority, next(self._seq), job))

    def hold(self) -> None:
        """Keep `run()` from returning until `release()`: more jobs will be submitted from outside."""
        self._unfinished += 1
        self._idle.clear()

    def release(self) -> None:
        self._finish_one()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as group:
            workers = [group.create_task(self._worker()) for _ in range(self.concurrency)]
            await self._idle.wait()
            for w in workers:
                w.cancel()

    async def _worker(self) -> None:
        while True:
            _, _, job = await self._queue.get()
            try:
                await job()
            finally:
                self._finish_one()

    def _finish_one(self) -> None:
        self._unfinished -= 1
        if self._unfinished == 0:
            self._idle.set()


@dataclass
class FloorFigures:
    """What one floor run measured."""

    seconds: float = 0.0  # first write until the last status write
    write_phase_s: float = 0.0  # first write until the last non-status write was acknowledged
    writes: Counter[str] = field(default_factory=Counter)
    concurrency: int = 0
    # CPU seconds of this (bench) process meanwhile: near the wall time means the client, not the
    # API server, set the pace, and the floor is too high.
    client_cpu_s: float = 0.0
    # What the API server served meanwhile (apiserver_metrics.served_counts: every client's writes,
    # every watcher's events), when the caller sampled it (bench_graph.write_floor's `count_served`).
    served: Counter[str] = field(default_factory=Counter)
    # Seconds the caller waited for an idle control plane before the clock started (None: it did not).
    idle_wait_s: float | None = None
    # When half and all of the objects of each stage got there (bench_scale.timeline), when asked for.
    stages: dict[str, tuple[float, float, int]] = field(default_factory=dict)

    @property
    def total_writes(self) -> int:
        return sum(self.writes.values())

    @property
    def writes_per_second(self) -> float:
        before_status = sum(v for k, v in self.writes.items() if not k.endswith("/status"))
        return before_status / self.write_phase_s if self.write_phase_s else 0.0


@dataclass
class _Graph:
    dgd: Obj | None = None
    dcds: list[Obj] = field(default_factory=list)
    deployments: set[str] = field(default_factory=set)
    waiting: int = 0  # the graph's own children not written yet
    enablers: _Countdown | None = None  # starts the components once their enablers exist
    components_started: bool = False
    reported: bool = False


async def run_floor(
    api: Client,
    manifests: list[Obj],
    *,
    namespace: str,
    timeout: float,  # noqa: ASYNC109 - a bound on the whole run
    concurrency: int = DEFAULT_CONCURRENCY,
) -> FloorFigures:
    """Write everything the operator would write for `manifests` (DGDs in `namespace`); a graph's
    statuses are written as soon as all its Deployments are available. Bounded by `timeout`."""
    # DCDs in the version the operator writes them in (operator/registration.py).
    ctx = GenContext(namespace=namespace, dcd_api_version=kinds.DCD.api_version)
    pool = WritePool(concurrency)
    fig = FloorFigures(concurrency=concurrency)
    graphs = [_Graph() for _ in manifests]
    last_write = 0.0

    async def apply(obj: Obj, label: str | None = None) -> Obj:
        nonlocal last_write
        live = await api.apply(kinds.resource_of(obj), obj, field_manager=FIELD_MANAGER)
        fig.writes[label or obj["kind"]] += 1
        last_write = time.monotonic()
        return live

    async def post_event(event: Obj) -> None:
        nonlocal last_write
        await api.create(EVENT, event)
        fig.writes["Event"] += 1
        last_write = time.monotonic()

    def create_graph(g: _Graph, manifest: Obj) -> Job:
        async def job() -> None:
            g.dgd = await apply(manifest)
            children = plan_graph_children(g.dgd, ctx)
            g.waiting = len(children)
            # Deployments wait for every enabler (their DCD, and the ServiceAccount their pods run
            # as: a pod created before it is refused and its ReplicaSet backs off).
            enablers = [c for c in children if c["kind"] in ENABLERS]
            g.enablers = _Countdown(len(enablers), lambda: start_components(g))
            submit_waves(g, graph_waves(children), children)
            pool.submit(Priority.OTHER, annotate_job(g.dgd))

        return job

    def submit_waves(g: _Graph, planned: list[list[Obj]], siblings: list[Obj]) -> None:
        """The first wave now, each later one once the wave before it is written."""
        if not planned:
            return
        wave, later = planned[0], planned[1:]
        written = _Countdown(len(wave), lambda: submit_waves(g, later, siblings))
        for child in wave:
            pool.submit(priority_of(child), graph_child(g, child, siblings, written))

    def annotate_job(dgd: Obj) -> Job:
        """The graph's own two annotations (origin version, serving worker hash) in one patch, as
        the graph reconciler writes them at its first look."""

        async def job() -> None:
            meta = dgd["metadata"]
            body = {"metadata": {"annotations": graph_annotations(dgd)}}
            await api.patch(kinds.DGD, meta["name"], body, namespace=meta["namespace"])
            fig.writes[f"{dgd['kind']}/annotations"] += 1

        return job

    def graph_child(g: _Graph, child: Obj, siblings: list[Obj], wave: _Countdown) -> Job:
        async def job() -> None:
            live = await apply(child)
            wave.tick()
            if is_component(live):
                g.dcds.append(live)
            if child["kind"] in ENABLERS:
                assert g.enablers is not None
                g.enablers.tick()
            g.waiting -= 1
            if g.waiting == 0:  # the graph's own children exist: the graph's Event
                owner = g.dgd or {}
                pool.submit(Priority.EVENT, lambda: post_event(created_event(owner, siblings)))

        return job

    def start_components(g: _Graph) -> None:
        for dcd in g.dcds:
            workload = plan_component_children(dcd, ctx)
            g.deployments.update(o["metadata"]["name"] for o in workload if o["kind"] == "Deployment")
            for obj in workload:
                pool.submit(priority_of(obj), component_child(obj))
        g.components_started = True

    def component_child(obj: Obj) -> Job:
        async def job() -> None:
            await apply(obj)

        return job

    def status_job(obj: Obj) -> Job:
        async def job() -> None:
            resource = kinds.resource_of(obj)
            body = ready_status(obj)
            name = obj["metadata"]["name"]
            await api.patch(resource, name, body, namespace=namespace, subresource="status")
            fig.writes[f"{obj['kind']}/status"] += 1

        return job

    ready: set[str] = set()
    changed = asyncio.Event()

    async def report_ready() -> None:
        """Write the statuses of each graph whose Deployments are all available, as they become so."""
        try:
            while not all(g.reported for g in graphs):
                # Woken by the watch, or at least every POLL_SECONDS for graphs whose components
                # started after the Deployments' last change.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), POLL_SECONDS)
                changed.clear()
                for g in graphs:
                    if g.reported or not g.components_started:
                        continue
                    if g.deployments <= ready:
                        g.reported = True
                        for obj in [*g.dcds, g.dgd or {}]:
                            pool.submit(Priority.STATUS, status_job(obj))
        finally:
            pool.release()

    for g, manifest in zip(graphs, manifests, strict=True):
        pool.submit(Priority.GRAPH, create_graph(g, manifest))
    pool.hold()  # released by the reporter once every graph is reported
    started, cpu_started = time.monotonic(), time.process_time()
    async with asyncio.timeout(timeout):
        async with asyncio.TaskGroup() as group:
            watching = group.create_task(
                track(api, kinds.DEPLOYMENT, namespace, _available, found=ready, changed=changed)
            )
            group.create_task(report_ready())
            await pool.run()
            watching.cancel()
    fig.seconds = time.monotonic() - started
    fig.client_cpu_s = time.process_time() - cpu_started
    fig.write_phase_s = last_write - started
    return fig


async def track(
    api: Client,
    resource: kinds.Resource,
    namespace: str,
    matches: Callable[[Obj], bool],
    *,
    found: set[str],
    changed: asyncio.Event,
) -> None:
    """Keep `found` = names of the objects of `resource` in `namespace` that `matches`, from a watch
    (as the operator's informer learns it; polling LISTs of every object would load the API server
    the operator shares, more so the more objects: at 1,000 graphs a LIST of every DGD each second
    cost the API server more CPU than the operator did), and set `changed` on every change. Runs
    until cancelled; re-watches on close."""
    rv = (await api.list_page(resource, namespace=namespace, limit=1)).resource_version
    while True:
        async with api.watch(resource, namespace=namespace, resource_version=rv) as events:
            async for event in events:
                obj = event.object
                if event.type == "ERROR":
                    raise RuntimeError(f"{resource.kind} watch failed: {obj}")
                rv = obj["metadata"].get("resourceVersion", rv)
                if event.type == "BOOKMARK":
                    continue
                name = obj["metadata"]["name"]
                if event.type != "DELETED" and matches(obj):
                    found.add(name)
                else:
                    found.discard(name)
                changed.set()


class _Countdown:
    """Calls `then()` once, when `tick()` was called `count` times (at once when `count` is 0)."""

    def __init__(self, count: int, then: Callable[[], None]) -> None:
        self._left, self._then = count, then
        if count == 0:
            then()

    def tick(self) -> None:
        self._left -= 1
        if self._left == 0:
            self._then()


def _available(dep: Obj) -> bool:
    status = dep.get("status") or {}
    replicas = (dep.get("spec") or {}).get("replicas", 1)
    return bool(
        status.get("availableReplicas", 0) >= replicas
        and status.get("observedGeneration") == dep["metadata"].get("generation")
    )
