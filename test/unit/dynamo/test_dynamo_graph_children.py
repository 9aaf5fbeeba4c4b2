"""A graph's children are generated whole or refused with one reason; and the view they are generated from."""

from __future__ import annotations

import pytest
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.stored_terms import graph_message
from dynamo_operator.internal.dynamo.graph import components
from dynamo_operator.internal.dynamo.graph.children import MissingAPIs, dcd_children, grove_children
from dynamo_operator.internal.dynamo.graph.view import GraphView, read_graph, semantic_problems
from unit.dynamo.dynamo_testlib import NS, Obj, dgd, service

ALL = GenContext(
    namespace=NS, capabilities=Capabilities(lws=True, grove=True, gateway_inference_extension=True)
)
NONE = GenContext(namespace=NS)
TWO = {"Frontend": service("frontend"), "VllmWorker": service("worker")}


def view_of(graph: Obj, *, children: list[Obj] | None = None, version: str = "0.9.0") -> GraphView:
    return read_graph(graph, children=children or [], operator_version=version)


@pytest.mark.parametrize(
    ("graph", "problems"),
    [
        pytest.param(dgd(TWO), [], id="fine"),
        pytest.param(
            dgd(
                TWO,
                restart={
                    "id": "r",
                    "strategy": {"type": "Sequential", "order": ["Frontend", "Nope", "Gone"]},
                },
            ),
            [
                "names unknown components: Nope, Gone",
                "leaves out components: VllmWorker",
            ],
            id="restart-order-names-unknown",
        ),
        pytest.param(
            dgd(TWO, restart={"id": "r", "strategy": {"type": "Sequential", "order": ["Frontend"] * 2}}),
            [
                "names components more than once: Frontend",
                "leaves out components: VllmWorker",
            ],
            id="restart-order-repeats-and-leaves-out",
        ),
        pytest.param(
            dgd(
                TWO,
                restart={"id": "r", "strategy": {"type": "Sequential", "order": ["VllmWorker", "Frontend"]}},
            ),
            [],
            id="restart-order-names-each-once",
        ),
        pytest.param(
            dgd(
                TWO,
                restart={"id": "r", "strategy": {"type": "Parallel", "order": ["VllmWorker", "Frontend"]}},
            ),
            ["cannot be set when the strategy type is Parallel"],
            id="restart-order-with-parallel",
        ),
        pytest.param(
            dgd({}, restart={"id": "r", "strategy": {"order": ["A"]}}),
            ["names unknown components: A"],
            id="no-services-is-not-a-cross-reference",
        ),
    ],
)
def test_semantic_problems_are_the_cross_references_a_schema_cannot_check(
    graph: Obj, problems: list[str]
) -> None:
    assert semantic_problems(view_of(graph)) == problems


def test_a_bad_restart_order_refuses_the_graph_naming_the_field() -> None:
    graph = dgd(TWO, restart={"id": "r", "strategy": {"type": "Sequential", "order": ["Frontend", "Nope"]}})
    with pytest.raises(GenerationError) as refused:
        dcd_children(view_of(graph), ALL, restart_at={}, worker_hash="abcdef12")
    assert str(refused.value) == (
        "spec.restart.strategy.order: names unknown components: Nope; leaves out components: VllmWorker"
    )
    stored_terms = graph_message(str(refused.value), ["Frontend", "VllmWorker"])
    assert stored_terms == str(refused.value)  # the same path in v1beta1


def test_the_view_reads_names_components_and_pvcs_once() -> None:
    graph = dgd(TWO, pvcs=[{"name": "made", "create": True}, {"name": "brought"}, {"create": True}])
    graph["metadata"]["generation"] = 7
    view = view_of(graph)
    assert (view.namespace, view.name, view.uid, view.generation) == (NS, "g", "uid-1", 7)
    assert list(view.components) == ["Frontend", "VllmWorker"]
    assert (view.names_pvc("made"), view.names_pvc("brought"), view.names_pvc("other")) == (True, True, False)
    assert view.missing_user_pvcs(lambda name: False) == ["brought"]
    assert view.missing_user_pvcs(lambda name: True) == []


def test_the_view_of_a_stored_graph_reads_its_components_and_restart_without_a_conversion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    graph = dgd(TWO, restart={"id": "r1", "strategy": {"type": "Sequential"}})
    stored = convert(graph, V1BETA1)
    monkeypatch.setattr(components, "convert", _refuse_to_convert)
    view = view_of(stored)
    assert list(view.components) == ["Frontend", "VllmWorker"]
    assert view.components["VllmWorker"]["type"] == "worker"
    assert view.restart == {"id": "r1", "strategy": {"type": "Sequential"}}
    assert view.stored["apiVersion"] == V1BETA1


def test_the_view_of_a_graph_given_in_v1alpha1_holds_it_as_stored() -> None:
    view = view_of(dgd(TWO))
    assert view.stored["apiVersion"] == V1BETA1
    assert [x["name"] for x in view.stored["spec"]["components"]] == ["Frontend", "VllmWorker"]


def _refuse_to_convert(*_: object, **__: object) -> None:
    raise AssertionError("converted a graph that is stored already")


