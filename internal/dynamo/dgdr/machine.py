"""The DGDR lifecycle as data: the API's `DGDRState` (`State` here), the observations a reconcile can
make in each state, and `advance`, the only function that decides the next state.

The reconciler does the I/O of a state (create the Job, read it back, create the DGD, ...), turns what
it saw into one observation, and asks `advance` for the resulting `Transition`: next state, conditions
to upsert and Events to record. Keeping the decision pure lets every arrow be a unit test.

    ""        ──Validated──────────► Pending     (errors ──► Failed)
    ""        ──ReferencesMissing──► ""          waits: the object's watch brings it back
    Pending   ──JobCreated─────────► Profiling   (JobCreationFailed ──► Failed)
    Pending   ──JobHeldByAnother───► Pending     rechecked: an earlier request's Job is going
    Profiling ──SpecGenerated──────► Ready, or Deploying with autoApply
              (ProfilingFailed, GenerationFailed ──► Failed)
    Profiling ──OutputMissing──────► Profiling within the grace, then Failed
    Deploying ──DeploymentCreationFailed──► Deploying: one Warning, retried with backoff unless refused
    Deploying ──DeploymentObserved─► Ready once the DGD is successful; Ready ──► Deploying if it degrades
    Deploying ──AutoApplyOff───────► Ready       (a request stored in Deploying without autoApply)
    Deploying/Ready ──DeploymentMissing──► Failed (terminal: the DGD is never recreated)
    "", Profiling, Deploying ──ForeignNamespace──► Failed   (nothing is created in another namespace)
    Profiling ──OutputRefused──► Failed                      (the output passed a parser limit)

Beside the state, a transition says what becomes of two v1beta1-only status fields (KEEP: left as
stored), as upstream's v1beta1 controller writes them:
- `profilingPhase`, the profiler's step: Initializing when the Job is created, then each new step
  the profiler reports (the Profiling condition's reason mirrors it); kept on a failed Job, so the
  step it died in stays visible (the reason says "<step>Failed"); cleared once the output was read,
  whether a graph came of it or not;
- `deploymentInfo`, the created graph's replicas summed over its services: written at each look at
  the graph (Deploying, Ready), cleared when the graph is gone.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.v1alpha1.enums import IMMUTABLE_SPEC_STATES, DGDRState
from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.internal.dynamo.dgdr.names import DGD_READY_STATE
from dynamo_operator.internal.dynamo.dgdr.vocabulary import (
    ConditionSpec,
    ConditionType,
    EventReason,
    EventSpec,
    EventType,
    Reason,
    profiling_failure_reason,
    profiling_step_reason,
)

State = DGDRState  # one enum: the API's, under the name the lifecycle code reads best with


def parse_state(value: str | None) -> State | None:
    """The state for an API string (missing means INITIAL); None for an unknown string."""
    try:
        return State(value or "")
    except ValueError:
        return None


# Once profiling started the spec is frozen: the Job, the generated DGD and the deployment all derive
# from the spec as it was; applying an edit would silently desynchronise them.
IMMUTABLE_STATES = frozenset(IMMUTABLE_SPEC_STATES)
TERMINAL_STATES = frozenset({State.FAILED, State.DEPLOYMENT_DELETED})

# A Job that completed may show before the sidecar's output ConfigMap does: it is given this long
# (from the Job's completionTime) before the missing output fails the request, rechecked this often.
OUTPUT_GRACE_SECONDS = 60.0
OUTPUT_RECHECK_SECONDS = 5.0
# How often a request whose Job name is still held by an earlier request's Job looks again (the
# Job's deletion brings it back sooner through the Job watch; this is the fallback).
JOB_RELEASE_RECHECK_SECONDS = 5.0


class Keep(enum.Enum):
    """A transition's word for a status field it leaves as stored."""

    KEEP = "keep"


KEEP = Keep.KEEP


@dataclass(frozen=True, slots=True)
class DeploymentInfo:
    """`status.deploymentInfo`: the created graph's replicas, wanted and available, over its services."""

    replicas: int = 0
    available_replicas: int = 0

    def as_status(self) -> dict[str, int]:
        return {"replicas": self.replicas, "availableReplicas": self.available_replicas}


