"""A DGDR read once per step: its state (known or not), and whether a frozen spec was edited."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.dgdr.machine import State
from dynamo_operator.internal.dynamo.dgdr.view import read_request


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
