"""How ConfigMap and DGD events find their DGDR."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeploymentrequest import request_of_deployment, request_of_output


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
