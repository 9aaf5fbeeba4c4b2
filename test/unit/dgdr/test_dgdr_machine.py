"""Every arrow of the DGDR lifecycle, one test each."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.dynamo.dgdr.machine import (
    JOB_RELEASE_RECHECK_SECONDS,
    OUTPUT_GRACE_SECONDS,
    OUTPUT_RECHECK_SECONDS,
    AutoApplyOff,
    DeploymentAlreadyCreated,
    DeploymentCreated,
    DeploymentCreationFailed,
    DeploymentMissing,
    DeploymentObserved,
    ForeignNamespace,
    GenerationFailed,
    InvalidObservation,
    JobCreated,
    JobCreationFailed,
    JobHeldByAnother,
    OutputMissing,
    OutputRefused,
    ProfilingFailed,
    ProfilingRunning,
    ReferencesMissing,
    Retry,
    SpecChanged,
    SpecGenerated,
    State,
    Validated,
    advance,
    parse_state,
    unknown_state,
)
from dynamo_operator.internal.dynamo.dgdr.vocabulary import ConditionType, EventReason, EventType, Reason


def _condition(t, kind):  # type: ignore[no-untyped-def]
    [cond] = [c for c in t.conditions if c.type == kind]
    return cond


def _event_reasons(t) -> list[str]:  # type: ignore[no-untyped-def]
    return [e.reason for e in t.events]


def test_initial_valid_spec_moves_to_pending_and_observes_generation() -> None:
    t = advance(State.INITIAL, Validated())
    assert t.state is State.PENDING
    assert t.observe_generation and t.proceed
    assert _event_reasons(t) == [EventReason.INITIALIZED]
    assert _condition(t, ConditionType.VALIDATION).status is True


def test_initial_invalid_spec_fails_with_validation_condition() -> None:
    t = advance(State.INITIAL, Validated(errors=("a is required", "b is bad")))
    assert t.state is State.FAILED and t.terminal
    cond = _condition(t, ConditionType.VALIDATION)
    assert (cond.status, cond.reason, cond.message) == (
        False,
        Reason.VALIDATION_FAILED,
        "a is required; b is bad",
    )
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.VALIDATION_FAILED)]


def test_initial_missing_references_wait_in_place_with_a_warning() -> None:
    """Not a failure: the request stays initial (not terminal, no requeue) until the object appears."""
    t = advance(State.INITIAL, ReferencesMissing(("ConfigMap base not found in namespace ns",)))
    assert t.state is State.INITIAL
    assert not (t.terminal or t.proceed or t.observe_generation)
    cond = _condition(t, ConditionType.VALIDATION)
    assert (cond.status, cond.reason, cond.message) == (
        False,
        Reason.REFERENCE_NOT_FOUND,
        "waiting for ConfigMap base not found in namespace ns",
    )
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.REFERENCE_NOT_FOUND)]


@pytest.mark.parametrize(
    ("aic", "message"),
    [
        pytest.param(False, "Profiling job created", id="online"),
        pytest.param(True, "AIC profiling job created", id="ai-configurator"),
    ],
)
def test_pending_job_created_moves_to_profiling(aic: bool, message: str) -> None:
    t = advance(State.PENDING, JobCreated(ai_configurator=aic))
    assert t.state is State.PROFILING
    cond = _condition(t, ConditionType.PROFILING)
    assert (cond.status, cond.reason) == (False, Reason.PROFILING_RUNNING)
    assert [(e.reason, e.message) for e in t.events] == [(EventReason.PROFILING_JOB_CREATED, message)]


def test_pending_job_creation_failure_fails() -> None:
    t = advance(State.PENDING, JobCreationFailed("forbidden"))
    assert t.state is State.FAILED
    cond = _condition(t, ConditionType.PROFILING)
    assert (cond.status, cond.reason, cond.message) == (False, Reason.JOB_CREATION_FAILED, "forbidden")
    assert _event_reasons(t) == [EventReason.PROFILING_JOB_FAILED]


def test_profiling_running_job_stays_without_writes() -> None:
    t = advance(State.PROFILING, ProfilingRunning())
    assert (t.state, t.conditions, t.events, t.proceed) == (State.PROFILING, (), (), False)


def test_profiling_failed_job_fails_with_pod_message() -> None:
    t = advance(State.PROFILING, ProfilingFailed("profiling job failed: x. Details: Pod: p, Message: OOM"))
    assert t.state is State.FAILED and t.terminal
    cond = _condition(t, ConditionType.PROFILING)
    assert (cond.status, cond.reason) == (False, Reason.PROFILING_FAILED)
    assert "OOM" in cond.message
    assert _event_reasons(t) == [EventReason.PROFILING_CHECK_FAILED]


def test_profiling_generation_failure_fails_with_spec_generated_false() -> None:
    t = advance(State.PROFILING, GenerationFailed("no DynamoGraphDeployment found"))
    assert t.state is State.FAILED
    assert _condition(t, ConditionType.PROFILING).status is True
    cond = _condition(t, ConditionType.SPEC_GENERATED)
    assert (cond.status, cond.reason) == (False, Reason.GENERATION_FAILED)
    assert _event_reasons(t) == [EventReason.GENERATION_FAILED]


def test_profiling_output_past_a_limit_fails_with_the_limit_as_reason() -> None:
    message = "profiler output exceeds the expanded size limit (4194304)"
    t = advance(State.PROFILING, OutputRefused("expanded size", message))
    assert t.state is State.FAILED and t.terminal
    cond = _condition(t, ConditionType.SPEC_GENERATED)
    assert (cond.status, cond.reason, cond.message) == (False, Reason.OUTPUT_LIMIT_EXCEEDED, message)
    assert [(e.type, e.reason, e.message) for e in t.events] == [
        (EventType.WARNING, EventReason.OUTPUT_LIMIT_EXCEEDED, message)
    ]


@pytest.mark.parametrize(
    ("state", "kind"),
    [
        pytest.param(State.INITIAL, ConditionType.VALIDATION, id="at-validation"),
        pytest.param(State.PROFILING, ConditionType.SPEC_GENERATED, id="in-the-output"),
        pytest.param(State.DEPLOYING, ConditionType.DEPLOYMENT_READY, id="before-deploying"),
    ],
)
def test_another_namespace_fails_the_request_where_it_is_found(state: State, kind: ConditionType) -> None:
    message = "spec.deploymentOverrides.namespace is 'kube-system': ..."
    t = advance(state, ForeignNamespace(message))
    assert t.state is State.FAILED and t.terminal
    cond = _condition(t, kind)
    assert (cond.status, cond.reason, cond.message) == (False, Reason.NAMESPACE_NOT_ALLOWED, message)
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.NAMESPACE_NOT_ALLOWED)]


def test_profiling_generated_without_auto_apply_is_ready() -> None:
    t = advance(State.PROFILING, SpecGenerated(auto_apply=False))
    assert t.state is State.READY and not t.proceed
    cond = _condition(t, ConditionType.SPEC_GENERATED)
    assert (cond.status, cond.reason) == (True, Reason.SPEC_GENERATED)
    assert "status.generatedDeployment" in cond.message
    assert _condition(t, ConditionType.PROFILING).reason is Reason.PROFILING_COMPLETED
    assert _event_reasons(t) == [EventReason.SPEC_GENERATED]


def test_profiling_generated_with_auto_apply_moves_to_deploying() -> None:
    t = advance(State.PROFILING, SpecGenerated(auto_apply=True))
    assert t.state is State.DEPLOYING and t.proceed
    assert _condition(t, ConditionType.SPEC_GENERATED).status is True


def test_deploying_dgd_created_waits_for_ready() -> None:
    t = advance(State.DEPLOYING, DeploymentCreated("g"))
    assert t.state is State.DEPLOYING
    cond = _condition(t, ConditionType.DEPLOYMENT_READY)
    assert (cond.status, cond.reason) == (False, Reason.DEPLOYMENT_CREATED)
    assert _event_reasons(t) == [EventReason.DEPLOYMENT_CREATED]


def test_deploying_dgd_creation_failure_stays_deploying_with_warning() -> None:
    t = advance(State.DEPLOYING, DeploymentCreationFailed("g", "quota"))
    assert t.state is State.DEPLOYING and t.conditions == ()
    assert [(e.type, e.reason) for e in t.events] == [
        (EventType.WARNING, EventReason.DEPLOYMENT_CREATION_FAILED)
    ]


@pytest.mark.parametrize(
    ("permanent", "retry"),
    [pytest.param(False, Retry.BACKOFF, id="transient"), pytest.param(True, Retry.NEVER, id="refused")],
)
def test_deploying_dgd_creation_failure_is_retried_unless_refused_for_good(
    permanent: bool, retry: Retry
) -> None:
    t = advance(State.DEPLOYING, DeploymentCreationFailed("g", "quota", permanent=permanent))
    assert t.retry is retry and not t.proceed


def test_deploying_with_a_stale_view_waits_quietly_for_the_fresh_one() -> None:
    t = advance(State.DEPLOYING, DeploymentAlreadyCreated())
    assert (t.state, t.conditions, t.events, t.proceed, t.retry) == (State.DEPLOYING, (), (), False, None)


def test_deploying_without_auto_apply_is_ready() -> None:
    t = advance(State.DEPLOYING, AutoApplyOff())
    assert (t.state, t.events) == (State.READY, ())


def test_pending_job_name_held_by_an_earlier_request_is_rechecked_quietly() -> None:
    t = advance(State.PENDING, JobHeldByAnother("profile-r"))
    assert (t.state, t.conditions, t.events, t.retry) == (State.PENDING, (), (), None)
    assert t.requeue_after == JOB_RELEASE_RECHECK_SECONDS


@pytest.mark.parametrize(
    "waited", [pytest.param(0.0, id="just-completed"), pytest.param(OUTPUT_GRACE_SECONDS - 1, id="in-grace")]
)
def test_profiling_output_missing_within_the_grace_is_rechecked(waited: float) -> None:
    t = advance(State.PROFILING, OutputMissing("dgdr-output-r", waited))
    assert (t.state, t.conditions, t.events) == (State.PROFILING, (), ())
    assert t.requeue_after == OUTPUT_RECHECK_SECONDS


@pytest.mark.parametrize(
    "waited",
    [pytest.param(OUTPUT_GRACE_SECONDS, id="past-grace"), pytest.param(None, id="no-completion-time")],
)
def test_profiling_output_missing_past_the_grace_fails_generation(waited: float | None) -> None:
    t = advance(State.PROFILING, OutputMissing("dgdr-output-r", waited))
    assert t.state is State.FAILED and t.terminal
    cond = _condition(t, ConditionType.SPEC_GENERATED)
    assert (cond.reason, cond.message) == (
        Reason.GENERATION_FAILED,
        "ConfigMap dgdr-output-r not found: profiling may not have completed",
    )
    assert _event_reasons(t) == [EventReason.GENERATION_FAILED]


def test_extra_config_maps_that_failed_are_warned_about_with_the_generated_spec() -> None:
    t = advance(
        State.PROFILING, SpecGenerated(auto_apply=False, failed_config_maps=("Failed: a", "Failed: b"))
    )
    assert t.state is State.READY
    assert [(e.type, e.reason, e.message) for e in t.events] == [
        (EventType.WARNING, EventReason.CONFIG_MAP_CREATION_FAILED, "Failed: a"),
        (EventType.WARNING, EventReason.CONFIG_MAP_CREATION_FAILED, "Failed: b"),
        (EventType.NORMAL, EventReason.SPEC_GENERATED, "DynamoGraphDeployment spec generated successfully"),
    ]


def test_deploying_successful_dgd_is_ready() -> None:
    t = advance(State.DEPLOYING, DeploymentObserved("g", "successful"))
    assert t.state is State.READY
    cond = _condition(t, ConditionType.DEPLOYMENT_READY)
    assert (cond.status, cond.reason) == (True, Reason.DEPLOYMENT_READY)
    assert _event_reasons(t) == [EventReason.DEPLOYMENT_READY]


def test_deploying_pending_dgd_keeps_deploying_quietly() -> None:
    t = advance(State.DEPLOYING, DeploymentObserved("g", "pending"))
    assert (t.state, t.conditions, t.events) == (State.DEPLOYING, (), ())


def test_deploying_deleted_dgd_fails_the_request_with_reason_deployment_deleted() -> None:
    """v1beta1 (stored) has no DeploymentDeleted phase: Failed, as upstream's v1beta1 controller."""
    t = advance(State.DEPLOYING, DeploymentMissing("g"))
    assert t.state is State.FAILED and t.terminal
    assert _condition(t, ConditionType.DEPLOYMENT_READY).reason is Reason.DEPLOYMENT_DELETED


