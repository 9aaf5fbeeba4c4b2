"""The not-implemented table: each entry refuses a graph / DCD that uses it, names the field, and
leaves one that does not alone, whether the field is native to the v1alpha1 view or only in the
conversion payload."""

from __future__ import annotations

import json
from typing import Any

import pytest
from dynamo_operator.api.v1alpha1 import DynamoGraphDeployment
from dynamo_operator.api.v1alpha1.crd import root_schema
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import FieldNotImplementedError, GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.common.not_implemented import (
    NOT_IMPLEMENTED,
    Scope,
    check_component,
    check_graph,
    component_uses,
    graph_uses,
)
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects


def dgd(services: dict[str, Any], *, payload: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "ns"}
    if payload is not None:
        meta["annotations"] = {"nvidia.com/dgd-spec": json.dumps({"version": 1, "spec": payload})}
    return {"metadata": meta, "spec": {"services": services, **spec}}


def dcd(spec: dict[str, Any], *, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "c", "namespace": "ns"}
    if payload is not None:
        meta["annotations"] = {"nvidia.com/dcd-spec": json.dumps({"version": 1, "spec": payload})}
    return {"metadata": meta, "spec": spec}


WORKER = {"componentType": "worker"}


def fields(uses: list[Any]) -> list[str]:
    return [u.field for u in uses]


# checkpoint


def test_enabled_checkpoint_is_named_with_its_path() -> None:
    with pytest.raises(FieldNotImplementedError) as err:
        check_graph(dgd({"TRTLLMWorker": {**WORKER, "checkpoint": {"enabled": True}}}))
    assert str(err.value) == (
        "spec.services.TRTLLMWorker.checkpoint.enabled: "
        "checkpoint/restore is not implemented by this operator"
    )


def test_not_implemented_reason_is_field_not_implemented() -> None:
    with pytest.raises(GenerationError) as err:
        check_graph(dgd({"W": {**WORKER, "checkpoint": {"enabled": True}}}))
    assert err.value.reason == "FieldNotImplemented"


def test_disabled_checkpoint_with_a_ref_is_in_use() -> None:
    uses = graph_uses(dgd({"W": {**WORKER, "checkpoint": {"enabled": False, "checkpointRef": "ck"}}}))
    assert fields(uses) == ["spec.services.W.checkpoint.checkpointRef"]


def test_disabled_checkpoint_with_an_identity_is_in_use() -> None:
    block = {"enabled": False, "identity": {"model": "m", "backendFramework": "vllm"}}
    assert fields(graph_uses(dgd({"W": {**WORKER, "checkpoint": block}}))) == [
        "spec.services.W.checkpoint.identity"
    ]


def test_disabled_checkpoint_alone_is_not_in_use() -> None:
    check_graph(dgd({"W": {**WORKER, "checkpoint": {"enabled": False}}}))


def test_checkpoint_only_in_the_payload_is_found() -> None:
    """The v1alpha1 CRD prunes `checkpoint`: upstream's snapshot-restore example keeps it only in the
    conversion payload, under the component's `experimental`."""
    payload = {
        "components": [
            {"name": "Frontend"},
            {"name": "TRTLLMWorker", "experimental": {"checkpoint": {"enabled": True}}},
        ]
    }
    uses = graph_uses(dgd({"Frontend": {}, "TRTLLMWorker": WORKER}, payload=payload))
    assert fields(uses) == ["spec.services.TRTLLMWorker.checkpoint.enabled"]


def test_dcd_checkpoint_only_in_the_payload_is_found() -> None:
    uses = component_uses(dcd(WORKER, payload={"experimental": {"checkpoint": {"enabled": True}}}))
    assert fields(uses) == ["spec.checkpoint.enabled"]


def test_dcd_with_checkpoint_is_refused() -> None:
    with pytest.raises(FieldNotImplementedError, match=r"^spec\.checkpoint\.enabled: checkpoint/restore"):
        check_component(dcd({**WORKER, "checkpoint": {"enabled": True}}))


