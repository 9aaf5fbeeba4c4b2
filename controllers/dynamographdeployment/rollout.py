"""The graph reconciler's worker rollout step: chooses the hash naming the worker DCDs, reads what the
decision needs from the cache, scales the old worker DCDs down, and records the rollout's Events. The
decisions themselves are pure (internal/dynamo/rollout/workers.py for the worker generation and whole-set
replacement, rollingupdate.py for single-node graphs, recreate.py for services rolled the Recreate way).

The one read that is not from the cache: the pods of a Recreate service's old DCDs, listed from the API
server once those DCDs are at zero (a Deployment's status does not count pods being deleted, and the
graph controller keeps no pod cache). It is a consistent read, so a pod is never missed for a stale
view, and it happens only while a Recreate rollout waits for its old pods, once per round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from dynamo_operator.api.v1alpha1.enums import RollingUpdatePhase as Phase
from dynamo_operator.api.views.v1alpha1 import RollingUpdateStatus
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import ChildClient, ChildReader, RecentWrites, Recorder
from dynamo_operator.internal.apply.pods import PodLister
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.dynamo.common.inputs import Graph, StoredGraph
from dynamo_operator.internal.dynamo.graph.generate import services_of
from dynamo_operator.internal.dynamo.graph.workernames import graph_worker_generation
from dynamo_operator.internal.dynamo.rollout import recreate, rollingupdate
from dynamo_operator.internal.dynamo.rollout.rollingupdate import RUNNING, Event, RollingPlan
from dynamo_operator.internal.dynamo.rollout.workerhash import is_worker
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2
from dynamo_operator.internal.dynamo.rollout.workers import (
    ANNOTATION_V1,
    ANNOTATION_V2,
    WorkerGeneration,
    plan_worker_rollout,
    service_of,
)
from dynamo_operator.internal.timestamps import rfc3339

Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Rollout:
    """One round's plan plus whether the graph is rolled the managed way."""

    plan: RollingPlan
    managed: bool
    old_left: bool  # some worker DCD of an older spec is still live

    def note(self, new_hash: str) -> str | None:
        """What the graph's Ready condition adds while this rollout waits: Recreate services waiting
        for their old workers, or a multinode graph's old workers serving until the new ones are."""
        if self.plan.note:
            return self.plan.note
        if self.old_left and not self.managed and self.plan.keep:
            return (
                f"workers {self.plan.serving_hash or 'of the previous spec'} keep serving until workers"
                f" {new_hash} are ready"
            )
        return None


# The graph annotations the reconciler writes from what it computed (the worker hashes it named the
# workers with, the pathway it took): never an input of what it computes.
RECORDED = frozenset({ANNOTATION_V1, ANNOTATION_V2, consts.ANNOTATION_WORKLOAD_PROVIDER})


class V2Hashes:
    """The v2 worker hash of each graph, computed again only when what it is made of changes.

    It is made of the spec (`metadata.generation` moves with every spec change), the namespace and
    the graph's annotations (upstream copies some into the pods; the reserved `nvidia.com/dgd-spec`
    shapes the v1beta1 view), minus the ones the operator records from it (the two hashes, the
    pathway: `RECORDED`). Hashing
    generates and encodes every worker DCD: too much for each of the four or five reconciles a graph
    gets on its way to Ready."""

    def __init__(self, compute: Callable[[Graph | StoredGraph, str], str] = worker_hash_v2) -> None:
        self._compute = compute
        self._known: dict[str, tuple[tuple[object, ...], str]] = {}

    def __len__(self) -> int:
        return len(self._known)

    def hash_of(self, key: str, graph: Graph | StoredGraph, namespace: str) -> str:
        """The v2 hash of `graph`: as stored (the reconciler's), or in v1alpha1 (tests)."""
        meta = graph["metadata"]
        annotations = meta.get("annotations") or {}
        inputs = (
            meta.get("uid"),
            meta.get("generation"),
            namespace,
            tuple(sorted((k, v) for k, v in annotations.items() if k not in RECORDED)),
        )
        known = self._known.get(key)
        if known is not None and known[0] == inputs:
            return known[1]
        value = self._compute(graph, namespace)  # raises for a spec it cannot generate: nothing kept
        if isinstance(inputs[1], int) and inputs[0]:
            self._known[key] = (inputs, value)
        else:
            self._known.pop(key, None)
        return value

    def forget(self, key: str) -> None:
        self._known.pop(key, None)


# A graph that is not rolled by this module at all (the Grove pathway: Grove rolls its own pods).
NO_ROLLOUT: Final = Rollout(plan=RollingPlan(status=None), managed=False, old_left=False)


