"""DynamoComponentDeployment reconciler: one component's workload, Service and ingress, and its readiness.

Reads the DCD and its children from the cache, generates the desired children with internal.dynamo,
writes only those whose content changed, prunes the ones no longer desired (a multinode toggle swaps
Deployment and LeaderWorkerSet; the per-replica LeaderWorkerSets of older operators go only once the
one native-scaled set serves every group, component/lws_migration.py) and reports `Available` /
`DynamoComponentReady` from the workload's real status. Readiness is judged on the freshest view:
the write response when we just wrote the workload (its status then still describes the previous
spec), else the cache. When the workload is
not available, its pods say why: unschedulable, image pulls failing, crash loops, not ready yet. They
are listed (by the selector label, from the API server's watch cache) only then, and looked at again
on a slowing schedule while the component stays not ready: no Pod watch. Measured at 100 graphs, a
Pod watch cost the API server ~1.8 CPU s (every pod event encoded as JSON for the operator alone)
and the operator ~0.6 s, for news that mattered only for components that were not ready. Registry
Secrets (a field-selected, trimmed informer) feed the operator's pull-secret index; a namespace whose
index changed has its components reconciled again.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import orjson
import structlog
from dynamo_operator.api.conversion.preserve import DCD_SPEC
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import (
    SYNC_ERRORS,
    ChildClient,
    ChildReader,
    ChildSyncer,
    Desired,
    Recorder,
    RefusalReporter,
    StatusWriter,
    TerminatingNamespaces,
    report_sync_failure,
)
from dynamo_operator.internal.apply.pods import PodLister, pods_labelled
from dynamo_operator.internal.cache.store import CONTROLLER_INDEX
from dynamo_operator.internal.client.errors import ApiError, TransportError
from dynamo_operator.internal.client.gate import Priority
from dynamo_operator.internal.client.resource import Resource, object_key, split_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.builder import Builder, Built, InformerOptions
from dynamo_operator.internal.controller.owners import controller_ref
from dynamo_operator.internal.controller.predicates import (
    CHILD_CONTENT_CHANGED,
    CHILD_STATUS_CHANGED,
    Funcs,
    Predicate,
    any_of,
    generation_changed,
    spec_changed,
)
from dynamo_operator.internal.controller.rejection import Rejected
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.context import GenContext, SharedContexts
from dynamo_operator.internal.dynamo.common.errors import (
    FieldNotImplementedError,
    GenerationError,
    MissingAPIError,
)
from dynamo_operator.internal.dynamo.common.hashing import LAST_APPLIED_HASH
from dynamo_operator.internal.dynamo.common.inputs import DcdStatus, component_view, dcd_status_view
from dynamo_operator.internal.dynamo.common.stored_terms import dcd_message
from dynamo_operator.internal.dynamo.component import lws_migration
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.pod.template import multinode_node_count
from dynamo_operator.internal.dynamo.rollout.restart import dcd_restart_id
from dynamo_operator.internal.dynamo.status.dcd_status import component_status, rejected_status
from dynamo_operator.internal.dynamo.status.pod_diagnosis import Diagnosis, diagnose
from dynamo_operator.internal.dynamo.status.readiness import (
    AVAILABLE,
    DEPLOYMENT_KIND,
    LWS_KIND,
    WorkloadReadiness,
    became_ready,
    deployment_readiness,
    first_status_delay,
    lws_readiness,
    not_ready_recheck,
    ready_conditions,
)
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.observability.reconcile_metrics import observed
from dynamo_operator.internal.secrets import index as pull_secrets
from dynamo_operator.internal.settings import Settings

log = structlog.get_logger(__name__)

# A workload that just became ready: the component's status write is what its graph waits for, so
# it goes before creations and re-syncs (measured at 1,000 graphs: statuses queued behind thousands
# of creations were the last minute of a rollout).
WORKLOAD_BECAME_READY: Predicate = Funcs(on_update=became_ready)


Obj = dict[str, Any]
GenContextFor = Callable[[str], GenContext]


CONTROLLER_NAME = "dynamocomponentdeployment"
WORKLOAD_KINDS = frozenset({DEPLOYMENT_KIND, LWS_KIND})
# Upstream refreshes the registry index every 60 s on top of the Secret events.
DOCKER_SECRET_REFRESH_SECONDS = 60.0
# While per-replica LeaderWorkerSets are kept for a migration, how soon to look at the pods again.
MIGRATION_RECHECK_SECONDS = 2.0


# --- reconciler -----------------------------------------------------------------------------------


class DynamoComponentDeploymentReconciler:
    """Turns one DCD into its workload, Service and ingress; reports their readiness."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        gen_context: GenContextFor,
        pods: PodLister | None = None,
        set_pods: PodLister | None = None,
        clock: Clock | None = None,
        terminating: TerminatingNamespaces | None = None,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._clock: Clock = clock or RealClock()
        self._terminating = (
            terminating if terminating is not None else TerminatingNamespaces(clock=self._clock)
        )
        self._pods = pods  # None: conditions carry the workload's counts only
        self._set_pods = set_pods  # None: a migration's end is judged on the LWS's status alone
        self._gen_context = SharedContexts(gen_context)  # one context per namespace in `generation_inputs`
        self._syncer = ChildSyncer(
            client=client,
            cache=cache,
            recorder=recorder,
            field_manager=consts.FIELD_MANAGER,
            stamp=LAST_APPLIED_HASH,
            confirm_owner=kinds.DCD,
            announce_created=lambda dcd: not part_of_a_graph(dcd),
            terminating=self._terminating,
            owner_api_version=consts.STORAGE_API_VERSION,  # children name the graph/DCD as stored
        )
        self._status = StatusWriter(client, kinds.DCD)
        self._refusals = RefusalReporter(self._status, rejected_status, recorder, clock=self._clock)
        # The kinds of optional APIs (LWS, PodGroup, VirtualService, ResourceClaimTemplate) join and
        # leave `owned` as their APIs come and go: operator/optional_ownership.py sets it, from the
        # table of optional APIs (internal/optional_api_table.py).
        # ConfigMap: the wait-for-leader script of a multinode component outside any graph.
        self.owned: tuple[Resource, ...] = (kinds.DEPLOYMENT, kinds.SERVICE, kinds.INGRESS, kinds.CONFIG_MAP)

    def setup(self, b: Builder) -> None:
        """For DCD (spec changes), Owns every child kind (their status drives ours). Pods are not
        watched: a component that is not ready requeues itself (`not_ready_recheck`)."""
        b.for_(kinds.DCD, predicates=(any_of(generation_changed, spec_changed, SAVED_FIELDS_CHANGED),))
        for resource in self.owned:
            reads_status = resource in (kinds.DEPLOYMENT, kinds.LWS)
            b.owns(
                resource,
                predicates=(CHILD_STATUS_CHANGED if reads_status else CHILD_CONTENT_CHANGED,),
                urgent=WORKLOAD_BECAME_READY if reads_status else None,
            )

    def components_in(self, namespace: str) -> list[str]:
        """Keys of every DCD in `namespace` (whose pull secrets changed)."""
        return [object_key(dcd) for dcd in self._cache.by_index(kinds.DCD, "namespace", namespace)]

    async def reconcile(self, key: str) -> Result:
        raw = self._cache.get(kinds.DCD, key)
        if raw is None or raw["metadata"].get("deletionTimestamp"):
            self._syncer.forget(key)
            return Result()  # gone, or going: children are garbage-collected, create nothing
        if (left_alone := self._terminating.leave_alone(raw)) is not None:
            return left_alone  # its namespace is being deleted (internal/apply/terminating.py)
        try:
            return await self._reconcile(key, raw)
        except Rejected as rejected:
            await self._refusals.reject(raw, rejected)

    async def _reconcile(self, key: str, raw: Obj) -> Result:
        """Generate → sync → status; generation and sync are skipped while the DCD's inputs are those
        of its last complete sync and its children are still as that sync left them."""
        namespace, _ = split_key(key)
        ctx = self._gen_context(namespace or "")
        # While sets of the per-replica era are left, every reconcile generates and syncs in full:
        # what may be pruned depends on the new set's live status (component/lws_migration.py).
        migrating = bool(self._leftover_sets(raw))
        holding = False  # leftovers of the per-replica era kept for now
        inputs = None if migrating else generation_inputs(raw, ctx)
        report = self._syncer.unchanged(raw, inputs, owned=self.owned)
        if report is not None:
            workloads = [o for (r, _), o in report.current.items() if r.kind in WORKLOAD_KINDS]
        else:
            desired = _generate(raw, ctx)
            holding = migrating and not await self._migrated(raw, desired)
            try:
                report = await self._syncer.sync(
                    raw,
                    [Desired(kinds.resource_of(o), o) for o in desired],
                    owned=self.owned,
                    inputs=inputs,
                    keep=functools.partial(_held, str(raw["metadata"]["name"])) if holding else None,
                )
            except SYNC_ERRORS as err:
                return await report_sync_failure(err, functools.partial(self._refusals.fail, raw))
            workloads = [
                report.current.get((kinds.resource_of(o), o["metadata"]["name"]), o)
                for o in desired
                if o.get("kind") in WORKLOAD_KINDS
            ]
        verdict = _readiness(workloads)
        old = self._status.current(raw)
        if verdict.unobserved and not old:
            # A brand-new workload: its controller is about to report on it, and that event brings
            # us back with something worth writing. Saves one status write per new component.
            return Result()
        if not old:
            created = raw["metadata"].get("creationTimestamp")
            wait = first_status_delay(verdict, created=created, now=self._clock.wall().timestamp())
            if wait:
                return Result(requeue_after=wait)  # the workload's status usually brings us back sooner
        why = None if verdict.ready else await self._diagnose(raw)
        generation = raw["metadata"].get("generation")
        status = component_status(
            dcd_status_view(old),
            ready_conditions(verdict, why),
            service=verdict.service,
            generation=generation,
            now=self._clock.wall(),
        )
        await self._status.write(raw, status)
        await self._acknowledge_restart(raw)
        if holding:
            # No Pod watch: the last worker pod turning ready changes no LWS status, so look again.
            return Result(requeue_after=MIGRATION_RECHECK_SECONDS)
        if verdict.ready:
            return Result()
        return Result(
            requeue_after=not_ready_recheck(_available_since(status), self._clock.wall().timestamp())
        )

    def _leftover_sets(self, raw: Obj) -> list[str]:
        """The LeaderWorkerSets and PodGroups of the per-replica era this DCD still controls."""
        uid = raw["metadata"].get("uid")
        children = [
            child
            for resource in self.owned
            if resource.kind in (LWS_KIND, lws_migration.POD_GROUP_KIND)
            for child in self._cache.by_index(resource, CONTROLLER_INDEX, uid)
        ]
        return lws_migration.leftovers(str(raw["metadata"]["name"]), children)

    async def _migrated(self, raw: Obj, desired: Sequence[Obj]) -> bool:
        """Whether the one set `<dcd>-0` serves every group, so the per-replica era's sets and
        PodGroups may go: settled as LWS reports it (judged on the cache before this sync's writes:
        a set about to be rewritten is not settled), and every pod of every group Running and Ready."""
        want = next((o for o in desired if o.get("kind") == LWS_KIND), None)
        if want is None:
            return True  # no longer multinode: no set to wait for, the old ones go as usual
        live = self._cache.get(kinds.LWS, object_key(want))
        if not lws_migration.settled(want, live):
            return False
        if self._set_pods is None:
            return True
        meta, spec = want["metadata"], want["spec"]
        try:
            pods = await self._set_pods(str(meta.get("namespace") or ""), str(meta["name"]))
        except (ApiError, TransportError) as err:
            log.info("Cannot list the pods of the LeaderWorkerSet", lws=meta["name"], error=str(err))
            return False
        size = int(spec["leaderWorkerTemplate"]["size"])
        return lws_migration.groups_serving(pods, size=size) >= int(spec["replicas"])

    async def _acknowledge_restart(self, raw: Obj) -> None:
        """Say on the DCD which restart id its workload now carries. A DCD written as v1alpha1
        keeps its restart id in an annotation of its stored form, so stamping one bumps no generation
        and `observedGeneration` cannot tell the graph that this controller acted on it; this can. One
        metadata write per restart of a component, none otherwise."""
        meta = raw["metadata"]
        wanted = dcd_restart_id(component_view(raw))
        if not wanted or (meta.get("annotations") or {}).get(consts.ANNOTATION_RESTART_OBSERVED) == wanted:
            return
        body = {"metadata": {"annotations": {consts.ANNOTATION_RESTART_OBSERVED: wanted}}}
        await self._client.patch(kinds.DCD, meta["name"], body, namespace=meta.get("namespace"))

    async def _diagnose(self, raw: Obj) -> Diagnosis | None:
        """What the component's pods say; None without a lister or when they cannot be listed (the
        conditions then carry the workload's counts alone, and the recheck tries again)."""
        meta = raw["metadata"]
        lister, name = self._pods, str(meta["name"])
        if multinode_node_count(component_view(raw)["spec"]) > 1:
            # A LeaderWorkerSet's pods carry no selector label of ours (as upstream's): LWS's own
            # label names their set.
            lister, name = self._set_pods, naming.lws_name(name)
        if lister is None:
            return None
        try:
            pods = await lister(str(meta.get("namespace") or ""), name)
        except (ApiError, TransportError) as err:
            log.info("Cannot list the component's pods", dcd=meta["name"], error=str(err))
            return None
        return diagnose(pods)