@dataclass(frozen=True, slots=True)
class ProfilerReport:
    """The step the profiler last reported (through its sidecar, in the output ConfigMap) and the
    message that came with it."""

    phase: ProfilingPhase
    message: str = ""


# ---- observations -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Validated:
    """Result of validating the spec (INITIAL); no errors means valid."""

    errors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ReferencesMissing:
    """The spec is valid but names objects that do not exist (yet) (INITIAL): a ConfigMap, a key in
    it, a PVC. Not a failure: creating them is how the user fixes it, and their watch re-checks."""

    missing: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JobCreated:
    """The profiling Job exists (PENDING)."""

    ai_configurator: bool = False


@dataclass(frozen=True, slots=True)
class JobCreationFailed:
    error: str


@dataclass(frozen=True, slots=True)
class JobHeldByAnother:
    """The profiling Job's name is taken by a Job another object controls (PENDING): the Job of an
    earlier request of the same name, on its way out through garbage collection."""

    name: str


@dataclass(frozen=True, slots=True)
class ProfilingRunning:
    """The Job has not finished yet (PROFILING). `report`: what the profiler last reported, if
    anything; `current`: the step the status holds (a report of that same step changes nothing)."""

    report: ProfilerReport | None = None
    current: ProfilingPhase | None = None


@dataclass(frozen=True, slots=True)
class ProfilingFailed:
    """The Job failed or vanished; `message` carries the pod's termination details, `phase` the
    step the run was at (the profiler's last report, else the status's; None when neither says)."""

    message: str
    phase: ProfilingPhase | None = None


@dataclass(frozen=True, slots=True)
class SpecGenerated:
    """The Job completed and its output held a DGD (PROFILING). `failed_config_maps`: one message
    per extra ConfigMap of the output that could not be created (reported, not fatal: the DGD may
    not need it)."""

    auto_apply: bool
    failed_config_maps: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OutputMissing:
    """The Job completed `waited` seconds ago (None: unknown) and its output ConfigMap `name` is not
    there (PROFILING)."""

    name: str
    waited: float | None


@dataclass(frozen=True, slots=True)
class GenerationFailed:
    """The Job completed but its output could not be turned into a DGD."""

    error: str


@dataclass(frozen=True, slots=True)
class OutputRefused:
    """The Job completed but its output passed a parser limit (`limit` names it): never parsed further."""

    limit: str
    message: str


@dataclass(frozen=True, slots=True)
class ForeignNamespace:
    """The spec (INITIAL), the profiler output (PROFILING) or the stored generated DGD (DEPLOYING)
    names a namespace other than the request's own; `message` names the field."""

    message: str


@dataclass(frozen=True, slots=True)
class DeploymentCreated:
    """The reconciler created (or adopted) the DGD (DEPLOYING)."""

    name: str


@dataclass(frozen=True, slots=True)
class DeploymentCreationFailed:
    """The API server refused the DGD's create (DEPLOYING); `permanent` when a retry of the same
    create cannot succeed (invalid, forbidden)."""

    name: str
    error: str
    permanent: bool = False


@dataclass(frozen=True, slots=True)
class DeploymentAlreadyCreated:
    """A fresh read of the request says the DGD was created, where the view at hand (the cache's)
    does not: it is stale, and its watch brings the fresh one (DEPLOYING)."""


@dataclass(frozen=True, slots=True)
class AutoApplyOff:
    """The request reached DEPLOYING without autoApply (stored so by hand or by an older operator)."""


@dataclass(frozen=True, slots=True)
class DeploymentObserved:
    """The DGD exists; `state` is its status.state, `info` its replicas (DEPLOYING, READY)."""

    name: str
    state: str
    info: DeploymentInfo = field(default_factory=DeploymentInfo)


@dataclass(frozen=True, slots=True)
class DeploymentMissing:
    """The DGD the DGDR created is gone: a user deleted it (DEPLOYING, READY)."""

    name: str


@dataclass(frozen=True, slots=True)
class SpecChanged:
    """metadata.generation moved past status.observedGeneration (any state)."""


Observation = (
    Validated
    | ReferencesMissing
    | JobCreated
    | JobCreationFailed
    | JobHeldByAnother
    | ProfilingRunning
    | ProfilingFailed
    | SpecGenerated
    | OutputMissing
    | GenerationFailed
    | OutputRefused
    | ForeignNamespace
    | DeploymentCreated
    | DeploymentCreationFailed
    | DeploymentAlreadyCreated
    | AutoApplyOff
    | DeploymentObserved
    | DeploymentMissing
    | SpecChanged
)


