"""On the Grove pathway too, a graph component's pods are read from its stored `podTemplate`, with
what the graph adds (its `spec.env` under the component's, a planner's ServiceAccount), and give what
its v1alpha1 form gives: on each graph of upstream's examples of both eras and on graphs drawn field
by field in either version. A component first written in v1alpha1 in a shape the pod template cannot
state is read in v1alpha1 (`layered_apart`), as on the DCD pathway."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import pytest
from compat.goldens import Example
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.grove import podcliqueset
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects, grove_services
from dynamo_operator.internal.dynamo.pod.user_pod import layered_apart, stored_user_pod
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testsupport.schema_objects import QUANTITY, env_var
from unit.dynamo.dynamo_testlib import dgd, service
from unit.dynamo.test_pods_read_from_pod_template import _pod_template, _v1alpha1_services
from unit.dynamo.upstream_examples import EXAMPLES, example_graphs

Obj = dict[str, Any]
CTX = GenContext(
    namespace="ns1",
    capabilities=Capabilities(grove=True, lws=True, dra=True, gateway_inference_extension=True, istio=True),
    docker_secrets={"nvcr.io": ("ngc",)},
    infrastructure_env={"NATS_SERVER": "nats://nats:4222"},
    planner_service_account="planner-sa",
)
REFUSED = "refused"
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextmanager
def _read_in_v1alpha1() -> Iterator[None]:
    with mock.patch.object(podcliqueset, "layered_apart", lambda spec: "read in v1alpha1"):
        yield


def _written(stored: Obj) -> object:
    try:
        return desired_grove_objects(lowered_graph(copy.deepcopy(stored)), CTX, stored=copy.deepcopy(stored))
    except GenerationError:
        return REFUSED


def _both_readings(stored: Obj) -> tuple[object, object]:
    native = _written(stored)
    with _read_in_v1alpha1():
        alpha = _written(stored)
    return native, alpha


@pytest.mark.parametrize("example", EXAMPLES)
def test_each_examples_grove_set_is_the_same_read_from_pod_templates(example: Example) -> None:
    for graph in example_graphs(example):
        native, alpha = _both_readings(convert(graph, V1BETA1))
        assert native == alpha


def test_a_stored_components_pods_on_the_grove_pathway_are_read_from_its_pod_template() -> None:
    stored = convert(
        dgd({"W": service("worker", envs=[{"name": "A", "value": "1"}])}, envs=[{"name": "G", "value": "g"}]),
        V1BETA1,
    )
    with mock.patch.object(podcliqueset, "stored_user_pod", wraps=stored_user_pod) as reader:
        [gs] = grove_services(lowered_graph(stored), CTX, stored=stored)
    reader.assert_called_once_with(stored["spec"]["components"][0])
    assert [e["name"] for e in gs.component.pod.env] == ["A", "G"]  # the graph's env under its own
    assert gs.component.pod.main == {
        k: v
        for k, v in stored["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0].items()
        if k not in ("name", "env")
    }


# What a graph's own payload keeps (a sparse difference) and a DCD's drops (Go's encoding): seen
# on the Grove pathway only.
LAYERED_APART = {
    "main container resources alone": dict(extraPodSpec={"mainContainer": {"resources": {"limits": {}}}}),
    "only empty fields beside the main container": dict(extraPodSpec={"nodeSelector": {}}),
}


@pytest.mark.parametrize("fields", LAYERED_APART.values(), ids=LAYERED_APART.keys())
def test_a_v1alpha1_component_layered_apart_keeps_its_v1alpha1_grove_pods(fields: Obj) -> None:
    stored = convert(dgd({"W": service("worker", **fields)}), V1BETA1)
    [gs] = grove_services(lowered_graph(stored), CTX, stored=stored)
    assert layered_apart(gs.component.spec) is not None
    native, alpha = _both_readings(stored)
    assert native == alpha


@pytest.mark.parametrize("fields", LAYERED_APART.values(), ids=LAYERED_APART.keys())
def test_its_pod_template_alone_would_give_other_grove_pods(fields: Obj) -> None:
    stored = convert(dgd({"W": service("worker", **fields)}), V1BETA1)
    with mock.patch.object(podcliqueset, "layered_apart", lambda spec: None):
        native = _written(stored)
    with _read_in_v1alpha1():
        alpha = _written(stored)
    assert native != alpha


@st.composite
def _v1beta1_graphs(draw: st.DrawFn) -> Obj:
    names = draw(
        st.lists(st.sampled_from(["Worker", "Frontend", "Planner"]), min_size=1, max_size=2, unique=True)
    )
    components = []
    for name in names:
        template = draw(_pod_template())
        component: Obj = {
            "name": name,
            "type": draw(st.sampled_from(["worker", "prefill", "frontend", "planner"])),
            "podTemplate": template,
        }
        sidecars = [x["name"] for x in template["spec"]["containers"][1:]]
        component.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "sharedMemorySize": st.one_of(QUANTITY, st.just("0")),
                        "compilationCache": st.fixed_dictionaries(
                            {"pvcName": st.just("cache")}, optional={"mountPath": st.just("/cache")}
                        ),
                        "multinode": st.just({"nodeCount": 2}),
                        "frontendSidecar": st.sampled_from(sidecars) if sidecars else st.nothing(),
                    },
                )
            )
        )
        components.append(component)
    spec: Obj = {"components": components, "backendFramework": "vllm"}
    spec.update(
        draw(
            st.fixed_dictionaries(
                {}, optional={"env": st.lists(env_var(), max_size=2, unique_by=lambda e: e["name"])}
            )
        )
    )
    return {
        "apiVersion": V1BETA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns1", "uid": "uid-g"},
        "spec": spec,
    }


@SETTINGS
@given(_v1beta1_graphs())
def test_a_v1beta1_graph_drawn_field_by_field_gives_the_same_grove_set(graph: Obj) -> None:
    native, alpha = _both_readings(graph)
    assert native == alpha


@SETTINGS
@given(
    st.dictionaries(
        st.sampled_from(["Worker", "Frontend", "Planner"]), _v1alpha1_services(), min_size=1, max_size=2
    ),
    st.lists(env_var(), max_size=2, unique_by=lambda e: e["name"]),
)
def test_a_v1alpha1_graph_drawn_field_by_field_keeps_its_grove_set_stored_as_v1beta1(
    services: dict[str, Obj], envs: list[Obj]
) -> None:
    graph = dgd(services, envs=envs) if envs else dgd(services)
    native, alpha = _both_readings(convert(graph, V1BETA1))
    assert native == alpha