def _saved_fields(dcd: Obj) -> object:
    return (dcd.get("metadata", {}).get("annotations") or {}).get(DCD_SPEC)


SAVED_FIELDS_CHANGED: Predicate = Funcs(on_update=lambda old, new: _saved_fields(old) != _saved_fields(new))
"""A DCD's v1alpha1-only fields (its ingress, `spec.annotations`, ...) live, as stored, in its reserved
annotation: editing one, or a graph changing one of its components, bumps no generation and leaves
the spec alone, yet changes what is generated (component/lowering.py reads them back)."""


def generation_inputs(dcd: Obj, ctx: GenContext) -> tuple[object, ...] | None:
    """Everything `desired_component_objects` reads besides the DCD's identity (namespace, name and
    UID, which its key and the remembered sync pin), by a digest (not the objects, so the memory of a
    sync holds no second copy of them): its spec as read, the v1alpha1-only fields v1beta1 keeps in
    the reserved annotation (changing those bumps no generation), and the labels and controller
    reference its parent graph is told by; then its apiVersion and the context. None without a
    generation: then every reconcile generates."""
    meta = dcd["metadata"]
    generation = meta.get("generation")
    if generation is None:
        return None
    read = [dcd.get("spec"), _saved_fields(dcd), meta.get("labels"), controller_ref(dcd)]
    return (generation, hash(orjson.dumps(read, option=orjson.OPT_SORT_KEYS)), dcd.get("apiVersion"), ctx)