class Retry(enum.Enum):
    """How a reconcile ends after an attempt that failed and changed no status."""

    BACKOFF = "backoff"  # transient: the controller retries with its error backoff
    NEVER = "never"  # refused for good: nothing is retried until the request or the cluster changes


@dataclass(frozen=True, slots=True)
class Transition:
    """What to write after an observation. `state` may equal the current state (a self-loop)."""

    state: State
    conditions: tuple[ConditionSpec, ...] = ()
    events: tuple[EventSpec, ...] = ()
    # True when the reconciler should record spec.generation as observed (only on initialisation).
    observe_generation: bool = False
    # True when the state machine should keep going in the same reconcile (a state was entered whose
    # work can start at once); False when progress waits for a watch event.
    proceed: bool = False
    terminal: bool = field(default=False)
    # Seconds until the request is looked at again when no watch event is sure to bring it back.
    requeue_after: float | None = None
    # Set for a failed attempt: nothing is written, the Events are recorded every time (there is no
    # status write for them to follow) and the reconcile ends as an error.
    retry: Retry | None = None
    # The v1beta1-only fields (module docstring): a value to write, None to clear, KEEP.
    profiling_phase: ProfilingPhase | Keep | None = KEEP
    deployment_info: DeploymentInfo | Keep | None = KEEP


class InvalidObservation(ValueError):
    """An observation that cannot happen in the given state: a bug in the reconciler."""


def _warning(reason: EventReason, message: str) -> EventSpec:
    return EventSpec(EventType.WARNING, reason, message)


def _normal(reason: EventReason, message: str) -> EventSpec:
    return EventSpec(EventType.NORMAL, reason, message)


def _cond(kind: ConditionType, status: bool, reason: Reason, message: str) -> ConditionSpec:
    return ConditionSpec(kind, status, reason, message)


