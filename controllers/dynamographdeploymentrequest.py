"""DynamoGraphDeploymentRequest reconciler: profile, generate a DGD, optionally deploy it.

Each reconcile runs the lifecycle of `internal.dynamo.dgdr.machine` for as many steps as can proceed
at once: per state it does that state's I/O, turns what it saw into an observation, and commits the
transition `advance` returns (status merge patch conditional on the resourceVersion it read, then
the Events). A step that must wait (the Job runs, the DGD rolls out) ends the reconcile; the Job, DGD
and output-ConfigMap watches bring it back.

Safety against a stale cache, where acting on it would be irreversible:
- a Job that already exists for this DGDR means profiling started: the output ConfigMap is deleted
  (stale results) only before the Job is created, never after;
- the DGD is created only after a fresh read of the DGDR confirms `status.deployment.created` is not
  set, so a DGD a user deleted is never recreated; a DGD missing from the cache is confirmed missing
  by the API server before the request turns DeploymentDeleted;
- a Job that completed but whose output ConfigMap is not visible yet is given
  `machine.OUTPUT_GRACE_SECONDS` before it counts as a generation failure.

What to do next is never decided here: each state's I/O ends in one observation, and the transition
`advance` returns says what to write, which Events to record, whether to go on, when to look again
and whether a failed attempt is retried. The objects written (Job, profiling RBAC, DGD, extra
ConfigMaps) are generated in `internal.dynamo.dgdr`.

Tenancy: a request writes only into its own namespace. `spec.deploymentOverrides.namespace`, the
generated DGD's namespace and each extra ConfigMap's are checked at validation, when the output is
read and again before the DGD is created (for requests stored before the admission policy existed,
or on clusters without it); any other namespace fails the request (`NamespaceNotAllowed`, one Warning
Event) and nothing is created.

The profiler output is the requester's data: the output informer keeps metadata only, the data is
read live when the Job completed, and parsed in a worker thread with hard limits
(`output.OutputLimits`), so neither a large nor an alias-bomb document blocks the event loop (and
the Lease renewals on it) or grows the operator's memory past them.

Objects the spec names (the base-config ConfigMap and its key, the model-cache PVC) that do not exist
yet are not a failure: the request stays in its initial state with a `Validation` condition saying
what it waits for (reason `ReferenceNotFound`, one Warning Event), and the ConfigMap and PVC watches
map each such object back to the requests naming it, so creating it is enough to move on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from dynamo_operator.api.conversion import ConversionError, convert
from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.apply import ChildClient, StatusWriter
from dynamo_operator.internal.cache.interface import Informer
from dynamo_operator.internal.cache.transform import keep_fields
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import CONFIG_MAP, JOB, POD, Resource, object_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.builder import Builder, Built, InformerOptions
from dynamo_operator.internal.controller.handlers import Mapper
from dynamo_operator.internal.controller.owners import owner_reference
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.dynamo.common.inputs import (
    RequestStatus,
    json_object,
    stored_graph_view,
)
from dynamo_operator.internal.dynamo.common.stored_terms import request_message
from dynamo_operator.internal.dynamo.dgdr import (
    deployment,
    job,
    names,
    output,
    profiler_config,
    progress,
    rbac,
    stored,
)
from dynamo_operator.internal.dynamo.dgdr.machine import (
    AutoApplyOff,
    DeploymentAlreadyCreated,
    DeploymentCreated,
    DeploymentCreationFailed,
    DeploymentMissing,
    DeploymentObserved,
    ForeignNamespace,
    GenerationFailed,
    JobCreated,
    JobCreationFailed,
    JobHeldByAnother,
    Observation,
    OutputMissing,
    OutputRefused,
    ProfilerReport,
    ProfilingFailed,
    ProfilingRunning,
    ReferencesMissing,
    Retry,
    SpecChanged,
    SpecGenerated,
    State,
    Transition,
    Validated,
    advance,
    unknown_state,
)
from dynamo_operator.internal.dynamo.dgdr.status import request_status
from dynamo_operator.internal.dynamo.dgdr.view import RequestView, read_request
from dynamo_operator.internal.events import Recorder
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.observability.reconcile_metrics import observed
from dynamo_operator.internal.settings import Settings
from dynamo_operator.internal.timestamps import parse_rfc3339

log = structlog.get_logger(__name__)

Obj = dict[str, Any]

# Enough for the longest chain that can run without waiting: "" → Pending → Profiling (+1 spare).
MAX_STEPS = 5
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME_LABEL = "job-name"
SERVICE_ACCOUNT = kinds.SERVICE_ACCOUNT
ROLE_BINDING = kinds.ROLE_BINDING
# Output ConfigMaps carry this label (the profiler's sidecar sets it): only those are cached.
OUTPUT_SELECTOR = names.LABEL_DGDR_NAME


class RequestClient(ChildClient, Protocol):
    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj: ...
    async def list(
        self, resource: Resource, *, namespace: str | None = None, label_selector: str | None = None
    ) -> list[Obj]: ...


class RequestReader(Protocol):
    def get(self, resource: Resource, key: str) -> Obj | None: ...
    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]: ...


@dataclass(frozen=True, slots=True)
class Step:
    """The outcome of one state's work: the transition, the status fields the work produced (in
    v1alpha1, and `beta`: those only v1beta1 holds), and for a failed attempt the error behind it."""

    transition: Transition
    fields: RequestStatus = field(default_factory=RequestStatus)
    cause: Exception | None = None
    beta: JsonObject = field(default_factory=dict)


class AttemptFailed(Exception):
    """A step's attempt failed and will be retried with the controller's error backoff."""


def _meta(obj: Mapping[str, Any], key: str) -> Any:
    return (obj.get("metadata") or {}).get(key)


@dataclass(frozen=True, slots=True)
class Reference:
    """An object a request's spec names and needs before profiling can start (`key`: a ConfigMap
    key that must be present)."""

    resource: Resource
    name: str
    key: str | None = None


def references(spec: Mapping[str, Any]) -> list[Reference]:
    """The objects a request names in its own namespace: the base-config ConfigMap, the model cache."""
    out: list[Reference] = []
    profiling = spec.get("profilingConfig") or {}
    ref = profiling.get("configMapRef") if isinstance(profiling, Mapping) else None
    if isinstance(ref, Mapping) and ref.get("name"):
        out.append(Reference(CONFIG_MAP, str(ref["name"]), str(ref.get("key") or names.BASE_CONFIG_FILE)))
    config = profiling.get("config") if isinstance(profiling, Mapping) else None
    cache = profiler_config.model_cache(config) if isinstance(config, Mapping) else None
    if cache:
        out.append(Reference(kinds.PVC, cache[0]))
    return out


def request_of_output(cm: Obj) -> list[str]:
    """The DGDR an output ConfigMap belongs to (by its name, the contract with the sidecar)."""
    dgdr = names.dgdr_for_output_config_map(str(_meta(cm, "name") or ""))
    namespace = _meta(cm, "namespace")
    return [f"{namespace}/{dgdr}"] if dgdr and namespace else []


def request_of_deployment(dgd: Obj) -> list[str]:
    """The DGDR that created a DGD, from its tracking labels (there is no ownerReference)."""
    labels = _meta(dgd, "labels") or {}
    name, namespace = labels.get(names.LABEL_DGDR_NAME), labels.get(names.LABEL_DGDR_NAMESPACE)
    return [f"{namespace}/{name}"] if name and namespace else []


class DynamoGraphDeploymentRequestReconciler:
    """Drives one DGDR through profiling to a generated (and optionally deployed) DGD."""

    def __init__(
        self,
        *,
        client: RequestClient,
        cache: RequestReader,
        recorder: Recorder,
        pods: Informer,
        outputs: Informer | None = None,
        namespace_restricted: bool = False,
        profiling_cluster_role: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        # The label-scoped informer of profiling pods (metadata and status), read directly.
        self._pods = pods
        # The label-scoped, metadata-only informer of output ConfigMaps: whether one exists, so that
        # its data (the profiler's report) is read live only then. None: always read live.
        self._outputs = outputs
        self._restricted = namespace_restricted
        self._cluster_role = profiling_cluster_role
        self._clock: Clock = clock or RealClock()
        # Each step of the state machine starts from the state the server holds: a status write
        # computed from a stale view is refused (409) and retried, never applied.
        self._status = StatusWriter(client, kinds.DGDR, precondition=True)
        # One output parse at a time: the parser's limits bound one parse (about 36 MiB at worst),
        # so this bounds them all, however many requests finish together.
        self._parsing = asyncio.Semaphore(1)

    def setup(self, b: Builder) -> None:
        """For DGDRs (every change: a spec edit must be seen to be rejected); Owns profiling Jobs;
        Watches the DGDs it created (tracking labels), the ConfigMaps and PVCs a request waits for,
        and the profiler's output ConfigMaps (label-scoped, metadata-only informer)."""
        b.for_(kinds.DGDR)
        b.owns(JOB)
        b.watches(kinds.DGD, request_of_deployment)
        # The same (unfiltered) informers the graph controller owns these through: no extra watch.
        b.watches(CONFIG_MAP, self.requests_waiting_for(CONFIG_MAP))
        b.watches(kinds.PVC, self.requests_waiting_for(kinds.PVC))
        b.watches(CONFIG_MAP, request_of_output, informer=OUTPUTS)

    def requests_waiting_for(self, resource: Resource) -> Mapper:
        """Maps an object of `resource` to the requests in its namespace that name it and have not
        started yet (past validation, a change of it no longer matters)."""

        def mapper(obj: Obj) -> list[str]:
            name, namespace = _meta(obj, "name"), _meta(obj, "namespace")
            if not namespace:
                return []
            return [
                object_key(dgdr)
                for dgdr in self._cache.by_index(kinds.DGDR, "namespace", str(namespace))
                if (view := read_request(dgdr)).state is State.INITIAL
                and any(r.resource == resource and r.name == name for r in references(view.spec))
            ]

        return mapper

    # -- reconcile ---------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> Result:
        raw = self._cache.get(kinds.DGDR, key)
        if raw is None or _meta(raw, "deletionTimestamp"):
            return Result()  # the Job goes with it (ownerReference); the DGD deliberately stays
        # (The type fields where the cached object lacks them: it is stored, in kinds.DGDR's version.)
        dgdr = read_request({"apiVersion": kinds.DGDR.api_version, "kind": kinds.DGDR.kind, **raw})
        for _ in range(MAX_STEPS):
            if dgdr.state is None:
                await self._commit(dgdr, Step(unknown_state(dgdr.raw_state)))
                return Result()
            if dgdr.frozen_spec_edited:
                # Frozen: the Job, the generated DGD and the deployment all derive from the spec as
                # it was; the edit is reported, never applied, and observedGeneration stays put.
                await self._commit(dgdr, Step(advance(dgdr.state, SpecChanged())))
                return Result()
            step = await self._step(dgdr.state, dgdr)
            if step is None:
                return Result()
            if step.transition.retry is not None:
                return self._failed_attempt(dgdr, step)
            dgdr = read_request(await self._commit(dgdr, step))
            if not step.transition.proceed:
                return Result(requeue_after=step.transition.requeue_after)
        return Result()

    async def _step(self, state: State, dgdr: RequestView) -> Step | None:
        match state:
            case State.INITIAL:
                return Step(advance(state, await self._validate(dgdr)))
            case State.PENDING:
                return await self._start_profiling(dgdr)
            case State.PROFILING:
                return await self._check_profiling(dgdr)
            case State.DEPLOYING:
                return await self._deploy(dgdr)
            case State.READY if dgdr.auto_apply:
                return await self._observe_deployment(state, dgdr)
            case _:
                return None  # Ready without autoApply, Failed, DeploymentDeleted: terminal

    async def _commit(self, dgdr: RequestView, step: Step) -> Obj:
        """Write state, conditions and fields (only what changed, conditional on what we read), then
        record the Events. Returns the object as the API server now has it."""
        t = step.transition
        old = dgdr.status
        new = request_status(
            old,
            t,
            step.fields,
            generation=dgdr.generation,
            backend=dgdr.spec.get("backend"),
            now=self._clock.wall(),
        )
        # Written as the v1beta1 status itself, so that the v1beta1-only fields of this step land
        # and those the machine leaves alone stay (stored.py).
        beta = {**stored.hub_fields(t), **step.beta}
        status = stored.beta_status(dgdr.stored_status, new, beta)
        written = await self._status.commit(dgdr.raw, status)
        if written is None:
            return dgdr.raw
        self._record(dgdr, t)
        return written

    def _record(self, dgdr: RequestView, t: Transition) -> None:
        for event in t.events:
            self._recorder.event(dgdr.raw, type=event.type.value, reason=event.reason, message=event.message)

    def _failed_attempt(self, dgdr: RequestView, step: Step) -> Result:
        """A failed attempt writes nothing: its Events are recorded each time, and the reconcile ends
        as the transition says (an error retried with backoff, or one never retried)."""
        t = step.transition
        self._record(dgdr, t)
        message = "; ".join(event.message for event in t.events) or "attempt failed"
        if t.retry is Retry.NEVER:
            raise TerminalError(message) from step.cause
        if step.cause is not None:
            raise step.cause  # the API's own error: its category is what the error metrics count
        raise AttemptFailed(message)

    # -- "" ----------------------------------------------------------------------------------------

    async def _validate(self, dgdr: RequestView) -> Validated | ReferencesMissing | ForeignNamespace:
        """Spec errors fail the request (with every missing reference in the same message, as
        upstream reports them); a valid spec naming objects that do not exist yet waits for them.
        Another namespace in the overrides fails it first, before anything is looked up."""
        if foreign := deployment.foreign_namespaces(dgdr.request):
            return ForeignNamespace("; ".join(foreign))
        problems = [
            # Checked in the v1alpha1 view; told in the stored version's terms (stored_terms.py).
            request_message(problem)
            for problem in profiler_config.validate(dgdr.spec, namespace_restricted=self._restricted)
        ]
        missing = [m for ref in references(dgdr.spec) if (m := await self._missing(ref, dgdr.namespace))]
        if problems:
            return Validated(tuple(problems + missing))
        if missing:
            return ReferencesMissing(tuple(missing))
        return Validated()

    async def _missing(self, ref: Reference, namespace: str) -> str | None:
        """What is missing of `ref`, None when it is there (read from the API server: a create that
        just triggered us must not be missed by a cache that lags)."""
        try:
            obj = await self._client.get(ref.resource, ref.name, namespace=namespace)
        except errors.NotFound:
            what = "model cache PVC" if ref.resource == kinds.PVC else ref.resource.kind
            return f"{what} {ref.name} not found in namespace {namespace}"
        if ref.key is not None and ref.key not in (obj.get("data") or {}):
            return f"key {ref.key} not found in {ref.resource.kind} {ref.name}"
        return None

    # -- Pending -----------------------------------------------------------------------------------

    async def _start_profiling(self, dgdr: RequestView) -> Step:
        namespace, name = dgdr.namespace, dgdr.name
        owner = owner_reference(dgdr.raw, api_version=consts.STORAGE_API_VERSION)
        try:
            desired = job.profiling_job(dgdr.request, owner_reference=owner)
        except profiler_config.ProfilerConfigError as err:  # edited into shape after validation
            return Step(advance(State.PENDING, JobCreationFailed(str(err))))
        created = JobCreated(ai_configurator=job.runs_ai_configurator(desired))
        existing = self._cache.get(JOB, f"{namespace}/{names.job_name(name)}")
        if existing is not None:
            return _job_step(dgdr, _job_observation(dgdr, existing, created))
        # Results of an earlier request of the same name must not be mistaken for ours.
        with contextlib.suppress(errors.NotFound):
            await self._client.delete(CONFIG_MAP, names.output_config_map_name(name), namespace=namespace)
        await self._ensure_profiling_rbac(namespace)
        try:
            await self._client.create(JOB, desired)
        except errors.AlreadyExists:
            existing = await self._client.get(JOB, names.job_name(name), namespace=namespace)
            return _job_step(dgdr, _job_observation(dgdr, existing, created))
        except (errors.Invalid, errors.BadRequest, errors.Forbidden) as err:
            return Step(advance(State.PENDING, JobCreationFailed(f"failed to create profiling job: {err}")))
        return _job_step(dgdr, created)

    async def _ensure_profiling_rbac(self, namespace: str) -> None:
        """What the Job's pods run as (pod creation fails without the ServiceAccount)."""
        wanted = rbac.profiling_rbac(
            namespace, cluster_role=self._cluster_role, namespace_restricted=self._restricted
        )
        await create_profiling_rbac(self._client, wanted)

    # -- Profiling ---------------------------------------------------------------------------------

    async def _get(self, resource: Resource, namespace: str, name: str) -> Obj | None:
        """Cache first; on a miss ask the API server (a just-created object may not be cached yet)."""
        cached = self._cache.get(resource, f"{namespace}/{name}")
        if cached is not None:
            return cached
        try:
            return await self._client.get(resource, name, namespace=namespace)
        except errors.NotFound:
            return None

    async def _check_profiling(self, dgdr: RequestView) -> Step:
        namespace, name = dgdr.namespace, dgdr.name
        profiling_job = await self._get(JOB, namespace, names.job_name(name))
        current = self._profiling_phase(dgdr)
        if profiling_job is None:
            missing = f"profiling job {names.job_name(name)} not found"
            return Step(advance(State.PROFILING, ProfilingFailed(missing, current)))
        outcome = job.job_outcome(profiling_job)
        if outcome.phase is job.JobPhase.SUCCEEDED:
            return await self._read_results(dgdr, profiling_job)
        # Running or failed: the profiler's last reported step is news, or where the run died.
        report = await self._profiler_report(dgdr)
        if outcome.phase is job.JobPhase.RUNNING:
            return Step(advance(State.PROFILING, ProfilingRunning(report, current)))
        detail = job.pod_failure_detail(await self._job_pods(namespace, names.job_name(name)))
        failed = ProfilingFailed(job.failure_message(outcome, detail), report.phase if report else current)
        return Step(advance(State.PROFILING, failed))

    def _profiling_phase(self, dgdr: RequestView) -> ProfilingPhase | None:
        """`status.profilingPhase` as stored (a v1beta1 field: read from the stored form)."""
        raw = dgdr.stored_status.get(stored.PROFILING_PHASE)
        try:
            return ProfilingPhase(raw) if isinstance(raw, str) and raw else None
        except ValueError:
            return None

    async def _profiler_report(self, dgdr: RequestView) -> ProfilerReport | None:
        """The step the profiler's sidecar last relayed into the output ConfigMap, read live (the
        output informer keeps metadata only); None before it wrote one. An unknown step is logged
        and read as no report: it is the profiler's word, never a reason to fail or retry."""
        cm_name = names.output_config_map_name(dgdr.name)
        if self._outputs is not None and self._outputs.store.get(f"{dgdr.namespace}/{cm_name}") is None:
            return None
        try:
            cm = await self._client.get(CONFIG_MAP, cm_name, namespace=dgdr.namespace)
        except errors.NotFound:
            return None
        try:
            return progress.read_report(cm)
        except progress.UnknownStep as err:
            log.info("ignoring the profiler's report", dgdr=object_key(dgdr.raw), error=str(err))
            return None

    async def _job_pods(self, namespace: str, job_name: str) -> list[Obj]:
        def mine(pod: Obj) -> bool:
            labels = _meta(pod, "labels") or {}
            return job_name in (labels.get(JOB_NAME_LABEL), labels.get(LEGACY_JOB_NAME_LABEL))

        pods = [p for p in self._pods.store.by_index("namespace", namespace) if mine(p)]
        if any((p.get("status") or {}).get("phase") == "Failed" for p in pods):
            return pods
        # The Job controller saw the failure before our pod informer did: read once from the API.
        return await self._client.list(
            POD, namespace=namespace, label_selector=f"{JOB_NAME_LABEL}={job_name}"
        )

    async def _read_results(self, dgdr: RequestView, profiling_job: Obj) -> Step:
        namespace, name = dgdr.namespace, dgdr.name
        cm_name = names.output_config_map_name(name)
        try:
            # Read live: the output informer keeps metadata only (the data is the requester's and
            # may be large); this GET is the one time the operator holds it.
            cm = await self._client.get(CONFIG_MAP, cm_name, namespace=namespace)
        except errors.NotFound:
            finished = parse_rfc3339((profiling_job.get("status") or {}).get("completionTime"))
            waited = (self._clock.wall() - finished).total_seconds() if finished else None
            return Step(advance(State.PROFILING, OutputMissing(cm_name, waited)))
        use_mocker = bool(dgdr.spec.get("useMocker"))
        try:
            # Off the event loop: a parse takes up to a few seconds within the limits.
            async with self._parsing:
                result = await asyncio.to_thread(output.read_output, cm, use_mocker=use_mocker)
        except output.OutputLimitExceeded as err:
            return Step(advance(State.PROFILING, OutputRefused(err.limit, str(err))))
        except output.ProfileOutputError as err:
            return Step(advance(State.PROFILING, GenerationFailed(str(err))))
        cm.pop("data", None)  # parsed: hold none of it past this point
        if foreign := deployment.foreign_namespaces(dgdr.request, result.deployment, result.extra):
            return Step(advance(State.PROFILING, ForeignNamespace("; ".join(foreign))))
        await self._adopt_output(dgdr, cm)
        failed = await self._create_extra_resources(dgdr, result.extra)
        fields: RequestStatus = {
            "generatedDeployment": result.deployment,
            "profilingResults": f"configmap/{cm_name}",
        }
        generated = SpecGenerated(auto_apply=dgdr.auto_apply, failed_config_maps=failed)
        return Step(advance(State.PROFILING, generated), fields)

    async def _adopt_output(self, dgdr: RequestView, cm: Obj) -> None:
        """Hang the output ConfigMap (written by the sidecar, unowned) off the request, so it goes
        with it; best effort, a failure only leaves it behind."""
        refs = list(_meta(cm, "ownerReferences") or [])
        if any(r.get("uid") == dgdr.uid for r in refs):
            return
        ref = {
            **owner_reference(dgdr.raw, api_version=consts.STORAGE_API_VERSION),
            "controller": False,
            "blockOwnerDeletion": False,
        }
        body = {
            "metadata": {"ownerReferences": [*refs, ref], "resourceVersion": _meta(cm, "resourceVersion")}
        }
        try:
            await self._client.patch(
                CONFIG_MAP, str(_meta(cm, "name")), body, namespace=_meta(cm, "namespace")
            )
        except errors.ApiError as err:
            log.info("could not adopt the output ConfigMap", dgdr=object_key(dgdr.raw), error=str(err))

    async def _create_extra_resources(
        self, dgdr: RequestView, extra: Sequence[JsonObject]
    ) -> tuple[str, ...]:
        """ConfigMaps the profiler produced next to the DGD (e.g. planner data), in the request's
        namespace, tracked by labels; what failed is returned, one message each, to be reported
        (not fatal: the DGD may not need them)."""
        config_maps, skipped = output.extra_config_maps(
            extra, dgdr_name=dgdr.name, dgdr_namespace=dgdr.namespace
        )
        if skipped:
            log.info("skipping non-ConfigMap profiler output", dgdr=object_key(dgdr.raw), skipped=skipped)
        failed: list[str] = []
        for cm in config_maps:
            try:
                await self._client.create(CONFIG_MAP, cm)
            except errors.AlreadyExists:
                continue
            except errors.ApiError as err:
                name = json_object(cm.get("metadata")).get("name")
                failed.append(f"Failed to create ConfigMap {name}: {err}")
        return tuple(failed)

    # -- Deploying / Ready -------------------------------------------------------------------------

    async def _deploy(self, dgdr: RequestView) -> Step:
        if not dgdr.auto_apply:
            return Step(advance(State.DEPLOYING, AutoApplyOff()))
        if not dgdr.deployment.get("created"):
            fresh = read_request(await self._client.get(kinds.DGDR, dgdr.name, namespace=dgdr.namespace))
            if fresh.deployment.get("created"):
                return Step(advance(State.DEPLOYING, DeploymentAlreadyCreated()))
            return await self._create_deployment(dgdr)
        return await self._observe_deployment(State.DEPLOYING, dgdr)

    async def _create_deployment(self, dgdr: RequestView) -> Step:
        generated = dgdr.status.get("generatedDeployment")
        if not isinstance(generated, dict):
            raise TerminalError("status.generatedDeployment is missing; cannot deploy")
        # Checked again here: a request validated by an operator without the check, or with a
        # generatedDeployment stored by one, reaches this step with another namespace in it.
        if foreign := deployment.foreign_namespaces(dgdr.request, generated):
            return Step(advance(State.DEPLOYING, ForeignNamespace("; ".join(foreign))))
        dgd_namespace, dgd_name = deployment.target(dgdr.request, generated)
        try:
            # Created as stored: a profile in v1alpha1 is converted here, as the webhook would.
            dgd = convert(deployment.deployment_from_profile(dgdr.request, generated), kinds.DGD.api_version)
        except ConversionError as err:
            return Step(
                advance(State.DEPLOYING, DeploymentCreationFailed(dgd_name, str(err), permanent=True))
            )
        try:
            await self._client.create(kinds.DGD, dgd)
        except errors.AlreadyExists:
            log.info("adopting existing DGD", dgdr=object_key(dgdr.raw), dgd=f"{dgd_namespace}/{dgd_name}")
        except errors.ApiError as err:
            permanent = isinstance(err, errors.Invalid | errors.BadRequest | errors.Forbidden)
            failed = DeploymentCreationFailed(dgd_name, str(err), permanent=permanent)
            return Step(advance(State.DEPLOYING, failed), cause=err)
        fields: RequestStatus = {
            "deployment": {"name": dgd_name, "namespace": dgd_namespace, "state": "pending", "created": True}
        }
        return Step(advance(State.DEPLOYING, DeploymentCreated(dgd_name)), fields)

    async def _observe_deployment(self, state: State, dgdr: RequestView) -> Step:
        tracked = dgdr.deployment.copy()
        name, namespace = str(tracked.get("name", "")), str(tracked.get("namespace", ""))
        dgd = await self._get(kinds.DGD, namespace, name)
        if dgd is None:
            tracked["state"] = ""
            return Step(advance(state, DeploymentMissing(name)), {"deployment": tracked})
        dgd_state = str((dgd.get("status") or {}).get("state") or "")
        tracked["state"] = dgd_state
        obs: Observation = DeploymentObserved(
            name, dgd_state, deployment.deployment_info(stored_graph_view(dgd))
        )
        return Step(advance(state, obs), {"deployment": tracked})


