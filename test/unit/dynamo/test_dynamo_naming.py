"""Naming rules of generated objects."""

from __future__ import annotations

import hashlib

import pytest
from dynamo_operator.internal.dynamo import GenerationError, desired_dcds, naming, validate_graph
from unit.dynamo.dynamo_testlib import CTX, dgd, service


@pytest.mark.parametrize(
    ("graph", "svc", "ctype", "expected"),
    [
        pytest.param("g", "Frontend", "frontend", "g-frontend", id="lowercased"),
        pytest.param("g", "VllmPrefill", "prefill", "g-vllmprefill", id="prefill-no-hash-suffix"),
        pytest.param("g", "VllmDecode", "decode", "g-vllmdecode", id="decode-no-hash-suffix"),
        pytest.param("g", "worker", "worker", "g-worker", id="worker-no-hash-suffix"),
        pytest.param("my-graph", "Planner", "planner", "my-graph-planner", id="dashed-graph"),
    ],
)
def test_dcd_name(graph: str, svc: str, ctype: str, expected: str) -> None:
    """DCD names are `<dgd>-<lower(service)>`, stable across spec edits."""
    [dcd] = desired_dcds(dgd({svc: service(ctype)}, name=graph), CTX)
    assert dcd["metadata"]["name"] == expected


def test_dcd_name_unchanged_by_worker_spec_edit() -> None:
    """Editing a worker's spec keeps its DCD name, so exactly that Deployment rolls in place."""
    before = desired_dcds(dgd({"W": service("worker")}), CTX)[0]["metadata"]["name"]
    after = desired_dcds(dgd({"W": service("worker", envs=[{"name": "X", "value": "1"}])}), CTX)[0][
        "metadata"
    ]["name"]
    assert before == after


@pytest.mark.parametrize(
    ("namespace", "graph", "global_ns", "expected"),
    [
        pytest.param("ns", "g", False, "ns-g", id="namespaced"),
        pytest.param("ns", "a.b.c", False, "ns-a-b-c", id="dots-replaced"),
        pytest.param("ns", "g", True, "dynamo", id="global"),
    ],
)
def test_dynamo_namespace(namespace: str, graph: str, global_ns: bool, expected: str) -> None:
    """The Dynamo namespace is `<ns>-<dgd>` with dots as dashes, or `dynamo` when global."""
    assert naming.dynamo_namespace(namespace, graph, global_namespace=global_ns) == expected


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        pytest.param("g-frontend", "g-frontend", id="plain"),
        pytest.param("a.b-frontend", "a-b-frontend", id="dots"),
    ],
)
def test_service_name(resource: str, expected: str) -> None:
    """Service names replace dots with dashes."""
    assert naming.service_name(resource) == expected


def test_model_service_name_is_hash_of_base_model() -> None:
    """The model Service is `dynamo-model-<first 8 hex of sha256(name)>`."""
    name = "meta-llama/Llama-3.3-70B-Instruct"
    assert naming.model_service_name(name) == "dynamo-model-" + hashlib.sha256(name.encode()).hexdigest()[:8]


@pytest.mark.parametrize(
    ("graph", "svc", "ok"),
    [
        pytest.param("g" * 30, "s" * 32, True, id="exactly-63"),
        pytest.param("g" * 30, "s" * 33, False, id="64-too-long"),
        pytest.param("g" * 60, "frontend", False, id="long-graph"),
        pytest.param("g", "my_service", False, id="underscore-invalid"),
        pytest.param("g", "Front.End", True, id="dot-becomes-dash"),
    ],
)
def test_long_or_invalid_generated_names_are_refused(graph: str, svc: str, ok: bool) -> None:
    """Generated Service names must be DNS-1035 labels of at most 63 characters."""
    problems = naming.name_problems(graph, [svc])
    assert (not problems) is ok


def test_validate_graph_names_the_service_with_a_long_name() -> None:
    """validate_graph refuses an over-long name and names the offending service."""
    with pytest.raises(GenerationError, match=r"spec\.services\." + "s" * 40):
        validate_graph(dgd({"s" * 40: service("worker")}, name="g" * 30), CTX)


@pytest.mark.parametrize(
    ("dcd", "index", "expected"),
    [pytest.param("g-w", 0, "g-w-0", id="first"), pytest.param("g-w", 3, "g-w-3", id="fourth")],
)
def test_lws_name(dcd: str, index: int, expected: str) -> None:
    """One LeaderWorkerSet per replica: `<dcd>-<i>`."""
    assert naming.lws_name(dcd, index) == expected
