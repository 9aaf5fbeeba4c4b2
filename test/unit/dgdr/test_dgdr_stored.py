"""The v1beta1 status a DGDR step writes (stored.beta_status), and what the machine reads back of it."""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.internal.dynamo.dgdr.machine import DeploymentInfo, State, Transition
from dynamo_operator.internal.dynamo.dgdr.stored import (
    beta_status,
    deployment_created,
    hub_fields,
    tracked_deployment,
)

GRAPH = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": "g"}}
CREATED = {"type": "DeploymentReady", "status": "False", "reason": "DeploymentCreated", "message": "m"}


def _read_back(beta: dict[str, Any]) -> dict[str, Any]:
    """The v1alpha1 status the reconciler reads after the write (the client's codec)."""
    obj = {"apiVersion": V1BETA1, "kind": "DynamoGraphDeploymentRequest", "metadata": {}, "status": beta}
    out = convert(obj, V1ALPHA1)["status"]
    assert isinstance(out, dict)
    return out


def test_the_machine_fields_map_to_v1beta1_fields() -> None:
    alpha = {
        "state": "Deploying",
        "observedGeneration": 2,
        "backend": "vllm",
        "profilingResults": "configmap/dgdr-output-r",
        "generatedDeployment": GRAPH,
        "deployment": {"name": "g", "namespace": "ns", "state": "pending", "created": True},
        "conditions": [CREATED],
    }
    assert beta_status({}, alpha, {}) == {
        "phase": "Deploying",
        "observedGeneration": 2,
        "profilingResults": {"selectedConfig": GRAPH},
        "dgdName": "g",
        "conditions": [CREATED],
    }


def test_ready_with_a_created_graph_is_deployed() -> None:
    alpha = {"state": "Ready", "deployment": {"name": "g", "created": True}}
    assert beta_status({}, alpha, {})["phase"] == "Deployed"


def test_the_profiling_job_name_is_written_and_kept_by_later_steps() -> None:
    first = beta_status({"phase": "Pending"}, {"state": "Profiling"}, {"profilingJobName": "profile-r"})
    assert first == {"phase": "Profiling", "profilingJobName": "profile-r"}
    later = beta_status(first, {"state": "Ready", "generatedDeployment": GRAPH}, {})
    assert later["profilingJobName"] == "profile-r"
    assert later["phase"] == "Ready"


def test_v1beta1_fields_the_machine_does_not_write_are_left_as_they_are() -> None:
    old = {
        "phase": "Profiling",
        "profilingPhase": "SweepingDecode",
        "deploymentInfo": {"replicas": 2},
        "profilingResults": {"pareto": [{"config": {"a": 1}}], "selectedConfig": {"old": True}},
    }
    new = beta_status(old, {"state": "Ready", "generatedDeployment": GRAPH}, {})
    assert new["profilingPhase"] == "SweepingDecode"
    assert new["deploymentInfo"] == {"replicas": 2}
    assert new["profilingResults"] == {"pareto": [{"config": {"a": 1}}], "selectedConfig": GRAPH}


def test_a_field_the_machine_cleared_is_cleared() -> None:
    new = beta_status({"phase": "Deploying", "dgdName": "g"}, {"state": "Failed"}, {})
    assert new == {"phase": "Failed"}


def test_a_created_graph_is_still_created_after_the_round_trip_through_v1beta1() -> None:
    alpha = {"state": "Deploying", "deployment": {"name": "g", "created": True}, "conditions": [CREATED]}
    back = _read_back(beta_status({}, alpha, {}))
    assert "created" not in back["deployment"]  # v1beta1 has no such field ...
    assert deployment_created(back)  # ... the condition says it
    assert tracked_deployment(back, "ns") == {"name": "g", "namespace": "ns", "created": True}


def test_a_graph_generated_but_not_created_is_not_created() -> None:
    spec_generated = {"type": "SpecGenerated", "status": "True", "reason": "SpecGenerated", "message": ""}
    alpha = {"state": "Deploying", "generatedDeployment": GRAPH, "conditions": [spec_generated]}
    back = _read_back(beta_status({}, alpha, {}))
    assert not deployment_created(back)
    assert back["generatedDeployment"] == GRAPH


def test_no_graph_named_tracks_nothing() -> None:
    assert tracked_deployment({"conditions": [CREATED]}, "ns") == {}


def test_a_transition_that_says_nothing_of_the_v1beta1_only_fields_writes_none_of_them() -> None:
    assert hub_fields(Transition(State.PROFILING)) == {}


def test_a_transition_sets_the_step_and_the_replicas_as_v1beta1_spells_them() -> None:
    t = Transition(
        State.READY,
        profiling_phase=ProfilingPhase.SWEEPING_DECODE,
        deployment_info=DeploymentInfo(replicas=2, available_replicas=1),
    )
    assert hub_fields(t) == {
        "profilingPhase": "SweepingDecode",
        "deploymentInfo": {"replicas": 2, "availableReplicas": 1},
    }


def test_fields_a_transition_clears_are_removed_from_the_stored_status() -> None:
    old = {"phase": "Deployed", "dgdName": "g", "profilingPhase": "Done", "deploymentInfo": {"replicas": 2}}
    fields = hub_fields(Transition(State.FAILED, profiling_phase=None, deployment_info=None))
    assert fields == {"profilingPhase": None, "deploymentInfo": None}
    new = beta_status(old, {"state": "Failed"}, fields)
    assert "profilingPhase" not in new and "deploymentInfo" not in new
