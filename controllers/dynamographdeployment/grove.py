"""The DGD reconciler's Grove pathway: one PodCliqueSet per graph, Services per service, status from Grove.

`GrovePathway.reconcile` is what the graph reconciler runs instead of its DCD pathway when the graph
takes Grove (internal.dynamo.grove `takes_grove`). In order:

1. the graph's objects are generated (PVCs, RBAC, side objects, the PodCliqueSet, Services,
   adapters), worker cliques labelled with the v2 worker hash when grove/workerhash.py says so; a
   graph that cannot run on Grove (bad spec, names over Grove's budget, a missing API) is
   `Rejected` (a condition and one Warning Event) and nothing is written;
2. a graph moving over from DCDs then has its DCDs deleted (their Services carry the names the
   Grove pathway's Services take) and is looked at again shortly; otherwise the objects are synced
   like any children: written when their content changed, the rest pruned;
3. replicas go through the `scale` subresource of the service's PodClique / PodCliqueScalingGroup
   (Grove makes those from the set once; a changed template replica count alone does not resize
   them), only when the live count differs, NotFound ignored (Grove has not made it yet);
4. the graph records the spec's v2 worker hash (`nvidia.com/current-worker-hash-v2`) once the set
   is written, as upstream does; then status is read from the PodCliques and scaling groups Grove
   reports on (grove/readiness.py), a short scaling group explained by its member cliques.

A graph on Grove stays there (its recorded workload provider, grove/provider.py): while the operator
cannot use Grove (flag off, API gone) it is refused with `SelectedWorkloadProviderUnavailable` and
waits. Switching back on purpose (`nvidia.com/enable-grove: "false"`) is the DCD pathway's business:
it prunes the PodCliqueSet and these Services like any child it no longer wants.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog
from dynamo_operator.controllers.dynamographdeployment.desired import children_to_sync, generate_or_reject
from dynamo_operator.controllers.dynamographdeployment.rollout import V2Hashes
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import (
    SYNC_ERRORS,
    ChildClient,
    ChildReader,
    ChildSyncer,
    report_sync_failure,
)
from dynamo_operator.internal.apply.pods import PodLister
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.errors import ApiError, TransportError
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.rejection import Rejected
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph, RestartStatus
from dynamo_operator.internal.dynamo.graph.children import grove_children
from dynamo_operator.internal.dynamo.graph.view import GraphView
from dynamo_operator.internal.dynamo.grove.podcliqueset import (
    grove_services,
    pod_clique_set_name,
    worker_services,
)
from dynamo_operator.internal.dynamo.grove.provider import REASON_PROVIDER_UNAVAILABLE, unavailable_message
from dynamo_operator.internal.dynamo.grove.readiness import (
    ServiceObject,
    grove_graph_status,
    member_clique_names,
    not_ready_cliques,
    restart_rolled,
    restart_values,
)
from dynamo_operator.internal.dynamo.grove.topology_condition import (
    CONDITION_TOPOLOGY_LEVELS_AVAILABLE,
    topology_verdict,
)
from dynamo_operator.internal.dynamo.grove.workerhash import grove_worker_hash
from dynamo_operator.internal.dynamo.rollout.restart import plan_restart
from dynamo_operator.internal.dynamo.rollout.workers import ANNOTATION_V2
from dynamo_operator.internal.dynamo.status.conditions import Condition, StatusCondition, find
from dynamo_operator.internal.dynamo.status.pod_diagnosis import diagnose
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
Fail = Callable[[Obj, str, str], Awaitable[None]]
# The graph, its readiness, its restart status, conditions beside Ready; True: a request was sent.
WriteStatus = Callable[[Obj, GraphStatus, RestartStatus | None, Sequence[Condition]], Awaitable[bool]]
Warn = Callable[[Obj, str, str], None]  # a Warning Event on the graph: reason, message
Annotate = Callable[[Obj, Mapping[str, str]], Awaitable[Obj]]  # the graph, annotations to record

# How soon a graph whose DCDs are being deleted (on its way to Grove) is looked at again: their
# Services go with them through garbage collection, which sends the graph no event.
SWITCH_RECHECK_SECONDS = 2.0


def _kind_resource(kind: str) -> Resource:
    return (
        kinds.POD_CLIQUE_SCALING_GROUP if kind == consts.KIND_POD_CLIQUE_SCALING_GROUP else kinds.POD_CLIQUE
    )


class GrovePathway:
    """Writes and reads one graph's Grove objects (see the module docstring). Stateless."""

    def __init__(
        self, *, client: ChildClient, cache: ChildReader, syncer: ChildSyncer, pods: PodLister | None = None
    ) -> None:
        self._client, self._cache, self._syncer = client, cache, syncer
        self._pods = pods  # by PodClique; None: the graph's message carries Grove's counts alone
        self._v2 = V2Hashes()

    def forget(self, key: str) -> None:
        """Drop what is remembered of a graph that is gone."""
        self._v2.forget(key)

    def _worker_hash(self, view: GraphView, ctx: GenContext, pcs: Obj | None) -> tuple[str, str]:
        """(the spec's v2 worker hash, the hash the worker cliques carry this round); a spec the
        hash cannot be computed for is `Rejected`."""
        workers = worker_services(view.graph)
        try:
            desired = self._v2.hash_of(object_key(view.raw), view.stored, ctx.namespace)
        except GenerationError as err:
            raise Rejected(err.reason, str(err)) from err
        recorded = (view.graph["metadata"].get("annotations") or {}).get(ANNOTATION_V2)
        return desired, grove_worker_hash(desired, workers=workers, live=pcs, recorded=recorded)

    def pod_clique_set(self, graph: Graph) -> Obj | None:
        """The live PodCliqueSet of `graph` (as generation reads it), if it controls one (call only
        while Grove is served)."""
        meta = graph["metadata"]
        # Named after the graph, shortened when the graph's name is too long for Grove.
        pcs = self._cache.get(kinds.POD_CLIQUE_SET, f"{meta.get('namespace')}/{pod_clique_set_name(graph)}")
        if pcs is None:
            return None
        refs = (pcs.get("metadata") or {}).get("ownerReferences") or ()
        return pcs if any(r.get("uid") == meta.get("uid") and r.get("controller") for r in refs) else None

    async def reconcile(
        self,
        view: GraphView,
        ctx: GenContext,
        *,
        dcds: Sequence[Obj],
        owned: Sequence[Resource],
        previous_restart: Any,
        previous_conditions: Sequence[StatusCondition] | None,
        fail: Fail,
        annotate: Annotate,
        write_status: WriteStatus,
        warn: Warn,
    ) -> Result:
        """Steps 1-4 of the module docstring; a graph Grove cannot run raises `Rejected`, and so
        does every graph while the operator cannot use Grove (its recorded pathway: it waits)."""
        if not ctx.capabilities.grove:
            raise Rejected(REASON_PROVIDER_UNAVAILABLE, unavailable_message())
        raw, namespace = view.raw, view.namespace
        services = grove_services(view.graph, ctx)
        targets = [ServiceObject(gs.service, gs.kind, gs.object_name) for gs in services]
        live = {t.name: self._cache.get(_kind_resource(t.kind), f"{namespace}/{t.name}") for t in targets}
        pcs = self.pod_clique_set(view.graph)
        desired_hash, worker_hash = self._worker_hash(view, ctx, pcs)
        plan = plan_restart(
            view.restart,
            list(view.components),
            live_values=restart_values(pcs),
            rolled=restart_rolled(pcs, targets, live),
            previous=previous_restart,
        )
        wanted = generate_or_reject(
            lambda: grove_children(view, ctx, restart_at=plan.values, worker_hash=worker_hash, live_pcs=pcs)
        )
        if dcds:
            # Moving over from DCDs (only once the Grove objects are known to generate, so a graph
            # Grove cannot run keeps its DCDs): delete them first, nothing else, their Services with
            # them.
            await self._syncer.sync(raw, [], owned=[kinds.DCD])
            log.info("Graph moves to Grove; its DCDs are being deleted", graph=view.name)
            return Result(requeue_after=SWITCH_RECHECK_SECONDS)
        try:
            await self._syncer.sync(
                raw,
                children_to_sync(wanted.owned, wanted.shared),
                owned=owned,
                keep=lambda resource, obj: resource == kinds.PVC and view.names_pvc(obj["metadata"]["name"]),
            )
        except SYNC_ERRORS as err:
            return await report_sync_failure(err, functools.partial(fail, raw))
        await self._scale(view, targets, live)
        raw = await annotate(raw, {ANNOTATION_V2: desired_hash})
        previous_topology = find(previous_conditions, CONDITION_TOPOLOGY_LEVELS_AVAILABLE)
        topology = topology_verdict(view.graph, pcs, previous_topology)
        extra = [topology.condition] if topology is not None else []
        await write_status(raw, await self._verdict(namespace, targets, live), plan.status, extra)
        if topology is not None and topology.warning:
            # After the write, so a failed write re-decides (and warns) on the retry.
            warn(raw, topology.condition.reason, topology.warning)
        return Result()

    async def _verdict(
        self, namespace: str, targets: Sequence[ServiceObject], live: Mapping[str, Obj | None]
    ) -> GraphStatus:
        """The graph's readiness from what Grove reports; a scaling group's member cliques say which
        part of it is short (e.g. its leader), and the pods of what is not ready say why."""
        members = {
            name: self._cache.get(kinds.POD_CLIQUE, f"{namespace}/{name}")
            for t in targets
            if t.kind == consts.KIND_POD_CLIQUE_SCALING_GROUP and (group := live.get(t.name)) is not None
            for name in member_clique_names(group)
        }
        pods_say = await self._pods_say(namespace, not_ready_cliques(targets, live, members))
        return grove_graph_status(targets, live, members, pods_say)

    async def _pods_say(self, namespace: str, cliques: Mapping[str, Sequence[str]]) -> dict[str, str]:
        """What the pods of each not-ready Grove object say (pod_diagnosis), by the object's name;
        nothing for an object whose pods show no problem, or when they cannot be listed."""
        out: dict[str, str] = {}
        if self._pods is None:
            return out
        for name, clique_names in cliques.items():
            try:
                pods = [p for clique in clique_names for p in await self._pods(namespace, clique)]
            except (ApiError, TransportError) as err:
                log.info("Cannot list the pods of a Grove object", name=name, error=str(err))
                continue
            if (diagnosis := diagnose(pods)) is not None:
                out[name] = diagnosis.message
        return out

    async def _scale(
        self, view: GraphView, targets: Sequence[ServiceObject], live: dict[str, Obj | None]
    ) -> None:
        """Each service's replicas through its Grove object's scale subresource, when they differ."""
        namespace = view.namespace
        for target in targets:
            component = view.components.get(target.service)
            want = component.get("replicas") if component is not None else None
            obj = live.get(target.name)
            if want is None or obj is None or (obj.get("spec") or {}).get("replicas") == want:
                continue
            try:
                await self._client.patch(
                    _kind_resource(target.kind),
                    target.name,
                    {"spec": {"replicas": int(want)}},
                    namespace=namespace,
                    subresource="scale",
                )
            except errors.NotFound:
                continue  # Grove has not made it (or just removed it); its next event brings us back
            log.info("Scaled Grove object", kind=target.kind, name=target.name, replicas=want)