def _held(dcd: str, resource: Resource, child: Obj) -> bool:
    """The sync's `keep` while a migration from per-replica sets is not over (lws_migration.held)."""
    name = str(child["metadata"].get("name", ""))
    return lws_migration.held(resource.kind, name, dcd=dcd, migrated=False)


def _readiness(workloads: Sequence[Obj]) -> WorkloadReadiness:
    """The component's readiness from its workload as synced (the Deployment, else the one LWS)."""
    deployments = [w for w in workloads if w.get("kind") == DEPLOYMENT_KIND]
    if deployments:
        return deployment_readiness(deployments[0])
    sets = [w for w in workloads if w.get("kind") == LWS_KIND]
    return lws_readiness(sets[0] if sets else None)


def part_of_a_graph(dcd: Obj) -> bool:
    """Whether a graph controls this DCD. Its workload's first creation then goes without an Event of
    its own: the graph's Event already named the component, what a component creates follows from
    it, and each Event is a write (3 of a 3-service graph's 21, issue #13). Its updates, deletions
    and every failure are still told on it."""
    ref = controller_ref(dcd) or {}
    group = str(ref.get("apiVersion") or "").partition("/")[0]
    return ref.get("kind") == kinds.DGD.kind and group == kinds.DGD.group


def _generate(raw: Obj, ctx: GenContext) -> list[Obj]:
    """The component's desired children; a spec generation refuses is `Rejected`."""
    try:
        return desired_component_objects(component_view(raw), ctx)
    except MissingAPIError as err:
        message = dcd_message(err.field, f"{err.message} (API {err.api} is not served)")
        raise Rejected(consts.REASON_MISSING_API, message) from err
    except FieldNotImplementedError as err:
        raise Rejected(err.reason, dcd_message(err.field, err.message)) from err
    except GenerationError as err:
        raise Rejected("InvalidSpec", dcd_message(err.field, err.message)) from err