def test_ready_degraded_dgd_goes_back_to_deploying() -> None:
    t = advance(State.READY, DeploymentObserved("g", "failed"))
    assert t.state is State.DEPLOYING
    cond = _condition(t, ConditionType.DEPLOYMENT_READY)
    assert (cond.status, cond.reason, cond.message) == (
        False,
        Reason.DEPLOYMENT_DEGRADED,
        "Deployment degraded to failed",
    )
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.DEPLOYMENT_DEGRADED)]


def test_ready_successful_dgd_stays_ready_quietly() -> None:
    t = advance(State.READY, DeploymentObserved("g", "successful"))
    assert (t.state, t.conditions, t.events) == (State.READY, (), ())


def test_ready_deleted_dgd_fails_the_request_with_warning() -> None:
    t = advance(State.READY, DeploymentMissing("g"))
    assert t.state is State.FAILED
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.DEPLOYMENT_DELETED)]
    assert "will not recreate" in t.events[0].message


@pytest.mark.parametrize(
    "state",
    [
        pytest.param(State.PROFILING, id="profiling"),
        pytest.param(State.DEPLOYING, id="deploying"),
        pytest.param(State.READY, id="ready"),
        pytest.param(State.DEPLOYMENT_DELETED, id="deployment-deleted"),
    ],
)
def test_spec_change_after_profiling_started_is_rejected_in_place(state: State) -> None:
    t = advance(state, SpecChanged())
    assert t.state is state and not t.observe_generation and not t.proceed
    cond = _condition(t, ConditionType.VALIDATION)
    assert (cond.status, cond.reason) == (False, Reason.SPEC_CHANGE_REJECTED)
    assert [(e.type, e.reason) for e in t.events] == [(EventType.WARNING, EventReason.SPEC_CHANGE_REJECTED)]


