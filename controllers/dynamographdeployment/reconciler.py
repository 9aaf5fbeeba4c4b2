"""DynamoGraphDeployment reconciler: a DCD per service, the graph's PVCs and adapters, honest status.

Reads the DGD and its children from the cache, generates the desired children with internal.dynamo,
writes only those whose content changed and prunes children of removed services. It never writes
the DGD's own spec (so a component's `replicas`, owned by a scaling adapter when one is enabled,
has exactly one writer), creates nothing while the DGD is being deleted, and writes status only when
it changed.

Restart progress is derived from the cluster, not from memory: each DCD carries the restart id it
was last restarted for (`spec.annotations["nvidia.com/restartAt"]`) and reports whether its workload
has rolled (`observedGeneration` caught up and `Available`). See `plan_restart`.

Worker DCDs are named with the graph's worker hash; after a worker spec edit a single-node graph's
workers are rolled service by service in `status.rollingUpdate` (graph_rollout.py, the decision in
internal/dynamo/rollout/rollingupdate.py), a multinode graph's are replaced as a whole once the new ones
serve.
The hash naming the workers follows upstream's two eras (internal/dynamo/rollout/workers.py: the recorded v1
hash while the spec is unchanged, else the v2 hash of workerhash_v2.py), so graphs upstream deployed
are taken over in place. The graph's own metadata gets the origin version (`graph/meta.py`) and, once a
worker generation serves alone, its hash annotations (`nvidia.com/current-worker-hash-v2`, plus the
v1 one while a v1 generation serves), in one patch and only when they change.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import structlog
from dynamo_operator.controllers.dynamographdeployment.desired import children_to_sync, generate_or_reject
from dynamo_operator.controllers.dynamographdeployment.grove import GrovePathway
from dynamo_operator.controllers.dynamographdeployment.rollout import (
    RECORDED,
    Rollout,
    WorkerRoller,
)
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import (
    SYNC_ERRORS,
    ChildClient,
    ChildReader,
    ChildrenOwnedByOthers,
    ChildSyncer,
    RecentWrites,
    Recorder,
    RefusalReporter,
    StatusWriter,
    SyncReport,
    TerminatingNamespaces,
    report_sync_failure,
)
from dynamo_operator.internal.apply.pods import PodLister, pods_labelled
from dynamo_operator.internal.client.resource import Resource, object_key, split_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.builder import Builder, Built
from dynamo_operator.internal.controller.predicates import (
    CHILD_CONTENT_CHANGED,
    CHILD_STATUS_CHANGED,
    Funcs,
    Predicate,
    annotation_changed,
    any_of,
    generation_changed,
)
from dynamo_operator.internal.controller.rejection import Rejected
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.dynamo.common.context import GenContext, SharedContexts
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.hashing import LAST_APPLIED_HASH
from dynamo_operator.internal.dynamo.common.inputs import RestartStatus, component_view, dgd_status_view
from dynamo_operator.internal.dynamo.common.stored_terms import graph_message
from dynamo_operator.internal.dynamo.graph import grove_only, lowering
from dynamo_operator.internal.dynamo.graph.children import dcd_children
from dynamo_operator.internal.dynamo.graph.generate import dcd_names
from dynamo_operator.internal.dynamo.graph.meta import annotations_to_write
from dynamo_operator.internal.dynamo.graph.view import GraphView, read_graph
from dynamo_operator.internal.dynamo.grove.podcliqueset import takes_grove
from dynamo_operator.internal.dynamo.grove.provider import provider_of
from dynamo_operator.internal.dynamo.rollout.restart import RestartPlan, dcd_restart_id, plan_restart
from dynamo_operator.internal.dynamo.rollout.rollingupdate import (
    RollingPlan,
    with_new_replicas,
)
from dynamo_operator.internal.dynamo.rollout.workers import (
    WorkerGeneration,
    hash_annotations_patch,
    service_of,
)
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.dgd_status import explain, rejected_status, synced_status
from dynamo_operator.internal.dynamo.status.readiness import (
    GraphStatus,
    dcd_became_rolled,
    dcd_rolled,
    graph_status,
    nothing_to_report_yet,
)
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.observability.reconcile_metrics import observed
from dynamo_operator.internal.settings import Settings

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
GenContextFor = Callable[[str], GenContext]
Mapper = Callable[[Obj], Iterable[str]]


CONTROLLER_NAME = "dynamographdeployment"
COMPONENT_BECAME_READY: Predicate = Funcs(on_update=dcd_became_rolled)


# --- reconciler -------------------------------------------------------------------------------------


class DynamoGraphDeploymentReconciler:
    """Turns one DGD into DCDs, PVCs and scaling adapters, and reports the graph's readiness."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        gen_context: GenContextFor,
        clock: Clock | None = None,
        terminating: TerminatingNamespaces | None = None,
        pods: PodLister | None = None,
        clique_pods: PodLister | None = None,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._clock: Clock = clock or RealClock()
        self._terminating = (
            terminating if terminating is not None else TerminatingNamespaces(clock=self._clock)
        )
        self._gen_context = SharedContexts(gen_context)  # one context per namespace in `graph_inputs`
        # The kinds of optional APIs (InferencePools, Grove's) join and leave `owned` as their APIs
        # come and go: operator/optional_ownership.py sets it, from internal/optional_api_table.py.
        self.owned: tuple[Resource, ...] = (
            kinds.DCD,
            kinds.PVC,
            kinds.DGDSA,
            kinds.SERVICE,  # model Services
            kinds.SERVICE_ACCOUNT,  # discovery RBAC
            kinds.ROLE,
            kinds.ROLE_BINDING,
            kinds.CONFIG_MAP,  # wait-for-leader script, EPP config
        )
        self._syncer = ChildSyncer(
            client=client,
            cache=cache,
            recorder=recorder,
            field_manager=consts.FIELD_MANAGER,
            stamp=LAST_APPLIED_HASH,
            confirm_owner=kinds.DGD,
            terminating=self._terminating,
            owner_api_version=consts.STORAGE_API_VERSION,  # children name the graph/DCD as stored
        )
        self._status = StatusWriter(client, kinds.DGD)
        self._refusals = RefusalReporter(self._status, rejected_status, recorder, clock=self._clock)
        self._annotated = RecentWrites()  # our annotation patches the cache may not show yet
        self._grove = GrovePathway(client=client, cache=cache, syncer=self._syncer, pods=clique_pods)
        self._roller = WorkerRoller(
            client=client, cache=cache, recorder=recorder, clock=self._clock, pods=pods
        )

    def setup(self, b: Builder) -> None:
        """For DGD (spec or annotation changes); Owns DCDs (their status drives ours), PVCs, adapters;
        Watches PVCs a graph names but does not own, so a user creating one re-triggers the graph."""
        b.for_(kinds.DGD, predicates=(any_of(generation_changed, annotation_changed),))
        for resource in self.owned:
            reads_status = resource == kinds.DCD
            b.owns(
                resource,
                predicates=(CHILD_STATUS_CHANGED if reads_status else CHILD_CONTENT_CHANGED,),
                # A component that just became ready may finish the graph: its status goes first.
                urgent=COMPONENT_BECAME_READY if reads_status else None,
            )
        b.watches(kinds.PVC, self.graphs_naming_pvc)

    def graphs_naming_pvc(self, pvc: Obj) -> list[str]:
        """Keys of the DGDs in the PVC's namespace whose `spec.pvcs` (a v1alpha1 field: as stored,
        it travels in the reserved annotation, so the graph is read lowered) lists it."""
        meta = pvc.get("metadata") or {}
        name, namespace = meta.get("name"), meta.get("namespace")
        if not namespace:
            return []
        out = []
        for dgd in self._cache.by_index(kinds.DGD, "namespace", str(namespace)):
            try:
                pvcs = lowering.lowered_graph(dgd)["spec"].get("pvcs") or ()
            except GenerationError:
                continue  # refused by its own reconcile; a PVC changes nothing for it
            if any(p.get("name") == name for p in pvcs):
                out.append(object_key(dgd))
        return out

    async def reconcile(self, key: str) -> Result:
        """Read → generate → sync → status, on the Grove pathway or the DCD one."""
        raw = self._cache.get(kinds.DGD, key)
        if raw is None or raw["metadata"].get("deletionTimestamp"):
            if raw is not None:
                lowering.forget(str(raw["metadata"].get("uid") or ""))
            self._roller.forget(key)
            self._syncer.forget(key)
            self._grove.forget(key)
            return Result()  # gone, or going (foreground deletion): create nothing, GC does the rest
        if (left_alone := self._terminating.leave_alone(raw)) is not None:
            return left_alone  # its namespace is being deleted (internal/apply/terminating.py)
        ctx = self._gen_context(split_key(key)[0] or "")
        children = self._cache.by_index(kinds.DCD, "controller", raw["metadata"]["uid"])
        try:
            view = read_graph(raw, children=children, operator_version=ctx.operator_version)
        except GenerationError as err:
            # A spec v1alpha1 cannot hold (a gap in the conversion generation reads it through).
            await self._refusals.reject(raw, Rejected("InvalidSpec", str(err)))
        provider: str | None = None  # the pathway taken, recorded on the graph with its other stamps
        try:
            try:
                grove = self._takes_grove(view, ctx, children)
                provider = provider_of(grove)
                if grove:
                    return await self._reconcile_grove(view, ctx, children)
                return await self._reconcile(view, ctx, children)
            except Rejected as rejected:
                if rejected.reason == grove_only.REASON:
                    # Refused for wanting Grove: not pinned to the component pathway, so it takes
                    # Grove once Grove is there (upstream's admission would have stored nothing).
                    provider = None
                # Generation names v1alpha1 fields; the graph is stored (and mostly written) as v1beta1.
                told = Rejected(rejected.reason, graph_message(rejected.message, view.components))
                await self._refusals.reject(view.raw, told)
        except TerminalError:
            # A refused graph is stamped too (and keeps the pathway it was refused on).
            await self._annotate(view.raw, origin=view.origin, provider=provider)
            raise

    async def _reconcile(self, view: GraphView, ctx: GenContext, children: Sequence[Obj]) -> Result:
        """The DCD pathway: a DCD per service (workers named by the worker hash, rolled by `WorkerRoller`)."""
        generation = self._worker_generation(view, children)
        new_hash = generation.active
        names = self._dcd_names(view, new_hash)
        restart = self._plan_restart(view, children, names)
        rollout = await self._roller.plan(
            view.graph,
            names=names,
            new_hash=new_hash,
            children=children,
            previous=self._status.current(view.raw).get("rollingUpdate"),
        )
        keep = functools.partial(_kept, view, rollout.plan)
        inputs = graph_inputs(view, ctx, restart, rollout.plan, new_hash)
        report = self._syncer.unchanged(view.raw, inputs, owned=self.owned, keep=keep)
        if report is not None:
            # Nothing generation reads changed since the last complete sync, and every child is
            # still as it left it (a component's progress brought us here): no generation, no sync.
            dcds = [o for (r, _), o in report.current.items() if r == kinds.DCD]
        else:
            wanted = generate_or_reject(
                lambda: dcd_children(view, ctx, restart_at=restart.values, worker_hash=new_hash)
            )
            desired = with_new_replicas(wanted.owned, rollout.plan.new_replicas)
            try:
                report = await self._syncer.sync(
                    view.raw,
                    children_to_sync(desired, wanted.shared),
                    owned=self.owned,
                    keep=keep,
                    inputs=inputs,
                )
            except SYNC_ERRORS as err:
                if isinstance(err, ChildrenOwnedByOthers):
                    await self._annotate(
                        view.raw, origin=view.origin, provider=consts.WORKLOAD_PROVIDER_COMPONENT
                    )
                return await report_sync_failure(err, functools.partial(self._refusals.fail, view.raw))
            dcds = [o for o in desired if o.get("kind") == kinds.DCD.kind]
        # Before the status: a graph reported Ready already names the workers that serve. The status
        # is then written against the patched object, so its in-flight record matches what the cache
        # shows next (the annotation event) and the same status is not sent twice.
        await self._roller.scale_old(view.namespace, rollout.plan.old_replicas)
        self._roller.not_supported(view.raw, rollout, report.created, new_hash)
        settled = rollout.plan.serving_hash == new_hash and not rollout.plan.keep
        raw = await self._annotate(
            view.raw,
            origin=view.origin,
            provider=consts.WORKLOAD_PROVIDER_COMPONENT,
            hashes=generation,
            settled=settled,
        )
        current = self._current_dcds(dcds, report)
        return await self._report(view, raw, current, restart=restart, rollout=rollout, new_hash=new_hash)

    def _worker_generation(self, view: GraphView, children: Sequence[Obj]) -> WorkerGeneration:
        """The hash naming the graph's worker DCDs (v1 or v2 era, rollout.py); a spec it cannot be
        computed for is `Rejected`."""
        try:
            return self._roller.generation(
                object_key(view.raw),
                view.graph,
                stored=view.stored,
                children=children,
                previous=self._status.current(view.raw).get("rollingUpdate"),
            )
        except GenerationError as err:
            raise Rejected("InvalidSpec", str(err)) from err

    def _dcd_names(self, view: GraphView, worker_hash: str) -> dict[str, str]:
        """The services' DCD names; a spec they cannot be made of is `Rejected`."""
        try:
            return dcd_names(view.graph, worker_hash=worker_hash)
        except GenerationError as err:
            raise Rejected("InvalidSpec", str(err)) from err

    def _plan_restart(
        self, view: GraphView, children: Sequence[Obj], names: Mapping[str, str]
    ) -> RestartPlan:
        """This round's restart step, from the restart ids the current DCDs carry and whether they rolled."""
        live = self._live_dcds(children, names)
        return plan_restart(
            view.restart,
            list(view.components),
            live_values={s: restart_value(d) for s, d in live.items()},
            rolled={s: dcd_rolled(component_view(d)) and restart_acknowledged(d) for s, d in live.items()},
            previous=self._status.current(view.raw).get("restart"),
        )

    async def _report(
        self,
        view: GraphView,
        raw: Obj,
        current: Mapping[str, Obj | None],
        *,
        restart: RestartPlan,
        rollout: Rollout,
        new_hash: str,
    ) -> Result:
        """The graph's status from its DCDs as synced (`raw`: the graph as last written), and the
        rollout's Events once that status is out."""
        keep_serving = rollout.note(new_hash)
        absent = view.missing_user_pvcs(
            lambda name: self._cache.get(kinds.PVC, f"{view.namespace}/{name}") is not None
        )
        verdict = explain(
            graph_status(view.components, current), keep_serving=keep_serving, missing_pvcs=absent
        )
        if not absent and nothing_to_report_yet(self._status.current(raw), verdict, current):
            return Result()  # the DCDs' first status brings us back with something to say
        if await self._write_status(raw, verdict, restart.status, rollout.plan):
            self._roller.record(raw, rollout.plan.events)
        return Result(requeue_after=rollout.plan.requeue_after)

    # -- the Grove pathway (grove.py) ---------------------------------------------

    def _takes_grove(self, view: GraphView, ctx: GenContext, children: Sequence[Obj]) -> bool:
        """The graph's pathway (grove/podcliqueset.py `takes_grove`, from its recorded workload
        provider once it has one); an unknown record is `Rejected`."""
        has_pcs = ctx.capabilities.grove and self._grove.pod_clique_set(view.graph) is not None
        try:
            return takes_grove(view.graph, ctx, has_dcds=bool(children), has_pod_clique_set=has_pcs)
        except GenerationError as err:
            raise Rejected(err.reason, str(err)) from err

    async def _reconcile_grove(self, view: GraphView, ctx: GenContext, children: Sequence[Obj]) -> Result:
        """One PodCliqueSet instead of DCDs; no worker rollout (Grove rolls its own pods), the worker
        hash only labels worker cliques and is recorded on the graph."""

        async def annotate(obj: Obj, record: Mapping[str, str]) -> Obj:
            return await self._annotate(
                obj, origin=view.origin, provider=consts.WORKLOAD_PROVIDER_GROVE, record=record
            )

        current = self._status.current(view.raw)
        return await self._grove.reconcile(
            view,
            ctx,
            dcds=children,
            owned=self.owned,
            previous_restart=current.get("restart"),
            previous_conditions=current.get("conditions"),
            fail=self._refusals.fail,
            annotate=annotate,
            write_status=self._write_grove_status,
            warn=lambda raw, reason, message: self._recorder.event(
                raw, type="Warning", reason=reason, message=message
            ),
        )

    async def _annotate(
        self,
        raw: Obj,
        *,
        origin: str | None,
        provider: str | None,
        hashes: WorkerGeneration | None = None,
        settled: bool = False,
        record: Mapping[str, str] | None = None,
    ) -> Obj:
        """Merge-patch the graph's origin-version, workload-provider (the pathway it took: None
        when none was chosen) and worker-hash annotations when they change (the hashes once their
        generation serves alone, `settled`), and the Grove pathway's `record`; returns the graph as
        written (`raw` itself when nothing was)."""
        meta = raw["metadata"]
        key = ("annotations", meta.get("namespace", ""), meta["name"])
        in_flight = self._annotated.in_flight(key, raw)
        current = dict(in_flight if in_flight is not None else meta.get("annotations") or {})
        patch: dict[str, str | None] = dict(annotations_to_write(current, origin=origin, serving_hash=None))
        if hashes is not None:
            patch.update(hash_annotations_patch(current, hashes, settled=settled))
        wanted = {**(record or {}), **({consts.ANNOTATION_WORKLOAD_PROVIDER: provider} if provider else {})}
        patch.update({k: v for k, v in wanted.items() if current.get(k) != v})
        if not patch:
            return raw
        written = await self._client.patch(
            kinds.DGD, meta["name"], {"metadata": {"annotations": patch}}, namespace=meta.get("namespace")
        )
        merged = {**current, **patch}
        self._annotated.remember(
            key, raw, {k: v for k, v in merged.items() if v is not None}, written=written
        )
        return written

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _live_dcds(children: Sequence[Obj], names: Mapping[str, str]) -> dict[str, Obj]:
        """This graph's current DCDs by service: the one with the name the spec gives (an old worker
        DCD kept during a rollout is not the service's current one)."""
        out: dict[str, Obj] = {}
        for dcd in children:
            svc = service_of(dcd)
            if svc is not None and names.get(svc) == dcd["metadata"]["name"]:
                out[svc] = dcd
        return out

    @staticmethod
    def _current_dcds(desired: Sequence[Obj], report: SyncReport) -> dict[str, Obj | None]:
        out: dict[str, Obj | None] = {}
        for dcd in desired:
            svc = service_of(dcd)
            if svc is not None:
                out[svc] = report.get(kinds.DCD, dcd["metadata"]["name"])
        return out

    async def _write_grove_status(
        self, raw: Obj, verdict: GraphStatus, restart: RestartStatus | None, extra: Sequence[Condition]
    ) -> bool:
        """The Grove pathway's status write: no rollout (Grove rolls its own pods), its topology
        condition beside Ready."""
        return await self._write_status(raw, verdict, restart, extra=extra)

    async def _write_status(
        self,
        raw: Obj,
        verdict: GraphStatus,
        restart: RestartStatus | None,
        rolling: RollingPlan | None = None,
        extra: Sequence[Condition] = (),
    ) -> bool:
        """Write the graph's status; True when a request was sent."""
        old = self._status.current(raw)
        generation = raw["metadata"].get("generation")
        status = synced_status(
            dgd_status_view(old),
            verdict,
            generation=generation,
            restart=restart,
            rolling=rolling,
            extra=extra,
            now=self._clock.wall(),
        )
        return await self._status.write(raw, status)


