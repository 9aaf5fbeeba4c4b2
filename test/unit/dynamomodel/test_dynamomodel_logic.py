"""Endpoint discovery, LoRA URLs and the status of a DynamoModel."""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.dynamomodel import endpoints as ep
from dynamo_operator.internal.dynamo.dynamomodel import lora
from dynamo_operator.internal.dynamo.dynamomodel.status import (
    LoadResult,
    compute,
    is_lora,
    model_status,
    to_load,
)
from dynamo_operator.internal.dynamo.dynamomodel.view import read_model


def _slice(service: str, *endpoints: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"labels": {"kubernetes.io/service-name": service}}, "endpoints": list(endpoints)}


def _ep(ip: str, pod: str, ready: bool | None = True, kind: str = "Pod") -> dict[str, Any]:
    out: dict[str, Any] = {"addresses": [ip], "targetRef": {"kind": kind, "name": pod}, "conditions": {}}
    if ready is not None:
        out["conditions"]["ready"] = ready
    return out


def test_service_name_is_hash_of_base_model() -> None:
    assert ep.base_model_hash("m") == hashlib.sha256(b"m").hexdigest()[:8]
    assert ep.service_name("m") == f"dynamo-model-{ep.base_model_hash('m')}"


@pytest.mark.parametrize(
    ("ip", "addr"),
    [
        pytest.param("10.0.1.5", "http://10.0.1.5:9090", id="ipv4"),
        pytest.param("fd00::1", "http://[fd00::1]:9090", id="ipv6-bracketed"),
    ],
)
def test_address(ip: str, addr: str) -> None:
    assert ep.address(ip) == addr


def test_endpoints_pod_targets_only_deduplicated_and_sorted() -> None:
    slices = [
        _slice("dynamo-model-a", _ep("127.0.0.12", "p2"), _ep("127.0.0.11", "p1", ready=False)),
        _slice("dynamo-model-a", _ep("127.0.0.12", "p2"), _ep("127.0.0.13", "n", kind="Node")),
        _slice("other", {"addresses": [], "targetRef": {"kind": "Pod", "name": "empty"}}),
        _slice("dynamo-model-a", _ep("127.0.0.14", "p4", ready=None)),
    ]
    found = ep.endpoints_from_slices(slices)
    assert [(e.address, e.pod_name, e.serving) for e in found] == [
        ("http://127.0.0.11:9090", "p1", False),
        ("http://127.0.0.12:9090", "p2", True),
        ("http://127.0.0.14:9090", "p4", True),
    ]
    assert ep.services_of(found) == ["dynamo-model-a"]
    assert [e.pod_name for e in to_load(found)] == ["p2", "p4"]


@pytest.mark.parametrize(
    ("address", "url"),
    [
        pytest.param("http://127.0.0.5:9090", "http://127.0.0.5:9090/v1/loras", id="plain"),
        pytest.param("http://127.0.0.5:9090/", "http://127.0.0.5:9090/v1/loras", id="trailing-slash"),
        pytest.param("http://h:9090/prefix", "http://h:9090/prefix/v1/loras", id="path-prefix"),
    ],
)
def test_load_url(address: str, url: str) -> None:
    assert lora.load_url(address) == url


@pytest.mark.parametrize(
    ("name", "url"),
    [
        pytest.param("my-lora", "http://h:9090/v1/loras/my-lora", id="plain"),
        pytest.param("org/lora", "http://h:9090/v1/loras/org%2Flora", id="slash-escaped"),
        pytest.param("a b", "http://h:9090/v1/loras/a%20b", id="space-escaped"),
    ],
)
def test_unload_url(name: str, url: str) -> None:
    assert lora.unload_url("http://h:9090/", name) == url


def test_load_body_and_success_codes() -> None:
    assert lora.load_body("l", "hf://o/m@r") == {"lora_name": "l", "source": {"uri": "hf://o/m@r"}}
    assert [lora.is_success(c) for c in (200, 201, 204, 299, 300, 404, 500)] == [True] * 4 + [False] * 3


def _model(model_type: str = "lora") -> dict[str, Any]:
    return {
        "spec": {"modelName": "l", "baseModelName": "b", "modelType": model_type, "source": {"uri": "s3://x"}}
    }


def _found(n: int, serving: bool = True) -> list[ep.Endpoint]:
    return [
        ep.Endpoint(f"http://127.0.0.{i}:9090", f"p{i}", serving, "dynamo-model-x") for i in range(1, n + 1)
    ]


def _conds(status: Any) -> dict[str, tuple[bool, str]]:
    return {c.type: (c.status, c.reason) for c in status.conditions}


@pytest.mark.parametrize(
    ("model_type", "lora_"),
    [
        pytest.param("lora", True, id="lora"),
        pytest.param("LoRA", True, id="case"),
        pytest.param("base", False, id="b"),
    ],
)
def test_is_lora(model_type: str, lora_: bool) -> None:
    assert is_lora(_model(model_type)) is lora_


def test_no_endpoints() -> None:
    s = compute(_model(), [], {})
    assert (s.ready, s.total, s.endpoints, s.requeue_after) == (0, 0, [], None)
    assert _conds(s) == {
        "ServicesFound": (False, "NoServicesFound"),
        "EndpointsReady": (False, "NoEndpoints"),
    }
    assert [e.reason for e in s.events] == ["NoEndpointsFound"]