def test_unknown_state_fails() -> None:
    t = unknown_state("Bogus")
    assert t.state is State.FAILED
    assert _condition(t, ConditionType.VALIDATION).reason is Reason.UNKNOWN_STATE


@pytest.mark.parametrize(
    ("state", "obs"),
    [
        pytest.param(State.FAILED, Validated(), id="failed-is-terminal"),
        pytest.param(
            State.DEPLOYMENT_DELETED, DeploymentObserved("g", "successful"), id="deleted-is-terminal"
        ),
        pytest.param(State.READY, JobCreated(), id="no-job-after-ready"),
        pytest.param(State.PENDING, SpecChanged(), id="pending-edits-are-used"),
    ],
)
def test_impossible_observations_are_refused(state: State, obs: object) -> None:
    with pytest.raises(InvalidObservation):
        advance(state, obs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "state"),
    [
        pytest.param(None, State.INITIAL, id="missing"),
        pytest.param("", State.INITIAL, id="empty"),
        pytest.param("DeploymentDeleted", State.DEPLOYMENT_DELETED, id="known"),
        pytest.param("Initializing", None, id="unknown"),
    ],
)
def test_state_parse(value: str | None, state: State | None) -> None:
    assert parse_state(value) is state


@pytest.mark.parametrize(
    ("status", "label"),
    [
        pytest.param({}, "unknown", id="uninitialised"),
        pytest.param({"state": "Profiling"}, "Profiling", id="state"),
    ],
)
def test_metrics_state(status: dict[str, str], label: str) -> None:
    from dynamo_operator.internal.dynamo.dgdr.machine import metrics_state

    assert metrics_state({"status": status}) == label