async def create_profiling_rbac(client: ChildClient, wanted: rbac.ProfilingRbac) -> None:
    """Create-only: an existing ServiceAccount or RoleBinding is kept as found (an administrator may
    have adjusted it; the operator never prunes them)."""
    with contextlib.suppress(errors.AlreadyExists):
        await client.create(SERVICE_ACCOUNT, wanted.service_account)
    if wanted.role_binding is not None:
        with contextlib.suppress(errors.AlreadyExists):
            await client.create(ROLE_BINDING, wanted.role_binding)


def _job_step(dgdr: RequestView, obs: JobCreated | JobHeldByAnother) -> Step:
    """The step after the Job was looked for or created; once it is ours, its name goes where upstream
    keeps it (v1beta1 status; the name is `names.job_name`'s either way)."""
    if isinstance(obs, JobCreated):
        return Step(advance(State.PENDING, obs), beta={stored.PROFILING_JOB_NAME: names.job_name(dgdr.name)})
    return Step(advance(State.PENDING, obs))


def _job_observation(dgdr: RequestView, existing: Obj, created: JobCreated) -> JobCreated | JobHeldByAnother:
    """What an existing Job of the request's Job name says: ours (controller reference with this
    request's uid), or an earlier request's Job of the same name, on its way out through GC."""
    refs = _meta(existing, "ownerReferences") or []
    if any(r.get("controller") and r.get("uid") == dgdr.uid for r in refs):
        return created
    log.info(
        "profiling job name held by another object", dgdr=object_key(dgdr.raw), job=_meta(existing, "name")
    )
    return JobHeldByAnother(str(_meta(existing, "name") or ""))


# -- wiring ------------------------------------------------------------------------------------------

CONTROLLER_NAME = "dynamographdeploymentrequest"
pod_status_only = keep_fields("status")
# Profiling pods, metadata and status only; output ConfigMaps (the label the profiler's sidecar sets),
# metadata only, sent so by the server: their data is the requester's, read live once when needed.
PROFILING_PODS = InformerOptions(label_selector=names.PROFILING_POD_SELECTOR, transform=pod_status_only)
OUTPUTS = InformerOptions(label_selector=OUTPUT_SELECTOR, metadata_only=True)


def build(mgr: Manager, settings: Settings) -> Built[DynamoGraphDeploymentRequestReconciler]:
    """The reconciler, reading its label-scoped informers, and its controller."""
    b = mgr.builder(CONTROLLER_NAME)
    reconciler = DynamoGraphDeploymentRequestReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(CONTROLLER_NAME),
        pods=b.informer(POD, PROFILING_PODS),
        outputs=b.informer(CONFIG_MAP, OUTPUTS),
        namespace_restricted=settings.namespace is not None,
        profiling_cluster_role=settings.profiling_cluster_role or None,
    )
    reconciler.setup(b)
    return Built(b.complete(observed(reconciler, kinds.DGDR)), reconciler)
