"""A graph is written whole or not at all: a spec error any one component's workload would hit
refuses the graph before anything is written, naming that component's field."""

from __future__ import annotations

import copy

import pytest
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import (
    FieldNotImplementedError,
    GenerationError,
    for_service,
)
from dynamo_operator.internal.dynamo.graph.children import MissingAPIs, dcd_children, grove_children
from dynamo_operator.internal.dynamo.graph.view import read_graph
from unit.dynamo.dynamo_testlib import NS, Obj, dgd, service

ALL = GenContext(namespace=NS, capabilities=Capabilities(lws=True, grove=True))
IMAGE_FIELD = "spec.services.VllmWorker.extraPodSpec.mainContainer.image"


def without_image(spec: Obj) -> Obj:
    out = copy.deepcopy(spec)
    del out["extraPodSpec"]["mainContainer"]["image"]
    return out


def imageless_worker_graph() -> Obj:
    return dgd({"Frontend": service("frontend"), "VllmWorker": without_image(service("worker"))})


def test_a_worker_without_an_image_refuses_the_graph_on_the_dcd_pathway() -> None:
    view = read_graph(imageless_worker_graph(), children=[], operator_version="0.9.0")
    with pytest.raises(GenerationError) as raised:
        dcd_children(view, ALL, restart_at={}, worker_hash="abcd1234")
    assert raised.value.field == IMAGE_FIELD
    assert str(raised.value).startswith(f"{IMAGE_FIELD}: required")


def test_a_worker_without_an_image_refuses_the_graph_naming_it_on_the_grove_pathway() -> None:
    view = read_graph(imageless_worker_graph(), children=[], operator_version="0.9.0")
    with pytest.raises(GenerationError) as raised:
        grove_children(view, ALL, restart_at={})
    assert raised.value.field == IMAGE_FIELD


def test_an_api_one_component_lacks_stays_the_graphs_missing_api_not_a_spec_error() -> None:
    graph = dgd({"Frontend": service("frontend"), "W": service("worker", multinode={"nodeCount": 2})})
    view = read_graph(graph, children=[], operator_version="0.9.0")
    with pytest.raises(MissingAPIs):
        dcd_children(view, GenContext(namespace=NS), restart_at={}, worker_hash="abcd1234")


@pytest.mark.parametrize(
    ("raised_as", "named_as"),
    [
        ("extraPodSpec.mainContainer.image", "spec.services.W.extraPodSpec.mainContainer.image"),
        ("spec.gpuMemoryService.mode", "spec.services.W.gpuMemoryService.mode"),
        ("spec", "spec.services.W"),
        ("spec.services.W.replicas", "spec.services.W.replicas"),
        ("metadata.name", "metadata.name"),
    ],
)
def test_a_component_error_names_its_field_under_the_service(raised_as: str, named_as: str) -> None:
    with pytest.raises(GenerationError) as raised, for_service("W"):
        raise GenerationError(raised_as, "bad")
    assert raised.value.field == named_as
    assert str(raised.value) == f"{named_as}: bad"


def test_a_component_error_keeps_its_type_and_reason_under_the_service() -> None:
    with pytest.raises(FieldNotImplementedError) as raised, for_service("W"):
        raise FieldNotImplementedError("spec.checkpoint.enabled", "not implemented")
    assert raised.value.reason == "FieldNotImplemented"
    assert raised.value.message == "not implemented"


def test_the_workloads_are_checked_without_converting_the_written_dcds_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The operator writes DCDs as stored (v1beta1); the check reads the v1alpha1 form generation
    made them in, so no DCD is lowered again just to be checked."""
    from dynamo_operator.internal import consts
    from dynamo_operator.internal.dynamo.component import lowering

    lowered: list[object] = []
    real = lowering.convert
    monkeypatch.setattr(lowering, "convert", lambda obj, version: lowered.append(obj) or real(obj, version))
    stored = GenContext(
        namespace=NS, capabilities=ALL.capabilities, dcd_api_version=consts.STORAGE_API_VERSION
    )
    graph = dgd({"Frontend": service("frontend"), "VllmWorker": service("worker")})
    view = read_graph(graph, children=[], operator_version="0.9.0")
    children = dcd_children(view, stored, restart_at={}, worker_hash="abcd1234")
    assert [o["apiVersion"] for o in children.owned if o["kind"] == "DynamoComponentDeployment"] == [
        consts.STORAGE_API_VERSION
    ] * 2
    assert lowered == []