# gpuMemoryService.mode


def test_inter_pod_gpu_memory_service_is_named() -> None:
    gms = {"enabled": True, "mode": "interPod"}
    assert fields(graph_uses(dgd({"W": {**WORKER, "gpuMemoryService": gms}}))) == [
        "spec.services.W.gpuMemoryService.mode"
    ]


def test_intra_pod_gpu_memory_service_is_not_in_use() -> None:
    check_graph(dgd({"W": {**WORKER, "gpuMemoryService": {"enabled": True, "mode": "intraPod"}}}))


def test_disabled_inter_pod_gpu_memory_service_is_not_in_use() -> None:
    check_graph(dgd({"W": {**WORKER, "gpuMemoryService": {"enabled": False, "mode": "interPod"}}}))


def test_dcd_inter_pod_gpu_memory_service_is_refused() -> None:
    with pytest.raises(FieldNotImplementedError, match=r"^spec\.gpuMemoryService\.mode: the inter-pod GPU"):
        check_component(dcd({**WORKER, "gpuMemoryService": {"enabled": True, "mode": "interPod"}}))


def test_inter_pod_gpu_memory_service_in_the_payload_is_found() -> None:
    payload = {"experimental": {"gpuMemoryService": {"mode": "InterPod"}}}
    assert fields(component_uses(dcd(WORKER, payload=payload))) == ["spec.gpuMemoryService.mode"]


# failover.mode


def test_inter_pod_failover_is_named() -> None:
    failover = {"enabled": True, "mode": "interPod"}
    assert fields(graph_uses(dgd({"W": {**WORKER, "failover": failover}}))) == [
        "spec.services.W.failover.mode"
    ]


def test_intra_pod_failover_is_not_in_use() -> None:
    check_graph(dgd({"W": {**WORKER, "failover": {"enabled": True, "mode": "intraPod"}}}))


def test_dcd_inter_pod_failover_is_refused() -> None:
    with pytest.raises(FieldNotImplementedError, match=r"^spec\.failover\.mode: inter-pod failover"):
        check_component(dcd({**WORKER, "failover": {"enabled": True, "mode": "interPod"}}))


# spec.experimental.kvTransferPolicy


def test_kv_transfer_policy_in_the_payload_is_named() -> None:
    policy = {"labelKey": "topology.kubernetes.io/rack", "domain": "rack"}
    uses = graph_uses(dgd({"W": WORKER}, payload={"experimental": {"kvTransferPolicy": policy}}))
    assert fields(uses) == ["spec.experimental.kvTransferPolicy"]


def test_kv_transfer_policy_in_the_view_is_named() -> None:
    policy = {"labelKey": "rack", "domain": "rack"}
    uses = graph_uses(dgd({"W": WORKER}, experimental={"kvTransferPolicy": policy}))
    assert fields(uses) == ["spec.experimental.kvTransferPolicy"]


def test_graph_without_kv_transfer_policy_is_not_refused() -> None:
    check_graph(dgd({"W": WORKER}, payload={"experimental": {}}))


# gpuMemoryService.extraClientContainers


def test_extra_gpu_memory_service_clients_are_named() -> None:
    gms = {"enabled": True, "mode": "intraPod", "extraClientContainers": ["loader"]}
    assert fields(graph_uses(dgd({"W": {**WORKER, "gpuMemoryService": gms}}))) == [
        "spec.services.W.gpuMemoryService.extraClientContainers"
    ]


def test_extra_clients_of_a_disabled_gpu_memory_service_are_not_in_use() -> None:
    gms = {"enabled": False, "extraClientContainers": ["loader"]}
    check_graph(dgd({"W": {**WORKER, "gpuMemoryService": gms}}))


def test_extra_gpu_memory_service_clients_in_the_payload_are_found() -> None:
    payload = {"experimental": {"gpuMemoryService": {"mode": "IntraPod", "extraClientContainers": ["x"]}}}
    assert fields(component_uses(dcd(WORKER, payload=payload))) == [
        "spec.gpuMemoryService.extraClientContainers"
    ]