def advance(state: State, obs: Observation) -> Transition:
    """The next state, conditions and Events after observing `obs` in `state`."""
    match state, obs:
        case _, SpecChanged() if state in IMMUTABLE_STATES:
            message = (
                f"spec cannot be modified in state '{state.value}': the request is immutable once "
                "profiling starts; create a new DynamoGraphDeploymentRequest with another name instead"
            )
            return Transition(
                state,
                conditions=(_cond(ConditionType.VALIDATION, False, Reason.SPEC_CHANGE_REJECTED, message),),
                events=(_warning(EventReason.SPEC_CHANGE_REJECTED, message),),
            )
        case State.INITIAL, Validated(errors=errors) if errors:
            message = "; ".join(errors)
            return Transition(
                State.FAILED,
                conditions=(_cond(ConditionType.VALIDATION, False, Reason.VALIDATION_FAILED, message),),
                events=(_warning(EventReason.VALIDATION_FAILED, message),),
                terminal=True,
            )
        case State.INITIAL, ReferencesMissing(missing=missing):
            message = f"waiting for {'; '.join(missing)}"
            return Transition(
                State.INITIAL,
                conditions=(_cond(ConditionType.VALIDATION, False, Reason.REFERENCE_NOT_FOUND, message),),
                events=(_warning(EventReason.REFERENCE_NOT_FOUND, message),),
            )
        case State.INITIAL, Validated():
            return Transition(
                State.PENDING,
                conditions=(
                    _cond(ConditionType.VALIDATION, True, Reason.VALIDATION_PASSED, "Spec is valid"),
                ),
                events=(_normal(EventReason.INITIALIZED, "DGDR initialized successfully"),),
                observe_generation=True,
                proceed=True,
            )
        case State.PENDING, JobCreated(ai_configurator=aic):
            created = "AIC profiling job created" if aic else "Profiling job created"
            return Transition(
                State.PROFILING,
                conditions=(
                    _cond(
                        ConditionType.PROFILING, False, Reason.PROFILING_RUNNING, "Profiling is in progress"
                    ),
                ),
                events=(_normal(EventReason.PROFILING_JOB_CREATED, created),),
                proceed=True,
                profiling_phase=ProfilingPhase.INITIALIZING,
            )
        case State.PENDING, JobHeldByAnother():
            return Transition(State.PENDING, requeue_after=JOB_RELEASE_RECHECK_SECONDS)
        case State.PENDING, JobCreationFailed(error=error):
            return Transition(
                State.FAILED,
                conditions=(_cond(ConditionType.PROFILING, False, Reason.JOB_CREATION_FAILED, error),),
                events=(_warning(EventReason.PROFILING_JOB_FAILED, error),),
                terminal=True,
            )
        case State.PROFILING, ProfilingRunning(report=ProfilerReport() as report, current=current) if (
            report.phase != current
        ):
            return Transition(
                State.PROFILING,
                conditions=(
                    _cond(
                        ConditionType.PROFILING, False, profiling_step_reason(report.phase), report.message
                    ),
                ),
                profiling_phase=report.phase,
            )
        case State.PROFILING, ProfilingRunning():
            return Transition(State.PROFILING)
        case State.PROFILING, OutputMissing(waited=waited) if waited is not None and (
            waited < OUTPUT_GRACE_SECONDS
        ):
            return Transition(State.PROFILING, requeue_after=OUTPUT_RECHECK_SECONDS)
        case State.PROFILING, OutputMissing(name=name):
            return advance(
                state, GenerationFailed(f"ConfigMap {name} not found: profiling may not have completed")
            )
        case State.PROFILING, ProfilingFailed(message=message, phase=phase):
            # The step stays (upstream keeps it so the user sees where the run died).
            return Transition(
                State.FAILED,
                conditions=(_cond(ConditionType.PROFILING, False, profiling_failure_reason(phase), message),),
                events=(_warning(EventReason.PROFILING_CHECK_FAILED, message),),
                terminal=True,
                profiling_phase=KEEP if phase is None else phase,
            )
        case State.PROFILING, GenerationFailed(error=error):
            return Transition(
                State.FAILED,
                conditions=(
                    _completed(),
                    _cond(ConditionType.SPEC_GENERATED, False, Reason.GENERATION_FAILED, error),
                ),
                events=(_warning(EventReason.GENERATION_FAILED, error),),
                terminal=True,
                profiling_phase=None,
            )
        case State.PROFILING, OutputRefused(message=message):
            return Transition(
                State.FAILED,
                conditions=(
                    _completed(),
                    _cond(ConditionType.SPEC_GENERATED, False, Reason.OUTPUT_LIMIT_EXCEEDED, message),
                ),
                events=(_warning(EventReason.OUTPUT_LIMIT_EXCEEDED, message),),
                terminal=True,
                profiling_phase=None,
            )
        case ((State.INITIAL | State.PROFILING | State.DEPLOYING), ForeignNamespace(message=message)):
            kind = _NAMESPACE_CONDITION[state]
            done = (_completed(),) if state is State.PROFILING else ()
            return Transition(
                State.FAILED,
                conditions=(*done, _cond(kind, False, Reason.NAMESPACE_NOT_ALLOWED, message)),
                events=(_warning(EventReason.NAMESPACE_NOT_ALLOWED, message),),
                terminal=True,
                # Refusing the output ends profiling as a generation failure does.
                profiling_phase=None if state is State.PROFILING else KEEP,
            )
        case State.PROFILING, SpecGenerated(auto_apply=auto_apply, failed_config_maps=failed):
            message = (
                "DynamoGraphDeployment spec generated successfully"
                if auto_apply
                else "Generated spec is available in status.generatedDeployment"
            )
            return Transition(
                State.DEPLOYING if auto_apply else State.READY,
                conditions=(
                    _completed(),
                    _cond(ConditionType.SPEC_GENERATED, True, Reason.SPEC_GENERATED, message),
                ),
                events=(
                    *(_warning(EventReason.CONFIG_MAP_CREATION_FAILED, message) for message in failed),
                    _normal(EventReason.SPEC_GENERATED, "DynamoGraphDeployment spec generated successfully"),
                ),
                proceed=auto_apply,
                profiling_phase=None,
            )
        case State.DEPLOYING, DeploymentCreated(name=name):
            return Transition(
                State.DEPLOYING,
                conditions=(
                    _cond(
                        ConditionType.DEPLOYMENT_READY,
                        False,
                        Reason.DEPLOYMENT_CREATED,
                        f"DGD {name} created, waiting for Ready",
                    ),
                ),
                events=(
                    _normal(
                        EventReason.DEPLOYMENT_CREATED, f"DynamoGraphDeployment {name} created successfully"
                    ),
                ),
            )
        case State.DEPLOYING, DeploymentCreationFailed(name=name, error=error, permanent=permanent):
            return Transition(
                State.DEPLOYING,
                events=(
                    _warning(
                        EventReason.DEPLOYMENT_CREATION_FAILED,
                        f"Failed to create DynamoGraphDeployment {name}: {error}",
                    ),
                ),
                retry=Retry.NEVER if permanent else Retry.BACKOFF,
            )
        case State.DEPLOYING, DeploymentAlreadyCreated():
            return Transition(State.DEPLOYING)
        case State.DEPLOYING, AutoApplyOff():
            return Transition(State.READY)
        case State.DEPLOYING, DeploymentObserved(name=name, state=dgd_state, info=info) if (
            dgd_state == DGD_READY_STATE
        ):
            return Transition(
                State.READY,
                deployment_info=info,
                conditions=(
                    _cond(
                        ConditionType.DEPLOYMENT_READY,
                        True,
                        Reason.DEPLOYMENT_READY,
                        f"DynamoGraphDeployment {name} is ready",
                    ),
                ),
                events=(_normal(EventReason.DEPLOYMENT_READY, f"DynamoGraphDeployment {name} is ready"),),
            )
        case State.DEPLOYING, DeploymentObserved(info=info):
            return Transition(State.DEPLOYING, deployment_info=info)
        case State.READY, DeploymentObserved(state=dgd_state, info=info) if dgd_state == DGD_READY_STATE:
            return Transition(State.READY, deployment_info=info)
        case State.READY, DeploymentObserved(name=name, state=dgd_state, info=info):
            return Transition(
                State.DEPLOYING,
                deployment_info=info,
                conditions=(
                    _cond(
                        ConditionType.DEPLOYMENT_READY,
                        False,
                        Reason.DEPLOYMENT_DEGRADED,
                        f"Deployment degraded to {dgd_state or 'unknown'}",
                    ),
                ),
                events=(
                    _warning(
                        EventReason.DEPLOYMENT_DEGRADED,
                        f"DynamoGraphDeployment {name} degraded from Ready to {dgd_state or 'unknown'}",
                    ),
                ),
            )
        case ((State.DEPLOYING | State.READY), DeploymentMissing(name=name)):
            # Failed, as upstream's v1beta1 has it: v1beta1 has no DeploymentDeleted phase (a request
            # stored so by an older release is as terminal); the condition's reason says why.
            return Transition(
                State.FAILED,
                conditions=(
                    _cond(
                        ConditionType.DEPLOYMENT_READY,
                        False,
                        Reason.DEPLOYMENT_DELETED,
                        f"DGD {name} was deleted; it will not be recreated",
                    ),
                ),
                events=(
                    _warning(
                        EventReason.DEPLOYMENT_DELETED,
                        f"DGD {name} was deleted. DGDR will not recreate it. "
                        "Delete this DGDR and create a new one to redeploy.",
                    ),
                ),
                terminal=True,
                deployment_info=None,
            )
        case _:
            raise InvalidObservation(f"{type(obs).__name__} cannot be observed in state {state.value!r}")


# Where a refused namespace is reported: the step that found it.
_NAMESPACE_CONDITION = {
    State.INITIAL: ConditionType.VALIDATION,
    State.PROFILING: ConditionType.SPEC_GENERATED,
    State.DEPLOYING: ConditionType.DEPLOYMENT_READY,
}


def unknown_state(value: str) -> Transition:
    """Recovery for a `status.state` this operator does not know (edited by hand, or a newer API)."""
    message = f"unknown state {value!r}"
    return Transition(
        State.FAILED,
        conditions=(_cond(ConditionType.VALIDATION, False, Reason.UNKNOWN_STATE, message),),
        terminal=True,
    )


def _completed() -> ConditionSpec:
    return _cond(
        ConditionType.PROFILING, True, Reason.PROFILING_COMPLETED, "Profiling job completed successfully"
    )


def metrics_state(dgdr: Mapping[str, Any]) -> str:
    """The `status` label of the resource-count metric: the state, `unknown` before initialisation."""
    return str((dgdr.get("status") or {}).get("state") or "unknown")
