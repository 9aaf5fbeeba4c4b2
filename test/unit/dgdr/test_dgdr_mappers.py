"""How ConfigMap and DGD events find their DGDR."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeploymentrequest import (
    DynamoGraphDeploymentRequestReconciler,
    Reference,
    references,
    request_of_deployment,
    request_of_output,
)
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import CONFIG_MAP


@pytest.mark.parametrize(
    ("meta", "keys"),
    [
        pytest.param({"name": "dgdr-output-req", "namespace": "ns"}, ["ns/req"], id="output"),
        pytest.param({"name": "planner-profile-data", "namespace": "ns"}, [], id="other"),
    ],
)
def test_output_config_map_maps_to_request(meta: dict[str, Any], keys: list[str]) -> None:
    assert request_of_output({"metadata": meta}) == keys


@pytest.mark.parametrize(
    ("labels", "keys"),
    [
        pytest.param(
            {"dgdr.nvidia.com/name": "r", "dgdr.nvidia.com/namespace": "src"}, ["src/r"], id="tracked"
        ),
        pytest.param({"dgdr.nvidia.com/name": "r"}, [], id="namespace-missing"),
        pytest.param({}, [], id="untracked"),
    ],
)
def test_deployment_maps_to_request_by_tracking_labels(labels: dict[str, str], keys: list[str]) -> None:
    assert request_of_deployment({"metadata": {"name": "g", "namespace": "prod", "labels": labels}}) == keys


def test_references_are_the_base_config_map_with_its_key_and_the_model_cache_pvc() -> None:
    spec = {
        "profilingConfig": {
            "configMapRef": {"name": "base"},
            "config": {"deployment": {"modelCache": {"pvcName": "models"}}},
        }
    }
    assert references(spec) == [Reference(CONFIG_MAP, "base", "disagg.yaml"), Reference(kinds.PVC, "models")]


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({}, id="empty"),
        pytest.param({"profilingConfig": {"config": ["not", "an", "object"]}}, id="config-not-an-object"),
        pytest.param({"profilingConfig": {"config": {"deployment": "x"}}}, id="deployment-not-an-object"),
    ],
)
def test_references_of_a_spec_that_names_nothing_usable_are_none(spec: dict[str, Any]) -> None:
    assert references(spec) == []


class _Requests:
    """The cache reads the mapper makes: DGDRs by namespace."""

    def __init__(self, *dgdrs: dict[str, Any]) -> None:
        self.dgdrs = dgdrs

    def get(self, resource: Any, key: str) -> None:
        return None

    def by_index(self, resource: Any, index: str, value: str) -> list[dict[str, Any]]:
        assert (resource, index) == (kinds.DGDR, "namespace")
        return [d for d in self.dgdrs if d["metadata"]["namespace"] == value]


def _request(name: str, cm: str, state: str | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"profilingConfig": {"configMapRef": {"name": cm}}},
    }
    if state is not None:
        obj["status"] = {"state": state}
    return obj


def test_a_config_map_maps_to_the_requests_still_waiting_for_it() -> None:
    """Only requests in the initial state that name it, in its namespace: a started request no
    longer cares, and a ConfigMap of the same name elsewhere is another object."""
    cache = _Requests(
        _request("waiting", "base"),
        _request("waiting-too", "base", state=""),
        _request("other-ref", "other"),
        _request("started", "base", state="Profiling"),
        {**_request("elsewhere", "base"), "metadata": {"name": "elsewhere", "namespace": "other-ns"}},
    )
    reconciler = DynamoGraphDeploymentRequestReconciler(
        client=None,  # type: ignore[arg-type]
        cache=cache,
        recorder=None,  # type: ignore[arg-type]
        pods=None,  # type: ignore[arg-type]
    )
    mapper = reconciler.requests_waiting_for(CONFIG_MAP)
    assert mapper({"metadata": {"name": "base", "namespace": "ns"}}) == ["ns/waiting", "ns/waiting-too"]
    assert reconciler.requests_waiting_for(kinds.PVC)({"metadata": {"name": "base", "namespace": "ns"}}) == []
