"""v1beta1's leaf defaults (workload.isl/osl, modelCache.pvcMountPath) for a request stored as
v1alpha1: the storage migration reads it as v1beta1 and writes it back, and the API server defaults
that write. The conversion must already hold those defaults (or the write moves
metadata.generation) and must not show them to a v1alpha1 reader whose blob never had them."""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.api.conversion import request


def _alpha(blob: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "team-a"},
        "spec": {
            "model": "m",
            "backend": "vllm",
            "autoApply": False,
            "useMocker": False,
            "enableGpuDiscovery": False,
            "profilingConfig": {"profilerImage": "p", "config": blob},
        },
    }


PARTIAL = {"sla": {"isl": 3000, "ttft": 200}, "deployment": {"modelCache": {"pvcName": "cache"}}}


def test_the_v1beta1_form_already_holds_the_servers_leaf_defaults() -> None:
    spec = request.to_v1beta1(_alpha(copy.deepcopy(PARTIAL)))["spec"]
    assert spec["workload"] == {"isl": 3000, "osl": 1000}
    assert spec["modelCache"] == {"pvcName": "cache", "pvcMountPath": "/opt/model-cache"}


def test_a_v1alpha1_reader_does_not_see_the_leaf_defaults_after_the_rewrite() -> None:
    alpha = _alpha(copy.deepcopy(PARTIAL))
    assert request.to_v1alpha1(request.to_v1beta1(alpha)) == alpha


def test_a_default_value_the_v1alpha1_user_wrote_stays() -> None:
    alpha = _alpha({"sla": {"isl": 3000, "osl": 1000}})
    beta = request.to_v1beta1(alpha)
    assert beta["spec"]["workload"] == {"isl": 3000, "osl": 1000}
    assert request.to_v1alpha1(beta) == alpha


def test_a_changed_v1beta1_value_shows_in_v1alpha1() -> None:
    beta = request.to_v1beta1(_alpha(copy.deepcopy(PARTIAL)))
    beta["spec"]["workload"]["osl"] = 2000
    assert request.to_v1alpha1(beta)["spec"]["profilingConfig"]["config"]["sla"]["osl"] == 2000


def test_a_v1beta1_objects_defaults_show_in_v1alpha1_as_upstreams_do() -> None:
    beta = request.to_v1beta1(_alpha(copy.deepcopy(PARTIAL)))
    beta["metadata"].pop("annotations")
    assert request.to_v1alpha1(beta)["spec"]["profilingConfig"]["config"]["sla"]["osl"] == 1000