def test_lora_all_loaded_is_ready_without_requeue() -> None:
    found = _found(2)
    s = compute(_model(), found, {e.address: LoadResult(True) for e in found})
    assert (s.ready, s.total, s.requeue_after) == (2, 2, None)
    assert _conds(s) == {
        "ServicesFound": (True, "ServicesFound"),
        "EndpointsReady": (True, "AllEndpointsReady"),
    }
    assert s.endpoints[0] == {"address": "http://127.0.0.1:9090", "podName": "p1", "ready": True}


def test_lora_one_failure_leaves_that_endpoint_not_ready_and_requeues() -> None:
    found = _found(3)
    results = {e.address: LoadResult(True) for e in found}
    results[found[1].address] = LoadResult(False, "HTTP 500: boom")
    s = compute(_model(), found, results)
    assert [i["ready"] for i in s.endpoints] == [True, False, True]
    assert (s.ready, s.total, s.requeue_after) == (2, 3, 30.0)
    assert _conds(s)["EndpointsReady"] == (False, "NotReady")
    assert {e.reason for e in s.events} == {"PartialEndpointFailure", "NotReady"}


def test_lora_unattempted_not_serving_endpoint_is_not_ready() -> None:
    found = [*_found(1), ep.Endpoint("http://127.0.0.9:9090", "p9", False, "dynamo-model-x")]
    s = compute(_model(), found, {found[0].address: LoadResult(True)})
    assert (s.ready, s.total, s.requeue_after) == (1, 2, 30.0)


def test_base_model_lists_endpoints_never_ready_and_discovered() -> None:
    s = compute(_model("base"), _found(2), None)
    assert [i["ready"] for i in s.endpoints] == [False, False]
    assert (s.ready, s.total, s.requeue_after) == (0, 2, None)
    assert _conds(s)["EndpointsReady"] == (True, "EndpointsDiscovered")


def _pod(
    name: str, ip: str | None, *, ready: bool = True, phase: str = "Running", deleting: bool = False
) -> Any:
    meta: dict[str, Any] = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": phase, "conditions": [{"type": "Ready", "status": str(ready)}]}
    if ip:
        status["podIP"] = ip
    return {"metadata": meta, "status": status}


def test_endpoints_from_pods_mirror_what_slices_would_say() -> None:
    pods = [
        _pod("b", "127.0.0.2", ready=False),
        _pod("a", "127.0.0.1"),
        _pod("pending", None),
        _pod("done", "127.0.0.3", phase="Succeeded"),
        _pod("going", "127.0.0.4", deleting=True),
    ]
    found = ep.endpoints_from_pods(pods, service="dynamo-model-x")
    assert [(e.address, e.pod_name, e.serving, e.service) for e in found] == [
        ("http://127.0.0.1:9090", "a", True, "dynamo-model-x"),
        ("http://127.0.0.2:9090", "b", False, "dynamo-model-x"),
        ("http://127.0.0.4:9090", "going", False, "dynamo-model-x"),
    ]


@pytest.mark.parametrize(
    ("ready", "total", "label"),
    [
        pytest.param(0, 0, "not_ready", id="none"),
        pytest.param(1, 2, "not_ready", id="partial"),
        pytest.param(2, 2, "ready", id="all"),
    ],
)
def test_metrics_state(ready: int, total: int, label: str) -> None:
    from dynamo_operator.internal.dynamo.dynamomodel.status import metrics_state

    assert metrics_state({"status": {"readyEndpoints": ready, "totalEndpoints": total}}) == label


def test_model_status_is_the_counts_and_endpoints_with_the_conditions_upserted() -> None:
    found = _found(2)
    computed = compute(_model(), found, {e.address: LoadResult(True) for e in found})
    then = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
    old = {"conditions": [{"type": "Other", "status": "True", "reason": "R", "message": ""}], "stale": 1}
    out = model_status(old, computed, generation=3, now=then)
    assert (out["readyEndpoints"], out["totalEndpoints"], out["endpoints"]) == (2, 2, computed.endpoints)
    assert "stale" not in out  # the whole status: fields not computed are dropped
    assert [(c["type"], c["status"], c.get("observedGeneration")) for c in out["conditions"]] == [
        ("Other", "True", None),
        ("ServicesFound", "True", 3),
        ("EndpointsReady", "True", 3),
    ]


def test_model_status_twice_is_the_same_status() -> None:
    computed = compute(_model(), [], {})
    then = datetime.datetime(2026, 11, 22, 8, 0, tzinfo=datetime.UTC)
    first = model_status({}, computed, generation=1, now=then)
    assert model_status(first, computed, generation=1, now=then + datetime.timedelta(minutes=1)) == first


@pytest.mark.parametrize(
    ("spec", "lora_", "source"),
    [
        pytest.param({"modelType": "lora", "source": {"uri": "s3://b/a"}}, True, "s3://b/a", id="lora"),
        pytest.param({"modelType": "lora"}, True, "", id="lora-without-source"),
        pytest.param({"modelType": "base"}, False, "", id="base"),
    ],
)
def test_a_model_is_read_once_into_its_view(spec: dict[str, Any], lora_: bool, source: str) -> None:
    raw = {
        "metadata": {
            "name": "m",
            "namespace": "ns",
            "finalizers": ["a"],
            "generation": 2,
            "resourceVersion": "7",
        },
        "spec": {"modelName": "adapter-1", "baseModelName": "Qwen/Qwen3-0.6B", **spec},
    }
    view = read_model(raw)
    assert (view.namespace, view.name, view.generation, view.resource_version) == ("ns", "m", 2, "7")
    assert (view.model_name, view.base_model, view.finalizers) == ("adapter-1", "Qwen/Qwen3-0.6B", ("a",))
    assert (view.lora, view.source, view.deletion_timestamp) == (lora_, source, None)
