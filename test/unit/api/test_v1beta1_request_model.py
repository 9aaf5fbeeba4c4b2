"""The v1beta1 DynamoGraphDeploymentRequest model: defaults, enums, JSON names, upstream's inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.v1alpha1 import crd
from dynamo_operator.api.v1beta1.request import DynamoGraphDeploymentRequest as Request
from pydantic import ValidationError

TESTDATA = (
    Path(__file__).resolve().parents[3].parent / "shared" / "upstream-examples-2a6da14c" / "testdata" / "dgdr"
)


def _request(**spec: Any) -> dict[str, Any]:
    return {"spec": {"model": "Qwen/Qwen3-0.6B"} | spec}


def test_only_the_model_is_required() -> None:
    assert crd.object_schema(type(Request.model_validate(_request()).spec))["required"] == ["model"]


@pytest.mark.parametrize(
    ("spec", "path", "default"),
    [
        ({}, ("backend",), "auto"),
        ({}, ("searchStrategy",), "rapid"),
        ({}, ("autoApply",), True),
        ({"workload": {}}, ("workload", "isl"), 4000),
        ({"workload": {}}, ("workload", "osl"), 1000),
        ({"modelCache": {}}, ("modelCache", "pvcMountPath"), "/opt/model-cache"),
    ],
)
def test_defaults_as_upstream(spec: dict[str, Any], path: tuple[str, ...], default: object) -> None:
    value: Any = Request.model_validate(_request(**spec)).to_dict()["spec"]
    for key in path:
        value = value[key]
    assert value == default


@pytest.mark.parametrize(
    "spec",
    [
        {"backend": "tgi"},
        {"searchStrategy": "exhaustive"},
        {"hardware": {"gpuSku": "h100"}},
        {"sla": {"optimizationType": "cost"}},
    ],
)
def test_values_outside_an_enum_are_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        Request.model_validate(_request(**spec))


def test_status_phases_are_upstreams() -> None:
    schema = crd.root_schema(Request)["properties"]["status"]["properties"]
    assert schema["phase"]["enum"] == ["Pending", "Profiling", "Ready", "Deploying", "Deployed", "Failed"]
    assert "Done" in schema["profilingPhase"]["enum"]


def test_irregular_json_names() -> None:
    spec = Request.model_validate(
        _request(sla={"e2eLatency": 5}, hardware={"vramMb": 1.5, "totalGpus": 8})
    ).spec
    assert spec.sla is not None and spec.sla.e2e_latency == 5
    assert spec.to_dict()["sla"] == {"e2eLatency": 5.0}
    assert spec.to_dict()["hardware"] == {"vramMb": 1.5, "totalGpus": 8}


def test_runtime_version_override_has_upstreams_pattern() -> None:
    schema = crd.root_schema(Request)["properties"]["spec"]["properties"]["runtimeVersionOverride"]
    assert schema["pattern"] == r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$"


def test_graph_override_is_an_embedded_object_and_planner_schemaless() -> None:
    spec = crd.root_schema(Request)["properties"]["spec"]["properties"]
    assert spec["overrides"]["properties"]["dgd"]["x-kubernetes-embedded-resource"] is True
    assert spec["features"]["properties"]["planner"]["x-kubernetes-preserve-unknown-fields"] is True


def test_there_is_no_namespace_override() -> None:
    """The generated graph lands in the request's namespace: nothing in the spec names another."""
    spec = crd.root_schema(Request)["properties"]["spec"]
    spec["properties"]["overrides"]["properties"].pop("profilingJob")  # a Kubernetes JobSpec
    assert "namespace" not in _property_names(spec)


def _property_names(node: Any) -> set[str]:
    names: set[str] = set()
    if isinstance(node, dict):
        names.update(node.get("properties", {}))
        for value in node.values():
            names |= _property_names(value)
    return names


@pytest.mark.parametrize("case", ["deployment", "grove", "lws"])
def test_upstream_controller_inputs_parse_and_dump_unchanged(case: str) -> None:
    doc = yaml.safe_load((TESTDATA / case / "input.yaml").read_text())
    assert Request.model_validate(doc).model_dump(by_alias=True, exclude_unset=True, mode="json") == doc