@pytest.mark.parametrize(
    ("children", "origin"),
    [
        pytest.param([], "0.9.0", id="new-graph-takes-the-operators-version"),
        pytest.param(
            [
                {
                    "spec": {
                        "podTemplate": {
                            "metadata": {"annotations": {consts.ANNOTATION_ORIGIN_VERSION: "0.7.0"}}
                        }
                    }
                }
            ],
            "0.7.0",
            id="from-its-dcds",
        ),
        pytest.param([{"spec": {}}], None, id="old-graph-without-stamp"),
    ],
)
def test_generation_sees_the_origin_version_before_it_is_written(
    children: list[Obj], origin: str | None
) -> None:
    graph = dgd(TWO)
    view = view_of(graph, children=children)
    assert view.origin == origin
    stamped = (view.graph["metadata"].get("annotations") or {}).get(consts.ANNOTATION_ORIGIN_VERSION)
    assert stamped == origin
    assert "annotations" not in graph["metadata"]  # the cached object is left alone


def test_a_graph_that_generates_has_owned_and_shared_children() -> None:
    children = dcd_children(view_of(dgd(TWO)), ALL, restart_at={}, worker_hash="abcd1234")
    assert {o["kind"] for o in children.owned} >= {"DynamoComponentDeployment"}
    assert all(o["kind"] in ("ServiceAccount", "RoleBinding") for o in children.shared)


@pytest.mark.parametrize("generate", [pytest.param("dcd", id="dcd"), pytest.param("grove", id="grove")])
@pytest.mark.parametrize(
    ("graph", "ctx", "reason", "message"),
    [
        pytest.param(
            dgd({}),
            ALL,
            "InvalidSpec",
            "spec.services: at least one service is required",
            id="no-services",
        ),
        pytest.param(
            dgd({"Frontend": service("frontend"), "frontend": service("frontend")}),
            ALL,
            "NameCollision",
            "service names must stay distinct",
            id="name-collision",
        ),
        pytest.param(
            dgd({"VllmWorker": service("worker", volumeMounts=[{"name": "nope", "mountPoint": "/m"}])}),
            ALL,
            "InvalidSpec",
            "spec.services.VllmWorker.volumeMounts[name=nope]: names no volume of the pod",
            id="invalid-spec",
        ),
    ],
)
def test_a_graph_that_cannot_generate_is_refused_with_one_reason(
    generate: str, graph: Obj, ctx: GenContext, reason: str, message: str
) -> None:
    view = view_of(graph)
    with pytest.raises(GenerationError) as raised:
        if generate == "dcd":
            dcd_children(view, ctx, restart_at={}, worker_hash="abcd1234")
        else:
            grove_children(view, ctx, restart_at={})
    assert raised.value.reason == reason
    assert message in str(raised.value)


def test_missing_apis_are_reported_together_once_the_rest_generates() -> None:
    graph = dgd(
        {
            "Frontend": service("frontend"),
            "A": service("worker", multinode={"nodeCount": 2}),
            "B": service("worker", multinode={"nodeCount": 2}),
        }
    )
    with pytest.raises(MissingAPIs) as raised:
        dcd_children(view_of(graph), NONE, restart_at={}, worker_hash="abcd1234")
    assert raised.value.reason == "NoOrchestratorAvailable"
    assert [e.field for e in raised.value.missing] == [
        "spec.services.A.multinode",
        "spec.services.B.multinode",
    ]
    assert str(raised.value) == "; ".join(str(e) for e in raised.value.missing)


def test_a_grove_name_over_budget_is_refused_with_its_own_reason() -> None:
    # A long graph name is shortened (grove.pod_clique_set_name); a service too long for even the
    # shortest set name (8 + 38 = 46 > 45) is refused.
    graph = dgd({"F" * 38: service("frontend")}, name="g" * 20)
    with pytest.raises(GenerationError) as raised:
        grove_children(view_of(graph), ALL, restart_at={})
    assert raised.value.reason == "GroveNameTooLong"


@pytest.mark.parametrize(
    ("services", "reason"),
    [
        pytest.param(
            {"W": service("worker", multinode={"nodeCount": 2})}, "NoOrchestratorAvailable", id="lws"
        ),
        pytest.param(
            {"W": service("worker", gpuMemoryService={"enabled": True}, resources={"limits": {"gpu": "1"}})},
            "MissingAPI",
            id="dra",
        ),
        pytest.param(
            {
                "W": service("worker", multinode={"nodeCount": 2}),
                "G": service(
                    "worker", gpuMemoryService={"enabled": True}, resources={"limits": {"gpu": "1"}}
                ),
            },
            "MissingAPI",
            id="lws-and-dra",
        ),
    ],
)
def test_a_missing_orchestrator_is_told_apart_from_another_missing_api(services: Obj, reason: str) -> None:
    """NoOrchestratorAvailable says "install LeaderWorkerSet or Grove": it is not the reason for a
    missing DRA (or InferencePool) API, which is MissingAPI, naming the API in the message."""
    with pytest.raises(MissingAPIs) as raised:
        dcd_children(view_of(dgd(services)), NONE, restart_at={}, worker_hash="abcd1234")
    assert raised.value.reason == reason
