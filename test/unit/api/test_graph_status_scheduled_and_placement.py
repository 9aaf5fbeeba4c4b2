"""`scheduledReplicas` per component and the graph's `placement` exist in both API versions, as in
upstream 2a6da14c's CRDs, and pass through the conversion both ways: the operator writes the status
in the v1alpha1 form and the client's codec converts it (ARCHITECTURE.md "Two API versions"), and a
v1alpha1 reader gets what the API server keeps of the converted object under the v1alpha1 schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert
from dynamo_operator.api.v1alpha1.graph import DynamoGraphDeploymentStatus
from pydantic import ValidationError

REPO = Path(__file__).resolve().parents[3]
UPSTREAM_CRDS = REPO.parent / "shared" / "upstream-examples-2a6da14c" / "crds"
OURS = REPO / "config" / "crd" / "bases"


def _versions(path: Path) -> dict[str, dict[str, Any]]:
    crd = yaml.safe_load(path.read_text())
    return {v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}


def _shape(node: Any) -> Any:
    """A schema without its descriptions: what the API server validates and prunes by."""
    if isinstance(node, dict):
        return {k: _shape(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_shape(v) for v in node]
    return node


def _graph_status_fields(schema: dict[str, Any]) -> tuple[Any, Any]:
    status = schema["properties"]["status"]["properties"]
    per_component = status["services" if "services" in status else "components"]["additionalProperties"]
    return per_component["properties"]["scheduledReplicas"], status["placement"]


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, Any]]:
    path = UPSTREAM_CRDS / "nvidia.com_dynamographdeployments.yaml"
    if not path.exists():
        pytest.skip(f"shared reference data missing: {path}")
    return _versions(path)


@pytest.mark.parametrize("version", ["v1alpha1", "v1beta1"])
def test_graph_status_fields_have_upstreams_schema(version: str, upstream: dict[str, dict[str, Any]]) -> None:
    ours = _versions(OURS / "nvidia.com_dynamographdeployments.yaml")[version]
    assert [_shape(f) for f in _graph_status_fields(ours)] == [
        _shape(f) for f in _graph_status_fields(upstream[version])
    ]


@pytest.mark.parametrize(("version", "key"), [("v1alpha1", "service"), ("v1beta1", "component")])
def test_component_status_has_scheduled_replicas_in_both_versions(version: str, key: str) -> None:
    schema = _versions(OURS / "nvidia.com_dynamocomponentdeployments.yaml")[version]
    field = schema["properties"]["status"]["properties"][key]["properties"]["scheduledReplicas"]
    assert (field["type"], field["minimum"]) == ("integer", 0)


ALPHA = {
    "apiVersion": V1ALPHA1,
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns"},
    "spec": {"services": {"decode": {}}},
    "status": {
        "state": "pending",
        "placement": {"state": "Reported", "score": 0.5},
        "services": {
            "decode": {
                "componentKind": "PodClique",
                "componentName": "g-0-decode",
                "replicas": 2,
                "updatedReplicas": 2,
                "readyReplicas": 1,
                "scheduledReplicas": 1,
            }
        },
    },
}


def test_a_v1alpha1_status_write_keeps_scheduled_replicas_and_placement() -> None:
    status = convert(ALPHA, V1BETA1)["status"]
    assert status["components"]["decode"]["scheduledReplicas"] == 1
    assert status["placement"] == {"state": "Reported", "score": 0.5}


def test_a_v1beta1_status_reads_back_unchanged_as_v1alpha1() -> None:
    assert convert(convert(ALPHA, V1BETA1), V1ALPHA1)["status"] == ALPHA["status"]


def test_the_v1alpha1_model_refuses_a_placement_score_above_one() -> None:
    with pytest.raises(ValidationError):
        DynamoGraphDeploymentStatus.model_validate({"placement": {"state": "Reported", "score": 1.5}})


def test_the_v1alpha1_model_refuses_an_unknown_placement_state() -> None:
    with pytest.raises(ValidationError):
        DynamoGraphDeploymentStatus.model_validate({"placement": {"state": "Great"}})
