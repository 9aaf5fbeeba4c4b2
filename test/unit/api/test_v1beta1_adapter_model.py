"""The v1beta1 DynamoGraphDeploymentScalingAdapter model: required fields, bounds, CRD facts."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.v1alpha1 import crd
from dynamo_operator.api.v1beta1.scaling_adapter import DynamoGraphDeploymentScalingAdapter as Adapter
from pydantic import ValidationError


def _adapter(**spec: Any) -> dict[str, Any]:
    return {"spec": {"replicas": 1, "dgdRef": {"name": "g", "componentName": "decode"}} | spec}


def test_defaults_api_version_and_kind() -> None:
    adapter = Adapter.model_validate(_adapter())
    assert (adapter.api_version, adapter.kind) == (
        "nvidia.com/v1beta1",
        "DynamoGraphDeploymentScalingAdapter",
    )
    assert adapter.spec.dgd_ref.component_name == "decode"


def test_negative_replicas_are_refused() -> None:
    with pytest.raises(ValidationError):
        Adapter.model_validate(_adapter(replicas=-1))


@pytest.mark.parametrize("ref", [{"name": "g"}, {"componentName": "c"}])
def test_the_reference_needs_graph_and_component(ref: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        Adapter.model_validate(_adapter(dgdRef=ref))


def test_status_needs_replicas_as_upstream() -> None:
    with pytest.raises(ValidationError):
        Adapter.model_validate(_adapter() | {"status": {"selector": "a=b"}})


def test_status_keeps_this_operators_ready_condition() -> None:
    status = {"replicas": 0, "conditions": [{"type": "Ready", "status": "False", "reason": "GraphNotFound"}]}
    assert Adapter.model_validate(_adapter() | {"status": status}).to_dict()["status"] == status


def test_scale_subresource_and_columns() -> None:
    info = crd.crd_info(Adapter)
    assert info.scale is not None
    assert (
        info.scale.spec_replicas_path,
        info.scale.status_replicas_path,
        info.scale.label_selector_path,
    ) == (
        ".spec.replicas",
        ".status.replicas",
        ".status.selector",
    )
    assert [column.name for column in info.printer_columns] == [
        "DGD",
        "Component",
        "Replicas",
        "Ready",
        "Reason",
        "Age",
    ]
    assert info.short_names == ("dgdsa",)