class WorkerRoller:
    """Plans each round of a graph's worker rollout and carries out the parts that are not children
    of the desired set (old DCDs' replicas, Events)."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        clock: Clock | None = None,
        pods: PodLister | None = None,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        # Without a lister (unit tests of other steps) a Recreate service's old pods are never
        # known to be gone, so its new workers never start: the safe side of the barrier.
        self._pods = pods
        self._clock: Clock = clock or RealClock()
        self._scaled = RecentWrites()  # replicas we patched that the cache may not show yet
        self._v2 = V2Hashes()

    def generation(
        self,
        key: str,
        graph: Graph,
        *,
        stored: StoredGraph | None = None,
        children: Sequence[Obj],
        previous: Mapping[str, Any] | None,
    ) -> WorkerGeneration:
        """The hash naming the worker DCDs of `graph` this round (rollout.worker_generation), from its
        annotations, its live worker DCDs and its last rollout phase (`previous`). `stored`: the same
        graph as stored, which the v2 hash reads as it is (without it, `graph` is converted up).
        Raises GenerationError when the graph cannot be generated."""
        namespace = graph["metadata"].get("namespace") or ""
        return graph_worker_generation(
            graph,
            v2=self._v2.hash_of(key, graph if stored is None else stored, namespace),
            children=children,
            rolling=Phase((previous or {}).get("phase") or "") in RUNNING,
        )

    def forget(self, key: str) -> None:
        self._v2.forget(key)

    async def plan(
        self,
        graph: Graph,
        *,
        names: Mapping[str, str],
        new_hash: str,
        children: Sequence[Obj],
        previous: RollingUpdateStatus | None,
    ) -> Rollout:
        """This round's rollout of `graph`, whose services map to DCD `names` (worker hash `new_hash`)."""
        namespace = graph["metadata"].get("namespace") or ""
        services = services_of(graph)
        workers = {svc: spec for svc, spec in services.items() if is_worker(spec)}
        views = {names[svc]: self._cache.get(kinds.DCD, f"{namespace}/{names[svc]}") for svc in workers}
        managed = rollingupdate.supports_managed_rollout(services)
        graph_annotations = graph["spec"].get("annotations") or {}
        drains = await self._drains(namespace, names, workers, children, graph_annotations)
        plan = rollingupdate.plan_rolling_update(
            previous=previous,
            desired=names,
            workers=workers,
            new_hash=new_hash,
            live=children,
            views=views,
            managed=managed,
            now=rfc3339(self._clock.wall()),
            graph_annotations=graph_annotations,
            drains=drains,
        )
        old_left = bool(rollingupdate.old_worker_dcds(desired=names, workers=workers, live=children))
        if not managed:
            # Replaced as a whole: old workers kept while they serve and their successors do not yet.
            whole = plan_worker_rollout(
                desired=names, workers=frozenset(workers), new_hash=new_hash, live=children, views=views
            )
            plan = replace(plan, keep=whole.keep, serving_hash=whole.serving_hash)
        return Rollout(plan=plan, managed=managed, old_left=old_left)

    async def _drains(
        self,
        namespace: str,
        names: Mapping[str, str],
        workers: Mapping[str, Any],
        children: Sequence[Obj],
        graph_annotations: Mapping[str, Any],
    ) -> dict[str, recreate.Drain]:
        """How far each Recreate service's old generation has stopped; its pods are listed only once
        its old DCDs are all at zero."""
        services = recreate.recreate_services(workers, graph_annotations)
        if not services:
            return {}
        old = rollingupdate.old_worker_dcds(desired=names, workers=workers, live=children)
        out: dict[str, recreate.Drain] = {}
        for svc in sorted(services):
            dcds = [d for d in old if service_of(d) == svc]
            pods: list[Obj] | None = None
            if recreate.needs_pods(dcds) and self._pods is not None:
                pods = []
                for dcd in dcds:
                    pods.extend(await self._pods(namespace, str(dcd["metadata"]["name"])))
            out[svc] = recreate.drain_of(dcds, pods)
        return out

    async def scale_old(self, namespace: str, replicas: Mapping[str, int]) -> None:
        """Merge-patch `spec.replicas` of old worker DCDs (a DCD gone meanwhile needs nothing)."""
        for name, count in sorted(replicas.items()):
            key = ("replicas", namespace, name)
            live = self._cache.get(kinds.DCD, f"{namespace}/{name}")
            if self._scaled.in_flight(key, live) == count:
                continue  # sent already; the cache has not caught up
            try:
                written = await self._client.patch(
                    kinds.DCD, name, {"spec": {"replicas": count}}, namespace=namespace
                )
            except errors.NotFound:
                continue
            self._scaled.remember(key, live, count, written=written)

    def record(self, graph: Obj, events: Sequence[Event]) -> None:
        for event in events:
            self._recorder.event(
                graph,
                type="Warning" if event.type == "Warning" else "Normal",
                reason=event.reason,
                message=event.message,
            )

    def not_supported(self, graph: Obj, rollout: Rollout, created: Sequence[str], new_hash: str) -> None:
        """One Warning when a multinode graph's new workers are created beside old ones."""
        if rollout.managed or not rollout.old_left:
            return
        if any(name.endswith(f"-{new_hash}") for name in created):
            self.record(graph, [rollingupdate.not_supported_event(new_hash)])
