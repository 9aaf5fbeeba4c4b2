"""What an adapter writes into its graph and reports through the scale subresource."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.scalingadapter import adapter
from testsupport.dcd_view import stored_graph


def _adapter(replicas: int | None = 3) -> dict[str, Any]:
    spec: dict[str, Any] = {"dgdRef": {"name": "g", "componentName": "VllmWorker"}}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"metadata": {"name": "g-vllmworker", "namespace": "ns"}, "spec": spec}


def _dgd(service: dict[str, Any] | None = None, status: dict[str, Any] | None = None) -> dict[str, Any]:
    services = {} if service is None else {"VllmWorker": service}
    return stored_graph(
        {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"services": services}, "status": status or {}}
    )


def test_target_and_desired_replicas() -> None:
    assert adapter.target(_adapter()) == adapter.Target("ns", "g", "VllmWorker")
    assert adapter.desired_replicas(_adapter(0)) == 0
    assert adapter.desired_replicas(_adapter(None)) == 1


@pytest.mark.parametrize(
    ("service", "replicas"),
    [
        pytest.param({"replicas": 4}, 4, id="explicit"),
        pytest.param({"replicas": 0}, 0, id="zero"),
        pytest.param({}, 1, id="nil-is-one"),
        pytest.param(None, None, id="missing-service"),
    ],
)
def test_graph_replicas(service: dict[str, Any] | None, replicas: int | None) -> None:
    assert adapter.graph_replicas(_dgd(service), "VllmWorker") == replicas


def test_apply_body_names_only_the_service_replicas() -> None:
    body = adapter.replicas_apply(adapter.Target("ns", "g", "VllmWorker"), 5)
    assert body == {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": [{"name": "VllmWorker", "replicas": 5}]},
    }


def test_apply_body_carries_the_resource_version_it_was_decided_on() -> None:
    body = adapter.replicas_apply(adapter.Target("ns", "g", "VllmWorker"), 5, resource_version="42")
    assert body["metadata"] == {"name": "g", "namespace": "ns", "resourceVersion": "42"}


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        pytest.param(
            {},
            "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=VllmWorker",
            id="single-node",
        ),
        pytest.param(
            {"multinode": {"nodeCount": 2}},
            "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=VllmWorker,role=leader",
            id="multinode-leaders-only",
        ),
        pytest.param(
            {"multinode": {"nodeCount": 1}},
            "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=VllmWorker",
            id="one-node-multinode-block",
        ),
    ],
)
def test_selector(service: dict[str, Any], expected: str) -> None:
    assert adapter.selector(_dgd(service), "VllmWorker") == expected


def test_status_mirrors_observed_replicas_not_desired() -> None:
    dgd = _dgd({"replicas": 3}, status={"services": {"VllmWorker": {"replicas": 2, "readyReplicas": 1}}})
    out = adapter.status({}, dgd, "VllmWorker", scaled_at=None)
    assert out["replicas"] == 2
    assert "lastScaleTime" not in out


def test_status_without_graph_report_is_zero_and_keeps_last_scale_time() -> None:
    previous = {"lastScaleTime": "t0"}
    out = adapter.status(previous, _dgd({}), "VllmWorker", scaled_at=None)
    assert (out["replicas"], out["lastScaleTime"]) == (0, "t0")
    assert adapter.status(previous, _dgd({}), "VllmWorker", scaled_at="t1")["lastScaleTime"] == "t1"


@pytest.mark.parametrize(
    ("status", "label"),
    [
        pytest.param({}, "not_ready", id="no-status"),
        pytest.param({"selector": "a=b", "replicas": 0}, "not_ready", id="zero"),
        pytest.param({"selector": "a=b", "replicas": 2}, "ready", id="ready"),
        pytest.param(
            {"selector": "a=b", "replicas": 2, "conditions": [{"type": "Ready", "status": "False"}]},
            "not_ready",
            id="graph-gone-since",
        ),
    ],
)
def test_metrics_state(status: dict[str, Any], label: str) -> None:
    assert adapter.metrics_state({"status": status}) == label
