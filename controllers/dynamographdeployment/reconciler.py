"""DynamoGraphDeployment reconciler: a DCD per service, the graph's PVCs and adapters, honest status.

Reads the DGD and its children from the cache, generates the desired children with internal.dynamo,
writes only those whose content changed and prunes children of removed services. It never writes
the DGD's own spec (so `spec.services[x].replicas`, owned by a scaling adapter when one is enabled,
has exactly one writer), creates nothing while the DGD is being deleted, and writes status only when
it changed.

Restart progress is derived from the cluster, not from memory: each DCD carries the restart id it
was last restarted for (`spec.annotations["nvidia.com/restartAt"]`) and reports whether its workload
has rolled (`observedGeneration` caught up and `Available`). See `plan_restart`.

Worker DCDs are named with the graph's worker hash; after a worker spec edit a single-node graph's
workers are rolled service by service in `status.rollingUpdate` (graph_rollout.py, the decision in
internal/dynamo/rollingupdate.py), a multinode graph's are replaced as a whole once the new ones serve.
The graph's own metadata gets two annotations, the origin version and the serving worker hash
(`graphmeta`), in one patch and only when they change.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import structlog
from dynamo_operator.controllers.dynamographdeployment.grove import GrovePathway
from dynamo_operator.controllers.dynamographdeployment.rollout import NO_ROLLOUT, Rollout, WorkerRoller
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import (
    SYNC_ERRORS,
    ChildClient,
    ChildReader,
    ChildrenOwnedByOthers,
    ChildSyncer,
    Desired,
    RecentWrites,
    Recorder,
    StatusWriter,
    SyncReport,
    report_sync_failure,
)
from dynamo_operator.internal.client.resource import Resource, object_key, split_key
from dynamo_operator.internal.controller.builder import Builder, Built
from dynamo_operator.internal.controller.predicates import (
    CHILD_CONTENT_CHANGED,
    CHILD_STATUS_CHANGED,
    annotation_changed,
    any_of,
    generation_changed,
)
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.dynamo import conditions
from dynamo_operator.internal.dynamo.conditions import Condition
from dynamo_operator.internal.dynamo.context import GenContext
from dynamo_operator.internal.dynamo.errors import GenerationError, NameCollisionError
from dynamo_operator.internal.dynamo.graph import (
    dcd_names,
    desired_graph_objects,
    desired_shared_objects,
    graph_worker_hash,
    missing_apis,
    shared_between_owners,
)
from dynamo_operator.internal.dynamo.graphmeta import (
    annotations_to_write,
    origin_version,
    with_origin_version,
)
from dynamo_operator.internal.dynamo.grove import takes_grove
from dynamo_operator.internal.dynamo.hashing import LAST_APPLIED_HASH
from dynamo_operator.internal.dynamo.restart import plan_restart
from dynamo_operator.internal.dynamo.rollingupdate import (
    MESSAGE_IN_PROGRESS,
    REASON_IN_PROGRESS,
    with_new_replicas,
)
from dynamo_operator.internal.dynamo.rollout import service_of
from dynamo_operator.internal.dynamo.status import (
    GraphStatus,
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

READY = "Ready"
STATE_PENDING = "pending"
STATE_SUCCESSFUL = "successful"
STATE_FAILED = "failed"
REASON_ALL_READY = "all_resources_are_ready"
REASON_SOME_NOT_READY = "some_resources_are_not_ready"
REASON_NAME_COLLISION = "NameCollision"


CONTROLLER_NAME = "dynamographdeployment"


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
        inference_pools: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._gen_context = gen_context
        owned = [
            kinds.DCD,
            kinds.PVC,
            kinds.DGDSA,
            kinds.SERVICE,  # model Services
            kinds.SERVICE_ACCOUNT,  # discovery RBAC
            kinds.ROLE,
            kinds.ROLE_BINDING,
            kinds.CONFIG_MAP,  # wait-for-leader script, EPP config
        ]
        if inference_pools:
            owned.append(kinds.INFERENCE_POOL)
        self.owned: tuple[Resource, ...] = tuple(owned)
        self._syncer = ChildSyncer(
            client=client,
            cache=cache,
            recorder=recorder,
            field_manager=consts.FIELD_MANAGER,
            stamp=LAST_APPLIED_HASH,
            confirm_owner=kinds.DGD,
        )
        self._status = StatusWriter(client, kinds.DGD)
        self._annotated = RecentWrites()  # our annotation patches the cache may not show yet
        self._grove = GrovePathway(client=client, cache=cache, syncer=self._syncer)
        self._roller = WorkerRoller(client=client, cache=cache, recorder=recorder, clock=clock)

    def setup(self, b: Builder) -> None:
        """For DGD (spec or annotation changes); Owns DCDs (their status drives ours), PVCs, adapters;
        Watches PVCs a graph names but does not own, so a user creating one re-triggers the graph."""
        b.for_(kinds.DGD, predicates=(any_of(generation_changed, annotation_changed),))
        for resource in self.owned:
            reads_status = resource == kinds.DCD
            b.owns(resource, predicates=(CHILD_STATUS_CHANGED if reads_status else CHILD_CONTENT_CHANGED,))
        b.watches(kinds.PVC, self.graphs_naming_pvc)

    def graphs_naming_pvc(self, pvc: Obj) -> list[str]:
        """Keys of the DGDs in the PVC's namespace whose `spec.pvcs` lists it."""
        meta = pvc.get("metadata") or {}
        name, namespace = meta.get("name"), meta.get("namespace")
        if not namespace:
            return []
        out = []
        for dgd in self._cache.by_index(kinds.DGD, "namespace", str(namespace)):
            if any(p.get("name") == name for p in (dgd.get("spec") or {}).get("pvcs") or ()):
                out.append(object_key(dgd))
        return out

    async def reconcile(self, key: str) -> Result:
        raw = self._cache.get(kinds.DGD, key)
        if raw is None or raw["metadata"].get("deletionTimestamp"):
            return Result()  # gone, or going (foreground deletion): create nothing, GC does the rest
        namespace, _ = split_key(key)
        ctx = self._gen_context(namespace or "")
        children = self._cache.by_index(kinds.DCD, "controller", raw["metadata"]["uid"])
        origin = origin_version(raw, children, ctx.operator_version)
        # Generation sees the graph with its origin version even before the stamp is written.
        graph = with_origin_version(raw, origin)
        try:
            if self._takes_grove(raw, graph, ctx, children):
                return await self._reconcile_grove(raw, graph, ctx, children, origin)
            return await self._reconcile(raw, graph, ctx, children, origin)
        except TerminalError:
            await self._annotate(raw, origin=origin, serving_hash=None)  # a refused graph is stamped too
            raise

    async def _reconcile(
        self, raw: Obj, graph: Obj, ctx: GenContext, children: Sequence[Obj], origin: str | None
    ) -> Result:
        """Apply the graph's children, annotate the graph, report status."""
        services: dict[str, Any] = (raw.get("spec") or {}).get("services") or {}
        try:
            new_hash = graph_worker_hash(graph)
            names = dcd_names(graph, worker_hash=new_hash)
        except GenerationError as err:
            await self._fail(raw, "InvalidSpec", str(err))
            raise TerminalError(str(err)) from err
        live = self._live_dcds(children, names)
        plan = plan_restart(
            (raw.get("spec") or {}).get("restart"),
            list(services),
            live_values={
                s: ((d.get("spec") or {}).get("annotations") or {}).get(consts.ANNOTATION_RESTART_AT)
                for s, d in live.items()
            },
            rolled={s: dcd_rolled(d) for s, d in live.items()},
            previous=self._status.current(raw).get("restart"),
        )
        try:
            problems = self._semantic_problems(raw)
            if problems:
                raise GenerationError("spec", "; ".join(problems))
            missing = missing_apis(graph, ctx)
            desired = desired_graph_objects(graph, ctx, restart_at=plan.values, worker_hash=new_hash)
            shared = desired_shared_objects(graph, ctx)
        except NameCollisionError as err:
            await self._fail(raw, REASON_NAME_COLLISION, str(err))
            raise TerminalError(str(err)) from err
        except GenerationError as err:
            await self._fail(raw, "InvalidSpec", str(err))
            raise TerminalError(str(err)) from err

        if missing:
            # Nothing is applied: half a graph (a frontend without its workers) helps nobody.
            message = "; ".join(str(err) for err in missing)
            await self._fail(raw, consts.REASON_NO_ORCHESTRATOR, message)
            raise TerminalError(message)

        rollout = self._roller.plan(
            graph,
            names=names,
            new_hash=new_hash,
            children=children,
            previous=self._status.current(raw).get("rollingUpdate"),
        )
        rolling = rollout.plan
        desired = with_new_replicas(desired, rolling.new_replicas)
        pvc_names = {p.get("name") for p in (raw.get("spec") or {}).get("pvcs") or ()}

        def keep(resource: Resource, obj: Obj) -> bool:
            name = obj["metadata"]["name"]
            # Never delete a PVC the graph still names (its entry may have turned create: false), nor
            # old workers still serving while their successors start.
            return (resource == kinds.PVC and name in pvc_names) or (
                resource == kinds.DCD and name in rolling.keep
            )

        try:
            report = await self._syncer.sync(
                raw,
                [
                    # Create-only: a PVC's spec is (mostly) immutable and its data precious; once an
                    # adapter exists it, not the graph, is the source of truth for its replicas.
                    *(
                        Desired(
                            r, o, create_only=r in (kinds.PVC, kinds.DGDSA), shared=shared_between_owners(o)
                        )
                        for o in desired
                        for r in (kinds.resource_of(o),)
                    ),
                    # The namespace's planner and EPP ServiceAccounts/RoleBindings: shared, create-if-absent.
                    *(Desired(kinds.resource_of(o), o, owned=False) for o in shared),
                ],
                owned=self.owned,
                keep=keep,
            )
        except SYNC_ERRORS as err:
            if isinstance(err, ChildrenOwnedByOthers):
                await self._annotate(raw, origin=origin, serving_hash=None)
            return await report_sync_failure(err, lambda reason, message: self._fail(raw, reason, message))

        # Before the status: a graph reported Ready already names the workers that serve. The status
        # is then written against the patched object, so its in-flight record matches what the cache
        # shows next (the annotation event) and the same status is not sent twice.
        namespace = raw["metadata"]["namespace"]
        await self._roller.scale_old(namespace, rolling.old_replicas)
        self._roller.not_supported(raw, rollout, report.created, new_hash)
        raw = await self._annotate(raw, origin=origin, serving_hash=rolling.serving_hash)
        dcds = [o for o in desired if o.get("kind") == kinds.DCD.kind]
        current = self._current_dcds(dcds, report)
        verdict = graph_status(services, current)
        if rollout.old_left and not rollout.managed and rolling.keep:
            verdict.message += (
                f"; workers {rolling.serving_hash or 'of the previous spec'} keep serving until workers"
                f" {new_hash} are ready"
            )
        absent = self._missing_user_pvcs(raw)
        if absent:
            verdict.ready = False
            extra = f"waiting for PVC {', '.join(absent)}"
            verdict.message = extra if verdict.message.startswith("All") else f"{verdict.message}; {extra}"
        if not absent and nothing_to_report_yet(self._status.current(raw), verdict, current):
            return Result()  # the DCDs' first status brings us back with something to say
        if await self._write_status(raw, verdict, plan.status, rollout):
            self._roller.record(raw, rolling.events)
        return Result(requeue_after=rolling.requeue_after)

    # -- the Grove pathway (grove.py) ---------------------------------------------

    def _takes_grove(self, raw: Obj, graph: Obj, ctx: GenContext, children: Sequence[Obj]) -> bool:
        has_pcs = ctx.capabilities.grove and self._grove.pod_clique_set(raw) is not None
        return takes_grove(graph, ctx, has_dcds=bool(children), has_pod_clique_set=has_pcs)

    async def _reconcile_grove(
        self, raw: Obj, graph: Obj, ctx: GenContext, children: Sequence[Obj], origin: str | None
    ) -> Result:
        """One PodCliqueSet instead of DCDs; no worker hash, so no worker rollout to name."""

        async def annotate(obj: Obj) -> Obj:
            return await self._annotate(obj, origin=origin, serving_hash=None)

        return await self._grove.reconcile(
            raw,
            graph,
            ctx,
            dcds=children,
            owned=self.owned,
            previous_restart=self._status.current(raw).get("restart"),
            problems=self._semantic_problems(raw),
            fail=self._fail,
            annotate=annotate,
            write_status=self._write_status,  # no rollout: Grove rolls its own pods
        )

    async def _annotate(self, raw: Obj, *, origin: str | None, serving_hash: str | None) -> Obj:
        """Merge-patch the graph's origin-version / current-worker-hash annotations when they change;
        returns the graph as written (`raw` itself when nothing was)."""
        meta = raw["metadata"]
        key = ("annotations", meta.get("namespace", ""), meta["name"])
        current = {**(meta.get("annotations") or {}), **(self._annotated.in_flight(key, raw) or {})}
        patch = annotations_to_write(current, origin=origin, serving_hash=serving_hash)
        if not patch:
            return raw
        written = await self._client.patch(
            kinds.DGD, meta["name"], {"metadata": {"annotations": patch}}, namespace=meta.get("namespace")
        )
        self._annotated.remember(key, raw, {**current, **patch})
        return written

    # -- helpers ---------------------------------------------------------------------------------

    def _semantic_problems(self, raw: Obj) -> list[str]:
        """What the CRD schema cannot refuse: cross-references between fields."""
        spec = raw.get("spec") or {}
        services = spec.get("services") or {}
        problems = []
        if not services:
            problems.append("services: at least one service is required")
        order = ((spec.get("restart") or {}).get("strategy") or {}).get("order") or []
        unknown = [s for s in order if s not in services]
        if unknown:
            problems.append(f"restart.strategy.order names unknown services: {', '.join(unknown)}")
        return problems

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

    def _missing_user_pvcs(self, raw: Obj) -> list[str]:
        namespace = raw["metadata"]["namespace"]
        missing = []
        for pvc in (raw.get("spec") or {}).get("pvcs") or ():
            name = pvc.get("name")
            if name and not pvc.get("create") and self._cache.get(kinds.PVC, f"{namespace}/{name}") is None:
                missing.append(str(name))
        return missing

    async def _fail(self, raw: Obj, reason: str, message: str) -> None:
        """A problem only a spec change can fix: report it once, apply nothing, keep the rest of status."""
        old = self._status.current(raw)
        status = dict(old)
        status["state"] = STATE_FAILED
        status["conditions"] = conditions.set_condition(
            old.get("conditions"),
            Condition(READY, "False", reason, message),
            observed_generation=raw["metadata"].get("generation"),
        )
        if await self._status.write(raw, status):
            self._recorder.event(raw, type="Warning", reason=reason, message=message)

    async def _write_status(
        self,
        raw: Obj,
        verdict: GraphStatus,
        restart: dict[str, Any] | None,
        rollout: Rollout = NO_ROLLOUT,
    ) -> bool:
        """Write the graph's status; True when a request was sent."""
        old = self._status.current(raw)
        generation = raw["metadata"].get("generation")
        ready = Condition(
            READY,
            "True" if verdict.ready else "False",
            REASON_ALL_READY if verdict.ready else REASON_SOME_NOT_READY,
            verdict.message,
        )
        if rollout.plan.in_progress:
            # Upstream's override: a graph mid-rollout is pending whatever its DCDs say.
            verdict.ready = False
            ready = Condition(READY, "False", REASON_IN_PROGRESS, f"{MESSAGE_IN_PROGRESS}: {verdict.message}")
        status: dict[str, Any] = {
            "observedGeneration": generation,
            "state": STATE_SUCCESSFUL if verdict.ready else STATE_PENDING,
            "conditions": conditions.set_condition(
                old.get("conditions"), ready, observed_generation=generation
            ),
            "services": verdict.services,
        }
        if restart is not None:
            status["restart"] = restart
        if rollout.plan.status is not None:
            status["rollingUpdate"] = rollout.plan.status
        return await self._status.write(raw, status)


def build(mgr: Manager, settings: Settings) -> Built[DynamoGraphDeploymentReconciler]:
    """The graph controller; the optional kinds (InferencePools, Grove's) are owned by the wiring's
    OptionalOwnership, as their APIs come and go."""
    reconciler = DynamoGraphDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        gen_context=settings.gen_context,
        inference_pools=False,
    )
    b = mgr.builder(CONTROLLER_NAME)
    reconciler.setup(b)
    return Built(b.complete(observed(reconciler, kinds.DGD)), reconciler)
