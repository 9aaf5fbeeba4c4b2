"""The graph-level objects (scaling adapters, model Services, the namespace's planner and EPP
accounts, the wait-for-leader script and the EPP's config and InferencePool) are generated from
the graph as stored, v1beta1 `spec.components` (graph/components.py).

What they say is what the graph's v1alpha1 form says: checked on upstream's examples of both eras
and on graphs drawn from the v1alpha1 schema. The reconciler hands generation the stored graph, so
no conversion runs for them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from compat.goldens import Example
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph import components
from dynamo_operator.internal.dynamo.graph.generate import (
    desired_graph_objects,
    desired_model_services,
    desired_scaling_adapters,
    desired_shared_objects,
    desired_side_objects,
)
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.graph.sideobjects import wait_leader_config_map_name
from hypothesis import given
from hypothesis import strategies as st
from testsupport.schema_objects import ALPHA_DGD, SETTINGS
from unit.dynamo.upstream_examples import EXAMPLES, example_graphs

Obj = dict[str, Any]
NS = "ns1"
CTX = GenContext(namespace=NS, planner_cluster_role="planner-role", epp_cluster_role="epp-role")


def _services(alpha: Obj) -> dict[str, Obj]:
    return {k: v for k, v in (alpha["spec"].get("services") or {}).items() if v is not None}


def _adapters_by_v1alpha1(alpha: Obj) -> dict[str, int]:
    """Service → adapter replicas, as the v1alpha1 form states them."""
    return {
        name: c.DEFAULT_REPLICAS if spec.get("replicas") is None else int(spec["replicas"])
        for name, spec in _services(alpha).items()
        if (spec.get("scalingAdapter") or {}).get("enabled")
    }


def _models_by_v1alpha1(alpha: Obj) -> set[str]:
    return {
        str(s["modelRef"]["name"]) for s in _services(alpha).values() if (s.get("modelRef") or {}).get("name")
    }


def _shared_by_v1alpha1(alpha: Obj) -> set[str]:
    types = {s.get("componentType") for s in _services(alpha).values()}
    out = set()
    if c.COMPONENT_PLANNER in types:
        out |= {CTX.planner_service_account, f"{CTX.planner_service_account}-binding"}
    if c.COMPONENT_EPP in types:
        out |= {c.EPP_SERVICE_ACCOUNT_NAME, f"{c.EPP_SERVICE_ACCOUNT_NAME}-binding"}
    return out


def _check_agrees_with_v1alpha1(alpha: Obj) -> None:
    stored = components.raised(alpha)
    adapters = desired_scaling_adapters(stored, CTX)
    assert {
        a["spec"]["dgdRef"]["componentName"]: a["spec"]["replicas"] for a in adapters
    } == _adapters_by_v1alpha1(alpha)
    models = desired_model_services(stored, CTX)
    assert {m["metadata"]["annotations"][c.ANNOTATION_BASE_MODEL] for m in models} == _models_by_v1alpha1(
        alpha
    )
    shared = desired_shared_objects(stored, CTX)
    assert {o["metadata"]["name"] for o in shared} == _shared_by_v1alpha1(alpha)
    services = _services(alpha).values()
    if all(s.get("componentType") != c.COMPONENT_EPP for s in services):  # (EPP: tested on examples)
        side = {o["metadata"]["name"] for o in desired_side_objects(stored, CTX)}
        multinode = any(s.get("multinode") is not None for s in services)
        assert side == ({wait_leader_config_map_name(alpha["metadata"]["name"])} if multinode else set())


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_examples_graph_level_objects_read_as_stored_agree_with_its_v1alpha1_form(
    example: Example,
) -> None:
    for alpha in example_graphs(example):
        _check_agrees_with_v1alpha1(alpha)


@SETTINGS
@given(ALPHA_DGD)
def test_any_v1alpha1_graphs_graph_level_objects_read_as_stored_agree_with_it(alpha: Obj) -> None:
    alpha["metadata"]["uid"] = "uid-drawn"
    try:
        components.raised(alpha)
    except GenerationError:
        return  # v1beta1 cannot hold it (the API server would refuse the graph's write)
    _check_agrees_with_v1alpha1(alpha)


# Services that vary exactly what the graph-level objects are made of.
_SERVICE = st.fixed_dictionaries(
    {"componentType": st.sampled_from(["frontend", "worker", "planner", "epp"])},
    optional={
        "subComponentType": st.sampled_from(["prefill", "decode", "other"]),
        "replicas": st.integers(0, 4),
        "scalingAdapter": st.fixed_dictionaries({}, optional={"enabled": st.booleans()}),
        "modelRef": st.fixed_dictionaries({"name": st.sampled_from(["m-a", "m-b", "Qwen/Qwen3-0.6B"])}),
        "multinode": st.fixed_dictionaries({}, optional={"nodeCount": st.integers(2, 4)}),
    },
)
_GRAPHS = st.dictionaries(
    st.sampled_from(["Frontend", "Worker", "Prefill", "Planner", "Epp", "w-2"]), _SERVICE, min_size=1
)


@SETTINGS
@given(_GRAPHS)
def test_any_mix_of_services_gives_the_graph_level_objects_its_v1alpha1_form_states(services: Obj) -> None:
    alpha = _graph_with_every_graph_level_object()
    alpha["spec"]["services"] = services
    _check_agrees_with_v1alpha1(alpha)


def test_a_stored_graph_is_read_without_a_conversion(monkeypatch: pytest.MonkeyPatch) -> None:
    alpha = _graph_with_every_graph_level_object()
    stored = convert(alpha, V1BETA1)

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("converted a graph that is stored already")

    monkeypatch.setattr(components, "convert", refuse)
    assert desired_scaling_adapters(stored, CTX)
    assert desired_model_services(stored, CTX)
    assert desired_shared_objects(stored, CTX)


def test_the_reconcilers_stored_graph_spares_desired_graph_objects_a_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stored = convert(_graph_with_every_graph_level_object(), V1BETA1)
    lowered = lowered_graph(stored)  # what the reconciler hands generation beside the stored graph
    calls: list[object] = []
    real = components.convert
    monkeypatch.setattr(components, "convert", lambda *a, **k: calls.append(a) or real(*a, **k))
    objects = desired_graph_objects(lowered, CTX, stored=stored)
    assert calls == []
    kinds = {o["kind"] for o in objects}
    assert {c.KIND_DGDSA, "Service"} <= kinds


@pytest.mark.parametrize("version", ["nvidia.com/v1alpha1", V1BETA1])
def test_a_graph_that_names_no_version_is_read_in_the_form_its_spec_has(version: str) -> None:
    graph = convert(_graph_with_every_graph_level_object(), version)
    del graph["apiVersion"]
    assert [a["spec"]["dgdRef"]["componentName"] for a in desired_scaling_adapters(graph, CTX)] == ["Worker"]


def test_a_v1alpha1_adapter_that_is_not_enabled_makes_no_adapter() -> None:
    alpha = _graph_with_every_graph_level_object()
    alpha["spec"]["services"]["Worker"]["scalingAdapter"] = {"enabled": False}
    assert desired_scaling_adapters(alpha, CTX) == []


def test_a_disaggregated_worker_makes_no_planner_account() -> None:
    alpha = _graph_with_every_graph_level_object()
    del alpha["spec"]["services"]["Planner"]
    alpha["spec"]["services"]["Worker"]["subComponentType"] = "prefill"
    names = {o["metadata"]["name"] for o in desired_shared_objects(alpha, CTX)}
    assert CTX.planner_service_account not in names


def _graph_with_every_graph_level_object() -> Obj:
    worker = {
        "componentType": "worker",
        "replicas": 3,
        "scalingAdapter": {"enabled": True},
        "modelRef": {"name": "Qwen/Qwen3-0.6B"},
        "extraPodSpec": {"mainContainer": {"image": "img"}},
    }
    return copy.deepcopy(
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoGraphDeployment",
            "metadata": {"name": "g", "namespace": NS, "uid": "uid-g", "generation": 1},
            "spec": {
                "backendFramework": "vllm",
                "services": {
                    "Frontend": {
                        "componentType": "frontend",
                        "extraPodSpec": {"mainContainer": {"image": "img"}},
                    },
                    "Worker": worker,
                    "Planner": {
                        "componentType": "planner",
                        "extraPodSpec": {"mainContainer": {"image": "img"}},
                    },
                },
            },
        }
    )
