"""A DGDR read once per step: its state (known or not), and whether a frozen spec was edited."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.internal.dynamo.dgdr.machine import State
from dynamo_operator.internal.dynamo.dgdr.view import lowered_request, read_request


def request(*, generation: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "uid": "u",
            "generation": generation,
            "resourceVersion": "9",
        },
        "spec": {"autoApply": True, "backend": "vllm"},
        "status": status,
    }


@pytest.mark.parametrize(
    ("state", "parsed"),
    [
        pytest.param(None, State.INITIAL, id="missing-is-initial"),
        pytest.param("", State.INITIAL, id="empty-is-initial"),
        pytest.param("Profiling", State.PROFILING, id="known"),
        pytest.param("Exploding", None, id="unknown"),
    ],
)
def test_the_state_is_parsed_once_and_an_unknown_one_kept_as_written(
    state: str | None, parsed: State | None
) -> None:
    view = read_request(request(state=state))
    assert view.state is parsed
    assert view.raw_state == (state or "")


@pytest.mark.parametrize(
    ("state", "observed", "generation", "edited"),
    [
        pytest.param("Profiling", 1, 2, True, id="profiling-edited"),
        pytest.param("Ready", 3, 3, False, id="ready-unchanged"),
        pytest.param("Pending", 1, 2, False, id="pending-may-change"),
        pytest.param("Failed", 1, 2, False, id="failed-is-not-frozen"),
        pytest.param("Deploying", None, 2, False, id="never-observed"),
    ],
)
def test_a_frozen_spec_counts_as_edited_only_after_profiling_started(
    state: str, observed: int | None, generation: int, edited: bool
) -> None:
    view = read_request(request(generation=generation, state=state, observedGeneration=observed))
    assert view.frozen_spec_edited is edited


def test_the_view_reads_names_spec_and_the_tracked_deployment() -> None:
    view = read_request(request(state="Deploying", deployment={"name": "g", "created": True}))
    assert (view.namespace, view.name, view.uid, view.generation, view.resource_version) == (
        "ns",
        "r",
        "u",
        1,
        "9",
    )
    assert view.auto_apply is True
    assert view.deployment == {"name": "g", "namespace": "ns", "created": True}
    assert read_request({"metadata": {"name": "r"}}).deployment == {}


def test_a_graph_read_back_from_v1beta1_counts_as_created_by_its_deployment_ready_condition() -> None:
    """v1beta1 holds only the graph's name (dgdName): a DeploymentReady condition written after the
    create says it was created, so a graph the user deleted is never created again."""
    created = {"type": "DeploymentReady", "status": "False", "reason": "DeploymentCreated"}
    view = read_request(request(state="Deploying", deployment={"name": "g"}, conditions=[created]))
    assert view.deployment == {"name": "g", "namespace": "ns", "created": True}


def test_a_graph_named_but_not_created_yet_is_not_created() -> None:
    refused = {"type": "DeploymentReady", "status": "False", "reason": "NamespaceNotAllowed"}
    view = read_request(request(state="Deploying", deployment={"name": "g"}, conditions=[refused]))
    assert view.deployment == {"name": "g", "namespace": "ns"}


# --- read as stored: lowered to v1alpha1 once per version ---------------------------------------


def stored_request(state: str = "Profiling", resource_version: str = "9") -> dict[str, Any]:
    """A request as the cache holds it (v1beta1), written here in v1alpha1."""
    alpha = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeploymentRequest",
        **request(state=state),
        "spec": {"model": "m", "backend": "vllm", "profilingConfig": {"profilerImage": "img"}},
    }
    alpha["metadata"] = {**alpha["metadata"], "uid": "u-stored", "resourceVersion": resource_version}
    return dict(convert(alpha, V1BETA1))


def test_a_stored_request_is_read_in_its_v1alpha1_form() -> None:
    stored = stored_request()
    view = read_request(stored)
    assert view.raw is stored  # writes and Events address the stored object
    assert view.request == convert(stored, V1ALPHA1)
    assert (view.state, view.spec["profilingConfig"]["profilerImage"]) == (State.PROFILING, "img")


def test_the_stored_status_is_the_raw_objects() -> None:
    stored = stored_request()
    assert read_request(stored).stored_status == stored["status"]
    assert stored["status"]["phase"] == "Profiling"


def test_a_version_read_again_is_not_lowered_again() -> None:
    stored = stored_request(resource_version="10")
    assert lowered_request({**stored}) is lowered_request(stored)  # a shallow copy shares the metadata


def test_another_object_of_the_same_resource_version_is_lowered_anew() -> None:
    lowered_request(stored_request("Profiling", resource_version="11"))
    other = stored_request("Deploying", resource_version="11")  # a fake's reuse; never the API server's
    assert read_request(other).state is State.DEPLOYING


def test_a_v1alpha1_request_is_read_as_it_is() -> None:
    alpha = {"apiVersion": V1ALPHA1, "kind": "DynamoGraphDeploymentRequest", **request(state="Pending")}
    assert lowered_request(alpha) is alpha
