"""Naming rules of generated objects."""

from __future__ import annotations

import hashlib
import re

import pytest
from dynamo_operator.internal.dynamo import GenerationError, desired_dcds, validate_graph
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.errors import NameCollisionError
from dynamo_operator.internal.dynamo.graph.generate import check_distinct_objects, desired_discovery_rbac
from unit.dynamo.dynamo_testlib import CTX, dgd, service


@pytest.mark.parametrize(
    ("graph", "svc", "ctype", "expected"),
    [
        pytest.param("g", "Frontend", "frontend", "g-frontend", id="lowercased"),
        pytest.param("g", "VllmPrefill", "prefill", r"g-vllmprefill-[0-9a-f]{8}", id="prefill-hash-suffix"),
        pytest.param("g", "VllmDecode", "decode", r"g-vllmdecode-[0-9a-f]{8}", id="decode-hash-suffix"),
        pytest.param("g", "worker", "worker", r"g-worker-[0-9a-f]{8}", id="worker-hash-suffix"),
        pytest.param("my-graph", "Planner", "planner", "my-graph-planner", id="dashed-graph"),
    ],
)
def test_dcd_name(graph: str, svc: str, ctype: str, expected: str) -> None:
    """DCD names are `<dgd>-<lower(service)>`, workers with `-<worker hash>` appended."""
    [dcd] = desired_dcds(dgd({svc: service(ctype)}, name=graph), CTX)
    assert re.fullmatch(expected, dcd["metadata"]["name"])


@pytest.mark.parametrize(
    ("worker_hash", "expected"),
    [pytest.param(None, "g-w", id="no-hash"), pytest.param("0a1b2c3d", "g-w-0a1b2c3d", id="hash")],
)
def test_dcd_name_suffix(worker_hash: str | None, expected: str) -> None:
    """naming.dcd_name appends the worker hash when given."""
    assert naming.dcd_name("g", "W", worker_hash) == expected


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
        validate_graph(dgd({"s" * 40: service("frontend")}, name="g" * 30), CTX)


@pytest.mark.parametrize(
    ("ctype", "ok"),
    [
        pytest.param("frontend", True, id="frontend-fits"),
        pytest.param("worker", False, id="worker-hash-too-long"),
    ],
)
def test_worker_names_count_the_hash_suffix(ctype: str, ok: bool) -> None:
    """Graph plus service of 61 characters fits a frontend's Service name (63) but not a worker's, whose
    name carries the 9-character hash suffix; the message says so."""
    graph = dgd({"s" * 30: service(ctype)}, name="g" * 31)
    if ok:
        validate_graph(graph, CTX)
        return
    with pytest.raises(GenerationError, match="worker-hash suffix"):
        validate_graph(graph, CTX)


def test_lws_name() -> None:
    """The one LeaderWorkerSet of a component keeps the name the first per-replica set had: `<dcd>-0`."""
    assert naming.lws_name("g-w") == "g-w-0"


@pytest.mark.parametrize(
    ("services", "groups"),
    [
        pytest.param(["Frontend", "frontend"], [("Frontend", "frontend")], id="case-only"),
        pytest.param(["Cache.A", "Cache-A"], [("Cache-A", "Cache.A")], id="dot-versus-dash"),
        pytest.param(["a.b", "A-B", "a-b"], [("A-B", "a-b", "a.b")], id="three-way"),
        pytest.param(["x", "X", "y", "Y.z", "y-Z"], [("X", "x"), ("Y.z", "y-Z")], id="two-groups"),
        pytest.param(["Frontend", "Worker", "a.b", "ab"], [], id="distinct"),
    ],
)
def test_service_collisions_group_keys_that_normalise_alike(
    services: list[str], groups: list[tuple[str, ...]]
) -> None:
    """Keys differing only in case or in '.' versus '-' would generate the same object names."""
    assert naming.service_collisions(services) == groups


@pytest.mark.parametrize(
    ("keys", "named"),
    [
        pytest.param(("Frontend", "frontend"), "'g-frontend'", id="case-only"),
        pytest.param(("Cache.A", "Cache-A"), "'g-cache-a'", id="dot-versus-dash"),
    ],
)
def test_validate_graph_refuses_colliding_service_keys(keys: tuple[str, str], named: str) -> None:
    """The generation backstop of the CRD rule: a NameCollisionError naming both keys and the name."""
    graph = dgd({key: service("worker") for key in keys}, name="g")
    with pytest.raises(NameCollisionError) as err:
        validate_graph(graph, CTX)
    assert all(repr(key) in str(err.value) for key in keys)
    assert named in str(err.value)
    assert err.value.groups == [tuple(sorted(keys))]


def test_duplicate_generated_objects_are_refused() -> None:
    """Whatever the reason, a desired set with one kind/name twice is never handed to the writer."""
    one = {"kind": "ConfigMap", "metadata": {"name": "g-epp-config"}}
    with pytest.raises(NameCollisionError, match="ConfigMap g-epp-config twice"):
        check_distinct_objects([one, {"kind": "Service", "metadata": {"name": "g-epp-config"}}, one])


@pytest.mark.parametrize("length", [41, 42, 52])
def test_discovery_rbac_labels_fit_for_long_graph_names(length: int) -> None:
    """Graph names the API accepts (up to 52) give discovery RBAC label values of at most 63."""
    name = "g" * length
    objects = desired_discovery_rbac(dgd({"F": service("frontend")}, name=name), CTX)
    assert objects, "kubernetes discovery is the default"
    for obj in objects:
        value = obj["metadata"]["labels"]["app.kubernetes.io/name"]
        assert len(value) <= 63, (obj["kind"], value)
        assert value == naming.label_value(f"{name}-k8s-service-discovery")