def graph_inputs(
    view: GraphView, ctx: GenContext, restart: RestartPlan, rolling: RollingPlan, new_hash: str
) -> tuple[object, ...] | None:
    """Everything the DCD pathway's children, and the prune rule `_kept`, are made of besides the
    graph's identity (namespace, name, UID: its key and the remembered sync pin them): its spec (by
    `metadata.generation`, which the API server bumps on every spec change), apiVersion, labels,
    annotations as generation sees them, the worker hash, the context, this round's restart ids and the
    rollout's replica counts and kept DCDs. None without a generation: then every reconcile generates.

    The annotations are those of `view.graph` (which carries the origin version before the graph is
    stamped with it) without the ones `_annotate` records once the graph is synced (`RECORDED`: the
    worker hashes, handed to generation as `new_hash`, and the pathway, the reconciler's choice). The
    write that records them would otherwise make the next reconcile generate every child again for the
    same result: at 1,000 graphs, a second generation of each graph."""
    if view.generation is None:
        return None
    meta = view.graph["metadata"]
    annotations = meta.get("annotations") or {}
    return (
        view.generation,
        view.graph.get("apiVersion"),
        meta.get("labels"),
        {k: v for k, v in annotations.items() if k not in RECORDED},
        new_hash,
        ctx,
        restart.values,
        dict(rolling.new_replicas),
        rolling.keep,
    )


