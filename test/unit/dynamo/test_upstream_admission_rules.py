"""Rules upstream's validating webhook enforces and its CRD cannot state, refused here by generation
before anything is written (a graph's condition names the field, as for every refusal)."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph import grove_only
from dynamo_operator.internal.dynamo.graph.children import dcd_children, grove_children
from dynamo_operator.internal.dynamo.graph.view import read_graph
from unit.dynamo.dynamo_testlib import NS, Obj, dgd, service

CTX = GenContext(namespace=NS, capabilities=Capabilities(lws=True, gateway_inference_extension=True))
GROVE = GenContext(
    namespace=NS, capabilities=Capabilities(lws=True, grove=True, gateway_inference_extension=True)
)
EPP_CONFIG = {"configMapRef": {"name": "epp-config"}}


def refusal(graph: Obj, ctx: GenContext = CTX) -> GenerationError:
    view = read_graph(graph, children=[], operator_version="1.5.0")
    with pytest.raises(GenerationError) as raised:
        dcd_children(view, ctx, restart_at={}, worker_hash="abcd1234")
    return raised.value


def with_epp(**epp: object) -> Obj:
    return dgd({"W": service("worker"), "Epp": service("epp", eppConfig=EPP_CONFIG, **epp)})


@pytest.mark.parametrize("replicas", [0, 2])
def test_an_epp_component_runs_exactly_one_replica(replicas: int) -> None:
    err = refusal(with_epp(replicas=replicas))
    assert err.field == "spec.services.Epp.replicas"
    assert f"exactly 1 replica, not {replicas}" in err.message


def test_an_epp_component_cannot_be_multinode() -> None:
    err = refusal(with_epp(multinode={"nodeCount": 2}))
    assert err.field == "spec.services.Epp.multinode"


def test_one_epp_replica_is_accepted() -> None:
    view = read_graph(with_epp(replicas=1), children=[], operator_version="1.5.0")
    dcd_children(view, CTX, restart_at={}, worker_hash="abcd1234")


def test_a_negative_shared_memory_size_is_refused() -> None:
    err = refusal(dgd({"W": service("worker", sharedMemory={"size": "-1Gi"})}))
    assert (err.field, err.message) == ("spec.services.W.sharedMemory.size", "'-1Gi' must not be negative")


def test_a_gang_minimum_needs_the_grove_pathway() -> None:
    err = refusal(dgd({"W": service("worker", replicas=2, minAvailable=1)}))
    assert err.reason == grove_only.REASON
    assert err.field == "spec.services.W.minAvailable"


def test_a_gang_minimum_is_taken_on_the_grove_pathway() -> None:
    graph = dgd({"W": service("worker", replicas=2, minAvailable=1)})
    view = read_graph(graph, children=[], operator_version="1.5.0")
    children = grove_children(view, GROVE, restart_at={})
    assert any(o["kind"] == "PodCliqueSet" for o in children.owned)


def test_failover_needs_the_gpu_memory_service() -> None:
    graph = dgd({"W": service("worker", failover={"enabled": True, "mode": "intraPod"})})
    graph["metadata"]["annotations"] = {"nvidia.com/dynamo-kube-discovery-mode": "container"}
    err = refusal(graph)
    assert (err.field, err.message) == (
        "spec.services.W.failover",
        "failover needs gpuMemoryService on the same component",
    )


@pytest.mark.parametrize("component_type", ["frontend", "planner"])
def test_the_gpu_memory_service_is_for_workers_only(component_type: str) -> None:
    other = service(component_type, gpuMemoryService={"enabled": True}, resources={"limits": {"gpu": "1"}})
    err = refusal(
        dgd({"W": service("worker"), "X": other}),
        GenContext(namespace=NS, capabilities=Capabilities(dra=True)),
    )
    assert err.field == "spec.services.X.gpuMemoryService"
    assert "only supported for worker components" in err.message