# the table as a whole


def _has_path(schema: dict[str, Any], path: tuple[str, ...]) -> bool:
    node = schema
    for key in path:
        props = node.get("properties") or {}
        if key not in props:
            return False
        node = props[key]
    return True


@pytest.mark.parametrize("entry", NOT_IMPLEMENTED, ids=lambda e: f"{e.scope.value}:{'.'.join(e.native)}")
def test_every_native_path_is_a_v1alpha1_property(entry: Any) -> None:
    """Each entry reads a field the v1alpha1 CRD keeps, so a v1alpha1 write of it is refused, not
    pruned into a graph that runs without it."""
    spec = root_schema(DynamoGraphDeployment)["properties"]["spec"]
    scope = spec if entry.scope is Scope.GRAPH else spec["properties"]["services"]["additionalProperties"]
    assert _has_path(scope, entry.native)


def test_every_use_is_counted_in_the_message() -> None:
    services = {
        "A": {**WORKER, "checkpoint": {"enabled": True}},
        "B": {**WORKER, "failover": {"enabled": True, "mode": "interPod"}},
    }
    with pytest.raises(FieldNotImplementedError, match=r"and 1 more not-implemented field"):
        check_graph(dgd(services))


def test_damaged_payload_is_read_as_absent() -> None:
    obj = dgd({"W": WORKER})
    obj["metadata"]["annotations"] = {"nvidia.com/dgd-spec": "{not json"}
    assert graph_uses(obj) == []


def test_oversized_payload_is_read_as_absent() -> None:
    """The payload parse is bounded: a value longer than any stored annotation is not parsed."""
    block = {"enabled": True, "pad": "x" * (300 * 1024)}
    payload = {"components": [{"name": "W", "experimental": {"checkpoint": block}}]}
    assert graph_uses(dgd({"W": WORKER}, payload=payload)) == []


def test_plain_graph_is_not_refused() -> None:
    check_graph(dgd({"Frontend": {"componentType": "frontend"}, "W": WORKER}))


# A DCD as the operator reads it: stored, in v1beta1, where these fields have their own place.


def _stored_dcd(experimental: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "c", "namespace": "ns", "uid": "u-1"},
        "spec": {
            "type": "worker",
            "backendFramework": "vllm",
            "podTemplate": {
                "spec": {"containers": [{"name": "main", "image": "nvcr.io/x/vllm-runtime:1.0.0"}]}
            },
            "experimental": experimental,
        },
    }


@pytest.mark.parametrize(
    ("experimental", "field"),
    [
        pytest.param({"checkpoint": {"enabled": True}}, "spec.checkpoint.enabled", id="checkpoint"),
        pytest.param(
            {"gpuMemoryService": {"mode": "InterPod"}}, "spec.gpuMemoryService.mode", id="inter-pod-gms"
        ),
        pytest.param({"failover": {"mode": "InterPod"}}, "spec.failover.mode", id="inter-pod-failover"),
    ],
)
def test_a_dcd_read_as_stored_with_a_not_implemented_field_generates_nothing(
    experimental: dict[str, Any], field: str
) -> None:
    with pytest.raises(FieldNotImplementedError) as err:
        desired_component_objects(component_view(_stored_dcd(experimental)), GenContext(namespace="ns"))
    assert err.value.field == field


def test_a_dcd_read_as_stored_with_intra_pod_features_generates_its_workload() -> None:
    dcd = _stored_dcd({"gpuMemoryService": {"mode": "IntraPod"}, "failover": {"mode": "IntraPod"}})
    dcd["spec"]["podTemplate"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    ctx = GenContext(namespace="ns", capabilities=Capabilities(dra=True))
    objects = desired_component_objects(component_view(dcd), ctx)
    assert "Deployment" in [o["kind"] for o in objects]