def _kept(view: GraphView, rolling: RollingPlan, resource: Resource, obj: Obj) -> bool:
    """Children not pruned although not desired: a PVC the graph still names (its entry may have
    turned create: false), and old workers still serving while their successors start."""
    name = obj["metadata"]["name"]
    return (resource == kinds.PVC and view.names_pvc(name)) or (
        resource == kinds.DCD and name in rolling.keep
    )


def restart_value(dcd: Obj) -> str | None:
    """The restart id a DCD was last restarted for."""
    return dcd_restart_id(component_view(dcd))


def restart_acknowledged(dcd: Obj) -> bool:
    """The DCD's controller has acted on the restart id it carries (or it carries none)."""
    wanted = restart_value(dcd)
    seen = ((dcd.get("metadata") or {}).get("annotations") or {}).get(consts.ANNOTATION_RESTART_OBSERVED)
    return wanted is None or seen == wanted


def build(mgr: Manager, settings: Settings) -> Built[DynamoGraphDeploymentReconciler]:
    """The graph controller; the optional kinds (InferencePools, Grove's) are owned by the wiring's
    OptionalOwnership, as their APIs come and go."""
    reconciler = DynamoGraphDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        gen_context=settings.gen_context,
        # A consistent read: a drained generation must never miss a pod still running.
        pods=pods_labelled(mgr.client, consts.LABEL_SELECTOR, consistent=True),
        clique_pods=pods_labelled(mgr.client, consts.GROVE_LABEL_PODCLIQUE),
    )
    b = mgr.builder(CONTROLLER_NAME)
    reconciler.setup(b)
    return Built(b.complete(observed(reconciler, kinds.DGD)), reconciler)