def _available_since(status: DcdStatus) -> str | None:
    """When the component's Available condition last changed (its lastTransitionTime)."""
    for cond in status.get("conditions") or ():
        if cond.get("type") == AVAILABLE:
            return str(cond.get("lastTransitionTime") or "") or None
    return None


# --- image-pull secret discovery --------------------------------------------------------------------


class SecretIndex(Protocol):
    """The docker-secret index (internal.secrets.DockerSecretIndex) as this module uses it."""

    def on_add(self, obj: Obj) -> None: ...
    def on_update(self, old: Obj, new: Obj) -> None: ...
    def on_delete(self, obj: Obj) -> None: ...
    def snapshot(self, namespace: str) -> Mapping[str, Sequence[str]]: ...
    def replace_all(self, secrets: Sequence[Obj]) -> None: ...


class PullSecretNotifier:
    """Informer handler in front of the docker-secret index: feeds it every event and, when the
    index of a namespace changed, calls `on_change(namespace)` so that namespace's components are
    regenerated with the new pull secrets. A Secret event that changes nothing triggers nothing."""

    def __init__(self, index: SecretIndex, *, on_change: Callable[[str], None]) -> None:
        self._index, self._on_change = index, on_change
        self._namespaces: set[str] = set()

    def on_add(self, obj: Obj) -> None:
        self._around(obj, lambda: self._index.on_add(obj))

    def on_update(self, old: Obj, new: Obj) -> None:
        self._around(new, lambda: self._index.on_update(old, new))

    def on_delete(self, obj: Obj) -> None:
        self._around(obj, lambda: self._index.on_delete(obj))

    def refresh(self, secrets: Sequence[Obj]) -> None:
        """Rebuild the index from a full list (the periodic refresh) and report what changed."""
        namespaces = self._namespaces | {str((s.get("metadata") or {}).get("namespace", "")) for s in secrets}
        before = {ns: dict(self._index.snapshot(ns)) for ns in namespaces}
        self._index.replace_all(secrets)
        self._namespaces = namespaces
        for ns in sorted(namespaces):
            if dict(self._index.snapshot(ns)) != before[ns]:
                self._on_change(ns)

    def _around(self, obj: Obj, update: Callable[[], None]) -> None:
        namespace = str((obj.get("metadata") or {}).get("namespace", ""))
        self._namespaces.add(namespace)
        before = dict(self._index.snapshot(namespace))
        update()
        if dict(self._index.snapshot(namespace)) != before:
            self._on_change(namespace)


