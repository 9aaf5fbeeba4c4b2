"""v1alpha1's `status.profilingResults` (a "configmap/<name>" reference) in the v1alpha1 view of a
request stored as v1beta1.

v1beta1 has no field for it: upstream's conversion keeps it in the status payload
(`nvidia.com/dgdr-status`) and a v1alpha1 reader sees exactly what that payload says, never one
derived from v1beta1's `profilingResults` object (whose `selectedConfig` is v1alpha1's
`generatedDeployment`, and whose `pareto` has no v1alpha1 field). These tests pin that view.
"""

from __future__ import annotations

import json
from typing import Any

from dynamo_operator.api.conversion import preserve, request
from dynamo_operator.internal.dynamo.dgdr import stored

STATUS = preserve.DGDR_STATUS
SELECTED = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "g"}}
PARETO = [{"config": {"tp": 1}}]


def _beta(status: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "team-a", "annotations": dict(annotations or {})},
        "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "autoApply": True},
        "status": status,
    }


def _alpha_with_results() -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "team-a"},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "useMocker": False,
            "enableGpuDiscovery": False,
            "autoApply": True,
            "profilingConfig": {"profilerImage": "profiler:1"},
        },
        "status": {
            "state": "Ready",
            "observedGeneration": 1,
            "backend": "vllm",
            "generatedDeployment": SELECTED,
            "profilingResults": "configmap/r-output",
        },
    }


def test_the_status_payloads_reference_is_the_v1alpha1_profiling_results() -> None:
    status = {"phase": "Ready", "profilingResults": {"selectedConfig": SELECTED, "pareto": PARETO}}
    payload = {"profilingResults": "configmap/r-output"}
    alpha = request.to_v1alpha1(_beta(status, {STATUS: json.dumps(payload)}))
    assert alpha["status"]["profilingResults"] == "configmap/r-output"
    assert alpha["status"]["generatedDeployment"] == SELECTED


def test_without_a_status_payload_no_profiling_results_reference_is_made_up() -> None:
    status = {"phase": "Ready", "profilingResults": {"selectedConfig": SELECTED, "pareto": PARETO}}
    alpha = request.to_v1alpha1(_beta(status))
    assert "profilingResults" not in alpha["status"]
    assert alpha["status"]["generatedDeployment"] == SELECTED


def test_the_pareto_list_is_kept_for_the_way_back_not_shown_as_profiling_results() -> None:
    status = {"phase": "Ready", "profilingResults": {"selectedConfig": SELECTED, "pareto": PARETO}}
    beta = _beta(status)
    alpha = request.to_v1alpha1(beta)
    assert request.to_v1beta1(alpha)["status"]["profilingResults"] == status["profilingResults"]


def test_the_reference_outlives_a_v1beta1_status_write_that_keeps_the_annotations() -> None:
    """Stored as v1beta1 the reconciler writes the status subresource, which leaves metadata (and so
    the payload) as it is: the v1alpha1 reader still sees the reference the v1alpha1 status had."""
    stored_beta = request.to_v1beta1(_alpha_with_results())
    new_alpha_status = {"state": "Ready", "observedGeneration": 2, "generatedDeployment": SELECTED}
    written = dict(stored_beta)
    written["status"] = stored.beta_status(stored_beta["status"], new_alpha_status, {})
    alpha = request.to_v1alpha1(written)
    assert alpha["status"]["profilingResults"] == "configmap/r-output"
    assert alpha["status"]["observedGeneration"] == 2


def test_a_round_trip_through_v1beta1_keeps_the_reference() -> None:
    alpha = _alpha_with_results()
    back = request.to_v1alpha1(request.to_v1beta1(alpha))
    assert back["status"] == alpha["status"]
