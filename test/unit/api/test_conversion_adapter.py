"""DynamoGraphDeploymentScalingAdapter conversion: one renamed field, everything else as it is."""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.api.conversion import convert, scaling_adapter
from hypothesis import given, settings
from hypothesis import strategies as st

PROPERTY = settings(max_examples=100, deadline=None)

name = st.text(alphabet="abcdefghij-", min_size=1, max_size=8)
condition = st.fixed_dictionaries(
    {
        "type": st.just("Ready"),
        "status": st.sampled_from(["True", "False"]),
        "reason": st.sampled_from(["GraphNotFound", "ServiceNotFound", "AdapterDisabled", "Ready"]),
        "message": st.text(max_size=10),
        "lastTransitionTime": st.just("2026-01-02T03:04:05Z"),
    }
)
status = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 2**31 - 1),
        "selector": st.text(max_size=20),
        "lastScaleTime": st.just("2026-01-02T03:04:05Z"),
        "conditions": st.lists(condition, max_size=1),
    },
)
metadata = st.fixed_dictionaries(
    {"name": name, "namespace": st.just("team-a")},
    optional={
        "labels": st.dictionaries(name, name, max_size=2),
        "annotations": st.dictionaries(name, name, max_size=2),
    },
)


def _adapter(version: str, key: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just(f"nvidia.com/{version}"),
            "kind": st.just("DynamoGraphDeploymentScalingAdapter"),
            "metadata": metadata,
            "spec": st.fixed_dictionaries(
                {
                    "replicas": st.integers(0, 2**31 - 1),
                    "dgdRef": st.fixed_dictionaries({"name": name, key: name}),
                }
            ),
        },
        optional={"status": status},
    )


def _example(version: str, key: str) -> dict[str, Any]:
    return {
        "apiVersion": f"nvidia.com/{version}",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "vllm-decode", "namespace": "team-a"},
        "spec": {"replicas": 3, "dgdRef": {"name": "vllm", key: "decode"}},
        "status": {"replicas": 2, "selector": "app=x", "conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_service_name_becomes_component_name() -> None:
    assert scaling_adapter.to_v1beta1(_example("v1alpha1", "serviceName")) == _example(
        "v1beta1", "componentName"
    )


def test_component_name_becomes_service_name() -> None:
    assert scaling_adapter.to_v1alpha1(_example("v1beta1", "componentName")) == _example(
        "v1alpha1", "serviceName"
    )


def test_convert_dispatches_the_adapter_both_ways() -> None:
    beta = convert(_example("v1alpha1", "serviceName"), "nvidia.com/v1beta1")
    assert beta == _example("v1beta1", "componentName")
    assert convert(beta, "nvidia.com/v1alpha1") == _example("v1alpha1", "serviceName")


def test_no_reserved_annotation_is_written() -> None:
    beta = scaling_adapter.to_v1beta1(_example("v1alpha1", "serviceName"))
    assert "annotations" not in beta["metadata"]


def test_an_adapter_without_spec_converts() -> None:
    obj = _example("v1alpha1", "serviceName")
    del obj["spec"]
    assert scaling_adapter.to_v1beta1(obj)["apiVersion"] == "nvidia.com/v1beta1"


@PROPERTY
@given(_adapter("v1alpha1", "serviceName"))
def test_v1alpha1_to_v1beta1_and_back_gives_back_the_same_object(obj: dict[str, Any]) -> None:
    assert scaling_adapter.to_v1alpha1(scaling_adapter.to_v1beta1(obj)) == obj


@PROPERTY
@given(_adapter("v1beta1", "componentName"))
def test_v1beta1_to_v1alpha1_and_back_gives_back_the_same_object(obj: dict[str, Any]) -> None:
    assert scaling_adapter.to_v1beta1(scaling_adapter.to_v1alpha1(obj)) == obj


@PROPERTY
@given(_adapter("v1alpha1", "serviceName"))
def test_conversion_leaves_its_input_unchanged(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    scaling_adapter.to_v1beta1(obj)
    assert obj == before