# Registry Secrets only (field selector on type); the transform keeps each one's identity and registry
# hosts, never its data (internal/secrets/index.py).
PULL_SECRETS = InformerOptions(field_selector=pull_secrets.FIELD_SELECTOR, transform=pull_secrets.transform)


# --- wiring ------------------------------------------------------------------------------------------


def build(mgr: Manager, settings: Settings) -> Built[DynamoComponentDeploymentReconciler]:
    """The DCD controller and the registry Secrets that feed `settings.pull_secrets`."""
    b = mgr.builder(CONTROLLER_NAME)
    reconciler = DynamoComponentDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        gen_context=settings.gen_context,
        pods=pods_labelled(mgr.client, consts.LABEL_SELECTOR),
        set_pods=pods_labelled(mgr.client, lws_migration.LWS_NAME_LABEL),
    )
    reconciler.setup(b)
    changed: Channel[str] = Channel()
    b.watches_channel(changed, reconciler.components_in)
    secrets = b.informer(kinds.SECRET, PULL_SECRETS)
    notifier = PullSecretNotifier(settings.pull_secrets, on_change=changed.send)
    secrets.add_event_handler(notifier)

    async def refresh_periodically() -> None:
        while True:
            await asyncio.sleep(DOCKER_SECRET_REFRESH_SECONDS)
            notifier.refresh(secrets.store.list())

    mgr.add_runnable(refresh_periodically, needs_leader=False, name="docker-secret-refresh")
    # A component's writes are its workload, which starts the cluster's own work (pods): they go
    # ahead of the graphs' fan-out when the client holds requests back.
    b.with_options(request_priority=Priority.HIGH)
    return Built(b.complete(observed(reconciler, kinds.DCD)), reconciler)
