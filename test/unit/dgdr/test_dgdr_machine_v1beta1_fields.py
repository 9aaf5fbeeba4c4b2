"""What each arrow of the DGDR lifecycle does to the v1beta1-only status fields `profilingPhase` and
`deploymentInfo` (upstream's v1beta1 controller writes both), and how the Profiling condition's
reason mirrors the profiler's step; one test each."""

from __future__ import annotations

import pytest
from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.internal.dynamo.dgdr.machine import (
    KEEP,
    DeploymentCreated,
    DeploymentInfo,
    DeploymentMissing,
    DeploymentObserved,
    ForeignNamespace,
    GenerationFailed,
    JobCreated,
    Observation,
    OutputMissing,
    OutputRefused,
    ProfilerReport,
    ProfilingFailed,
    ProfilingRunning,
    SpecChanged,
    SpecGenerated,
    State,
    Transition,
    Validated,
    advance,
)
from dynamo_operator.internal.dynamo.dgdr.vocabulary import ConditionSpec, ConditionType, Reason

INFO = DeploymentInfo(replicas=3, available_replicas=2)


def _profiling_condition(t: Transition) -> ConditionSpec:
    [cond] = [c for c in t.conditions if c.type == ConditionType.PROFILING]
    return cond


def test_the_job_created_sets_the_step_to_initializing() -> None:
    t = advance(State.PENDING, JobCreated())
    assert t.profiling_phase is ProfilingPhase.INITIALIZING
    assert t.deployment_info is KEEP


def test_a_new_step_reported_by_the_profiler_is_written_with_the_condition_mirroring_it() -> None:
    report = ProfilerReport(ProfilingPhase.SWEEPING_DECODE, "sweeping decode: tp=2")
    t = advance(State.PROFILING, ProfilingRunning(report, current=ProfilingPhase.SWEEPING_PREFILL))
    assert (t.state, t.profiling_phase, t.events) == (State.PROFILING, ProfilingPhase.SWEEPING_DECODE, ())
    cond = _profiling_condition(t)
    assert (cond.status, cond.reason) == (False, Reason.SWEEPING_DECODE)
    assert cond.message == "sweeping decode: tp=2"


def test_the_done_step_reads_completed_in_the_condition() -> None:
    t = advance(State.PROFILING, ProfilingRunning(ProfilerReport(ProfilingPhase.DONE, "finished")))
    assert t.profiling_phase is ProfilingPhase.DONE
    assert _profiling_condition(t).reason is Reason.COMPLETED


def test_the_step_already_in_the_status_changes_nothing() -> None:
    report = ProfilerReport(ProfilingPhase.INITIALIZING, "loading the model")
    t = advance(State.PROFILING, ProfilingRunning(report, current=ProfilingPhase.INITIALIZING))
    assert (t.conditions, t.profiling_phase) == ((), KEEP)


def test_no_report_yet_changes_nothing() -> None:
    t = advance(State.PROFILING, ProfilingRunning(None, current=ProfilingPhase.INITIALIZING))
    assert (t.conditions, t.profiling_phase) == ((), KEEP)


def test_a_failed_job_keeps_the_step_it_died_in_and_names_it_in_the_reason() -> None:
    failed = ProfilingFailed("profiling job failed: OOM", ProfilingPhase.SWEEPING_PREFILL)
    t = advance(State.PROFILING, failed)
    assert (t.state, t.profiling_phase) == (State.FAILED, ProfilingPhase.SWEEPING_PREFILL)
    cond = _profiling_condition(t)
    assert (cond.status, cond.reason, cond.message) == (
        False,
        Reason.SWEEPING_PREFILL_FAILED,
        "profiling job failed: OOM",
    )


def test_a_failed_job_with_no_known_step_keeps_the_field_and_the_generic_reason() -> None:
    t = advance(State.PROFILING, ProfilingFailed("profiling job failed: x"))
    assert t.profiling_phase is KEEP
    assert _profiling_condition(t).reason is Reason.PROFILING_FAILED


@pytest.mark.parametrize(
    "obs",
    [
        pytest.param(SpecGenerated(auto_apply=False), id="generated-ready"),
        pytest.param(SpecGenerated(auto_apply=True), id="generated-deploying"),
        pytest.param(GenerationFailed("no DynamoGraphDeployment found"), id="generation-failed"),
        pytest.param(OutputMissing("dgdr-output-r", waited=None), id="output-missing-past-grace"),
        pytest.param(OutputRefused("depth", "too deep"), id="output-refused"),
        pytest.param(ForeignNamespace("the generated DGD names namespace other"), id="foreign-namespace"),
    ],
)
def test_profiling_that_ended_with_its_output_read_clears_the_step(obs: Observation) -> None:
    assert advance(State.PROFILING, obs).profiling_phase is None


@pytest.mark.parametrize(
    ("state", "obs"),
    [
        pytest.param(State.PROFILING, OutputMissing("dgdr-output-r", waited=1.0), id="output-within-grace"),
        pytest.param(State.PROFILING, SpecChanged(), id="frozen-spec-edit"),
        pytest.param(State.INITIAL, Validated(), id="validated"),
        pytest.param(State.DEPLOYING, DeploymentCreated("g"), id="dgd-created"),
        pytest.param(State.DEPLOYING, ForeignNamespace("x"), id="deploy-foreign-namespace"),
    ],
)
def test_steps_that_do_not_end_or_start_profiling_keep_the_step(state: State, obs: Observation) -> None:
    assert advance(state, obs).profiling_phase is KEEP


@pytest.mark.parametrize(
    ("state", "dgd_state", "next_state"),
    [
        pytest.param(State.DEPLOYING, "pending", State.DEPLOYING, id="deploying-not-ready"),
        pytest.param(State.DEPLOYING, "successful", State.READY, id="deploying-becomes-ready"),
        pytest.param(State.READY, "successful", State.READY, id="ready-stays"),
        pytest.param(State.READY, "failed", State.DEPLOYING, id="ready-degrades"),
    ],
)
def test_every_look_at_the_created_graph_writes_its_replicas(
    state: State, dgd_state: str, next_state: State
) -> None:
    t = advance(state, DeploymentObserved("g", dgd_state, INFO))
    assert (t.state, t.deployment_info) == (next_state, INFO)
    assert t.profiling_phase is KEEP


def test_creating_the_graph_writes_no_replicas_yet() -> None:
    assert advance(State.DEPLOYING, DeploymentCreated("g")).deployment_info is KEEP


@pytest.mark.parametrize("state", [State.DEPLOYING, State.READY])
def test_a_deleted_graph_clears_its_replicas(state: State) -> None:
    t = advance(state, DeploymentMissing("g"))
    assert (t.state, t.deployment_info) == (State.FAILED, None)


def test_deployment_info_is_written_as_upstream_spells_it() -> None:
    assert INFO.as_status() == {"replicas": 3, "availableReplicas": 2}
