"""DynamoGraphDeploymentRequest conversion, case by case: the field mapping, upstream's payloads,
live fields winning over stale payloads, tenancy, damaged annotations, and every DGDR on disk."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, preserve, request
from dynamo_operator.api.v1alpha1.request import DynamoGraphDeploymentRequest as AlphaRequest
from dynamo_operator.api.v1beta1.request import DynamoGraphDeploymentRequest as BetaRequest

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared"
UPSTREAM_TESTDATA = SHARED / "upstream-examples-2a6da14c" / "testdata" / "dgdr"
SPEC = preserve.DGDR_SPEC
STATUS = preserve.DGDR_STATUS


def _alpha(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "useMocker": False,
        "enableGpuDiscovery": False,
        "autoApply": True,
        "profilingConfig": {"profilerImage": "profiler:1"},
    }
    base.update(spec)
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "team-a"},
        "spec": base,
    }


def _beta(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "autoApply": True}
    base.update(spec)
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "r", "namespace": "team-a"},
        "spec": base,
    }


def _annotations(obj: dict[str, Any]) -> dict[str, str]:
    annotations: dict[str, str] = obj["metadata"].get("annotations", {})
    return annotations


def _payload(obj: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(_annotations(obj)[SPEC])
    return payload


# --- the mapping ---------------------------------------------------------------------------------


def test_profiling_config_blob_becomes_typed_v1beta1_fields() -> None:
    blob = {
        "sla": {"ttft": 200, "itl": 20.5, "isl": 3000, "osl": 150, "optimizationType": "latency"},
        "deployment": {"modelCache": {"pvcName": "w", "modelPathInPvc": "m/q", "pvcMountPath": "/c"}},
        "planner": {"mode": "sla"},
    }
    beta = request.to_v1beta1(
        _alpha(profilingConfig={"profilerImage": "p:1", "config": blob}, useMocker=True)
    )
    spec = beta["spec"]
    assert spec["sla"] == {"ttft": 200, "itl": 20.5, "optimizationType": "latency"}
    assert spec["workload"] == {"isl": 3000, "osl": 150}
    assert spec["modelCache"] == {"pvcName": "w", "pvcModelPath": "m/q", "pvcMountPath": "/c"}
    assert spec["features"] == {"planner": {"mode": "sla"}, "mocker": {"enabled": True}}
    assert spec["image"] == "p:1"


def test_blob_keys_v1beta1_cannot_type_stay_in_the_spec_payload() -> None:
    blob = {"sla": {"ttft": 1, "isl": 3000.5, "note": "x"}, "engine": {"maxContextLength": 16384}}
    beta = request.to_v1beta1(_alpha(profilingConfig={"profilerImage": "p", "config": blob}))
    assert beta["spec"]["sla"] == {"ttft": 1}
    assert "workload" not in beta["spec"]
    remainder = _payload(beta)["spec"]["profilingConfig"]["config"]
    assert remainder == {"sla": {"isl": 3000.5, "note": "x"}, "engine": {"maxContextLength": 16384}}


@pytest.mark.parametrize("isl", [True, 3000.5, 2**31, 10**400, "3000"])
def test_an_isl_v1beta1_cannot_hold_stays_in_the_blob(isl: object) -> None:
    alpha = _alpha(profilingConfig={"profilerImage": "p", "config": {"sla": {"isl": isl}}})
    beta = request.to_v1beta1(alpha)
    assert "workload" not in beta["spec"]
    assert request.to_v1alpha1(beta) == alpha


def test_profiling_pod_fields_go_into_the_profiler_container_of_the_job_override() -> None:
    config = {"profilerImage": "p", "resources": {"limits": {"cpu": "2"}}, "tolerations": [{"key": "gpu"}]}
    beta = request.to_v1beta1(_alpha(profilingConfig=config))
    pod = beta["spec"]["overrides"]["profilingJob"]["template"]["spec"]
    assert pod == {
        "containers": [{"name": "profiler", "resources": {"limits": {"cpu": "2"}}}],
        "tolerations": [{"key": "gpu"}],
    }


def test_runtime_version_override_and_node_selector_are_v1alpha1_fields_both_ways() -> None:
    """Both versions hold them (upstream's v1alpha1 too): fields, not the payload."""
    job = {"template": {"spec": {"nodeSelector": {"gpu": "h100"}}}}
    beta = _beta(runtimeVersionOverride="1.4.0", overrides={"profilingJob": job})
    alpha = request.to_v1alpha1(beta)
    assert alpha["spec"]["runtimeVersionOverride"] == "1.4.0"
    assert alpha["spec"]["profilingConfig"]["nodeSelector"] == {"gpu": "h100"}
    payload = (_payload(alpha) or {}).get("spec") if "annotations" in alpha["metadata"] else {}
    assert "runtimeVersionOverride" not in (payload or {})
    assert "overrides" not in (payload or {})
    assert request.to_v1beta1(alpha)["spec"] == beta["spec"]


def test_v1beta1_only_fields_travel_in_the_spec_payload_typed_in_v1beta1() -> None:
    hardware = {"gpuSku": "h100_sxm", "totalGpus": 8}
    beta = _beta(
        hardware=hardware,
        searchStrategy="thorough",
        runtimeVersionOverride="1.4.0",
        sla={"ttft": 100, "e2eLatency": 900},
        workload={"isl": 10, "osl": 20, "concurrency": 4},
    )
    alpha = request.to_v1alpha1(beta)
    payload = _payload(alpha)
    assert payload["version"] == 1
    assert payload["spec"] == {
        "hardware": hardware,
        "searchStrategy": "thorough",
        "sla": {"e2eLatency": 900},
        "workload": {"concurrency": 4},
    }
    assert alpha["spec"]["profilingConfig"]["config"] == {"sla": {"ttft": 100, "isl": 10, "osl": 20}}


def test_v1beta1_defaults_mean_the_same_in_v1alpha1() -> None:
    """v1beta1 applies by default (true), v1alpha1 not (false): each side says it explicitly."""
    beta = _beta()
    del beta["spec"]["autoApply"]
    assert request.to_v1alpha1(beta)["spec"]["autoApply"] is True
    alpha = _alpha()
    del alpha["spec"]["autoApply"]
    assert request.to_v1beta1(alpha)["spec"]["autoApply"] is False


@pytest.mark.parametrize(
    ("state", "deployment", "phase"),
    [
        ("Pending", None, "Pending"),
        ("Profiling", None, "Profiling"),
        ("Ready", {"name": "g"}, "Ready"),
        ("Ready", {"name": "g", "created": True}, "Deployed"),
        ("DeploymentDeleted", {"name": "g"}, "Ready"),
        ("Failed", None, "Failed"),
    ],
)
def test_state_maps_to_phase(state: str, deployment: dict[str, Any] | None, phase: str) -> None:
    alpha = _alpha()
    alpha["status"] = {"state": state} | ({"deployment": deployment} if deployment else {})
    beta = request.to_v1beta1(alpha)
    assert beta["status"]["phase"] == phase
    assert request.to_v1alpha1(beta) == alpha


def test_state_before_the_first_reconcile_is_a_status_without_phase() -> None:
    alpha = _alpha()
    alpha["status"] = {"state": "", "observedGeneration": 1}
    beta = request.to_v1beta1(alpha)
    assert "phase" not in beta["status"]
    assert request.to_v1alpha1(beta) == alpha


def test_deployed_phase_reads_as_ready_and_comes_back() -> None:
    beta = _beta()
    beta["status"] = {"phase": "Deployed", "dgdName": "g", "deploymentInfo": {"replicas": 2}}
    alpha = request.to_v1alpha1(beta)
    assert alpha["status"] == {"state": "Ready", "deployment": {"name": "g"}}
    assert request.to_v1beta1(alpha) == beta


# --- upstream's payloads -------------------------------------------------------------------------


def test_a_hub_payload_as_upstreams_go_encoder_writes_it_is_read() -> None:
    """Go writes zero values (model "", containers null) and older releases an unnamed profiler."""
    payload = {
        "version": 1,
        "spec": {
            "model": "",
            "hardware": {"gpuSku": "a100_sxm"},
            "searchStrategy": "thorough",
            "overrides": {
                "profilingJob": {
                    "template": {"metadata": {}, "spec": {"containers": [{"name": "", "image": "side"}]}}
                }
            },
        },
    }
    alpha = _alpha(profilingConfig={"profilerImage": "p", "resources": {"limits": {"cpu": "1"}}})
    alpha["metadata"]["annotations"] = {SPEC: json.dumps(payload)}
    spec = request.to_v1beta1(alpha)["spec"]
    assert spec["hardware"] == {"gpuSku": "a100_sxm"}
    assert spec["searchStrategy"] == "thorough"
    assert spec["model"] == "Qwen/Qwen3-0.6B"
    containers = spec["overrides"]["profilingJob"]["template"]["spec"]["containers"]
    assert containers == [{"name": "profiler", "image": "side", "resources": {"limits": {"cpu": "1"}}}]


def test_spoke_payloads_as_upstreams_go_encoder_writes_them_are_read() -> None:
    """Upstream's v1alpha1 payloads carry Go's zero values ("model": "", "state": "") beside what they
    keep; the zero values never replace a live field."""
    spec_payload = {
        "version": 1,
        "spec": {
            "model": "",
            "backend": "",
            "profilingConfig": {
                "profilerImage": "",
                "outputPVC": "artifacts",
                "config": {"engine": {"x": 1}},
            },
            "enableGpuDiscovery": True,
            "deploymentOverrides": {"name": "g", "workersImage": "w:1"},
        },
    }
    status_payload = {"state": "", "backend": "vllm", "profilingResults": "configmap/out"}
    beta = _beta(image="p:1", sla={"ttft": 3})
    beta["status"] = {"phase": "Profiling"}
    beta["metadata"]["annotations"] = {SPEC: json.dumps(spec_payload), STATUS: json.dumps(status_payload)}
    alpha = request.to_v1alpha1(beta)
    assert alpha["spec"] == {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "autoApply": True,
        "useMocker": False,
        "enableGpuDiscovery": True,
        "profilingConfig": {
            "profilerImage": "p:1",
            "outputPVC": "artifacts",
            "config": {"engine": {"x": 1}, "sla": {"ttft": 3}},
        },
        "deploymentOverrides": {"name": "g", "workersImage": "w:1"},
    }
    assert alpha["status"] == {"state": "Profiling", "backend": "vllm", "profilingResults": "configmap/out"}


def test_a_payload_without_envelope_is_read_as_the_spec() -> None:
    alpha = _alpha()
    alpha["metadata"]["annotations"] = {SPEC: json.dumps({"searchStrategy": "thorough"})}
    assert request.to_v1beta1(alpha)["spec"]["searchStrategy"] == "thorough"


def test_retired_per_field_annotations_are_scrubbed() -> None:
    alpha = _alpha()
    alpha["metadata"]["annotations"] = {key: "x" for key in preserve.LEGACY_DGDR_ANNOTATIONS} | {"keep": "me"}
    beta = request.to_v1beta1(alpha)
    assert _annotations(beta) == {"keep": "me", SPEC: _annotations(beta)[SPEC]}
    assert _annotations(request.to_v1alpha1(beta)) == {"keep": "me"}


# --- live fields win -----------------------------------------------------------------------------


def test_a_live_edit_wins_over_the_payload_of_an_earlier_conversion() -> None:
    beta = _beta(sla={"ttft": 100}, searchStrategy="thorough")
    alpha = request.to_v1alpha1(beta)
    alpha["spec"]["profilingConfig"]["config"]["sla"]["ttft"] = 300
    alpha["spec"]["profilingConfig"]["profilerImage"] = "new:2"
    again = request.to_v1beta1(alpha)
    assert again["spec"]["sla"] == {"ttft": 300}
    assert again["spec"]["image"] == "new:2"
    assert again["spec"]["searchStrategy"] == "thorough"


def test_a_typed_value_removed_live_does_not_come_back_from_the_blob_remainder() -> None:
    alpha = _alpha(profilingConfig={"profilerImage": "p", "config": {"sla": {"ttft": 5, "note": "n"}}})
    beta = request.to_v1beta1(alpha)
    del beta["spec"]["sla"]
    assert request.to_v1alpha1(beta)["spec"]["profilingConfig"]["config"] == {"sla": {"note": "n"}}


def test_a_profiling_step_is_not_restored_for_another_phase() -> None:
    beta = _beta()
    beta["status"] = {"phase": "Profiling", "profilingPhase": "SweepingDecode", "profilingJobName": "j"}
    alpha = request.to_v1alpha1(beta)
    alpha["status"]["state"] = "Failed"
    assert request.to_v1beta1(alpha)["status"] == {"phase": "Failed"}


def test_deployment_details_are_not_restored_for_another_graph() -> None:
    alpha = _alpha()
    alpha["status"] = {"state": "Ready", "deployment": {"name": "g", "namespace": "team-a", "created": True}}
    beta = request.to_v1beta1(alpha)
    beta["status"]["dgdName"] = "other"
    assert request.to_v1alpha1(beta)["status"]["deployment"] == {"name": "other"}


# --- tenancy -------------------------------------------------------------------------------------


def test_a_foreign_namespace_in_the_payload_is_restored_to_be_refused() -> None:
    """Shown in v1alpha1, it is refused there (the admission policy, the operator's NamespaceNotAllowed);
    dropped, the request would go on silently in its own namespace."""
    payload = {"version": 1, "spec": {"deploymentOverrides": {"namespace": "kube-system", "name": "g"}}}
    beta = _beta()
    beta["metadata"]["annotations"] = {SPEC: json.dumps(payload)}
    alpha = request.to_v1alpha1(beta)
    assert alpha["spec"]["deploymentOverrides"] == {"namespace": "kube-system", "name": "g"}


def test_the_own_namespace_in_the_payload_is_restored() -> None:
    alpha = _alpha(deploymentOverrides={"namespace": "team-a", "labels": {"a": "b"}})
    assert request.to_v1alpha1(request.to_v1beta1(alpha)) == alpha


# --- damaged annotations -------------------------------------------------------------------------

DAMAGED = [
    pytest.param("{not json", id="not-json"),
    pytest.param("[1, 2]", id="array"),
    pytest.param('{"version": 1, "spec": 5}', id="spec-not-object"),
    pytest.param('{"version": 1, "spec": {"hardware": "x", "searchStrategy": 7}}', id="wrong-types"),
    pytest.param(
        '{"spec": {"enableGpuDiscovery": "yes", "deploymentOverrides": []}}', id="wrong-alpha-types"
    ),
    pytest.param(
        '{"spec": {"overrides": {"profilingJob": {"template": {"spec": {"containers": "x"}}}}}}', id="job"
    ),
    pytest.param('{"spec": {"overrides": {"profilingJob": 3}, "workload": [1]}}', id="nested-wrong-types"),
    pytest.param('{"spec": {}, "rawJSON": [{"path": 5}, {"path": "a/b", "raw": "!!"}]}', id="raw-records"),
    pytest.param(json.dumps({"spec": {"x": "y" * 300_000}}), id="huge"),
    pytest.param("[" * 5000 + "]" * 5000, id="deep"),
]
DAMAGED_STATUS = [
    '{"deployment": 5, "state": 7}',
    '{"phase": [], "deploymentInfo": "x", "dgdName": 3}',
    "nope",
]


def _pruned(model: type[AlphaRequest] | type[BetaRequest], obj: dict[str, Any]) -> dict[str, Any]:
    """spec and status as the API server keeps them: fields its schema does not know are dropped."""
    dumped = model.model_validate(obj).to_dict()
    return {key: dumped.get(key) for key in ("spec", "status")}


@pytest.mark.parametrize("raw", DAMAGED)
def test_a_damaged_spec_payload_on_v1alpha1_converts_the_fields(raw: str) -> None:
    alpha = _alpha(profilingConfig={"profilerImage": "p", "config": {"sla": {"ttft": 9}}})
    alpha["status"] = {"state": "Profiling"}
    clean = request.to_v1beta1(alpha)
    alpha["metadata"]["annotations"] = {SPEC: raw}
    beta = request.to_v1beta1(alpha)
    assert _pruned(BetaRequest, beta) == _pruned(BetaRequest, clean)


@pytest.mark.parametrize("raw", DAMAGED)
def test_a_damaged_spec_payload_on_v1beta1_converts_the_fields(raw: str) -> None:
    beta = _beta(sla={"ttft": 9}, image="p")
    beta["status"] = {"phase": "Ready"}
    clean = request.to_v1alpha1(beta)
    beta["metadata"]["annotations"] = {SPEC: raw}
    alpha = request.to_v1alpha1(beta)
    assert _pruned(AlphaRequest, alpha) == _pruned(AlphaRequest, clean)


@pytest.mark.parametrize("raw", DAMAGED_STATUS)
def test_a_damaged_status_payload_converts_the_fields_both_ways(raw: str) -> None:
    alpha = _alpha()
    alpha["status"] = {"state": "Ready", "deployment": {"name": "g"}}
    alpha["metadata"]["annotations"] = {STATUS: raw}
    beta = request.to_v1beta1(alpha)
    assert _pruned(BetaRequest, beta)["status"] == {"phase": "Ready", "dgdName": "g"}
    beta["metadata"]["annotations"] = {STATUS: raw}
    alpha_again = request.to_v1alpha1(beta)
    assert _pruned(AlphaRequest, alpha_again)["status"] == {"state": "Ready", "deployment": {"name": "g"}}


def test_a_damaged_payload_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    alpha = _alpha()
    alpha["metadata"]["annotations"] = {SPEC: '{"spec": {"hardware": "x"}}'}
    with caplog.at_level(logging.WARNING):
        request.to_v1beta1(alpha)
    assert "hardware" in caplog.text


def test_damaged_live_fields_convert_without_raising() -> None:
    alpha = _alpha(profilingConfig="x", deploymentOverrides=[1])
    alpha["status"] = {"state": 5, "deployment": "x", "generatedDeployment": 1}
    beta = request.to_v1beta1(alpha)
    request.to_v1alpha1(beta)
    broken = _beta(overrides={"profilingJob": {"template": "x"}}, features=[1], sla=3)
    broken["status"] = {"profilingResults": "x", "phase": 1}
    request.to_v1beta1(request.to_v1alpha1(broken))


# --- objects on disk -----------------------------------------------------------------------------


def _requests_in(paths: list[Path]) -> list[Any]:
    found = []
    for path in paths:
        text = path.read_text()
        if "kind: DynamoGraphDeploymentRequest" not in text:
            continue
        for index, doc in enumerate(yaml.safe_load_all(text)):
            if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeploymentRequest":
                found.append(pytest.param(doc, id=f"{path.parent.name}/{path.name}[{index}]"))
    return found


def _on_disk() -> list[Any]:
    samples = sorted((REPO / "config" / "samples").glob("*.yaml"))
    shared = sorted(p for d in SHARED.glob("upstream-examples*") for p in d.rglob("*.yaml"))
    return _requests_in(samples + shared)


def test_the_shared_reference_data_is_there() -> None:
    """The tests below read ../shared; without it they would test nothing."""
    assert sorted(p.parent.name for p in UPSTREAM_TESTDATA.glob("*/input.yaml")) == [
        "deployment",
        "grove",
        "lws",
    ]
    assert len(_on_disk()) >= 4


@pytest.mark.parametrize("doc", _on_disk())
def test_every_request_on_disk_round_trips(doc: dict[str, Any]) -> None:
    """Samples are read as the API server stores them (its defaults filled in), then converted to the
    other version and back."""
    version = doc["apiVersion"]
    model = AlphaRequest if version.endswith("v1alpha1") else BetaRequest
    stored = _with_defaults(copy.deepcopy(doc), model.model_validate(doc).to_dict())
    other = "nvidia.com/v1beta1" if version.endswith("v1alpha1") else "nvidia.com/v1alpha1"
    there = convert(stored, other)
    (BetaRequest if model is AlphaRequest else AlphaRequest).model_validate(there)
    assert convert(there, version) == stored


def _with_defaults(doc: dict[str, Any], full: dict[str, Any]) -> dict[str, Any]:
    for key, value in full.items():
        if key not in doc:
            doc[key] = value
        elif isinstance(doc[key], dict) and isinstance(value, dict):
            _with_defaults(doc[key], value)
    return doc


@pytest.mark.parametrize("case", ["deployment", "grove", "lws"])
def test_upstream_controller_inputs_read_as_v1alpha1_keep_their_settings(case: str) -> None:
    """Upstream's DGDR controller inputs (v1beta1): their v1alpha1 view carries model, backend, image,
    mocker and targets as fields, and the rest in the payload."""
    doc = yaml.safe_load((UPSTREAM_TESTDATA / case / "input.yaml").read_text())
    alpha = request.to_v1alpha1(doc)
    spec = alpha["spec"]
    assert (spec["model"], spec["backend"], spec["useMocker"]) == ("Qwen/Qwen3-0.6B", "vllm", True)
    assert spec["profilingConfig"]["profilerImage"] == doc["spec"]["image"]
    assert spec["profilingConfig"]["config"]["sla"] == {"ttft": 2000, "itl": 30, "isl": 4000, "osl": 1000}
    assert _payload(alpha)["spec"]["hardware"] == doc["spec"]["hardware"]


# --- status.backend: the spec's backend once the spec was taken in ---------------------------------


def _beta_request(status: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "r", "namespace": "ns"}
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": V1BETA1,
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": meta,
        "spec": {"model": "m", "backend": "vllm", "autoApply": True, "searchStrategy": "rapid"},
        "status": status,
    }


def test_a_v1beta1_status_that_took_the_spec_in_shows_its_backend_in_v1alpha1() -> None:
    """The request stored as v1beta1 keeps v1alpha1's status.backend without any payload."""
    beta = _beta_request({"phase": "Profiling", "observedGeneration": 1})
    alpha = convert(beta, V1ALPHA1)
    assert alpha["status"]["backend"] == "vllm"
    assert "annotations" not in alpha["metadata"]
    assert convert(alpha, V1BETA1) == beta


def test_a_v1beta1_status_before_the_spec_was_taken_in_shows_no_backend() -> None:
    alpha = convert(_beta_request({"phase": "Pending"}), V1ALPHA1)
    assert "backend" not in alpha["status"]


def test_a_v1alpha1_status_without_the_backend_its_spec_implies_keeps_none() -> None:
    alpha = convert(_beta_request({"phase": "Profiling", "observedGeneration": 1}), V1ALPHA1)
    del alpha["status"]["backend"]
    beta = convert(alpha, V1BETA1)
    assert json.loads(beta["metadata"]["annotations"]["nvidia.com/dgdr-status"]) == {"backend": None}
    assert convert(beta, V1ALPHA1) == alpha


def test_a_v1alpha1_backend_other_than_the_spec_one_is_kept() -> None:
    alpha = convert(_beta_request({"phase": "Profiling", "observedGeneration": 1}), V1ALPHA1)
    alpha["status"]["backend"] = "sglang"
    assert convert(convert(alpha, V1BETA1), V1ALPHA1) == alpha


def test_a_status_converted_alone_implies_no_backend() -> None:
    """The operator's status writes convert a status without its spec: no backend appears in it."""
    beta = _beta_request({"phase": "Profiling", "observedGeneration": 1})
    del beta["spec"]
    assert "backend" not in convert(beta, V1ALPHA1)["status"]


# --- searchStrategy: v1beta1's default, set in the conversion as the API server sets it ------------


def test_a_v1alpha1_request_converts_with_the_default_search_strategy() -> None:
    """As the API server defaults it on a v1beta1 write: the storage migration's write then changes no
    spec (and no generation, which a request past Pending would read as an edit of its frozen spec)."""
    alpha = convert(_beta_request({"phase": "Profiling", "observedGeneration": 1}), V1ALPHA1)
    assert "annotations" not in alpha["metadata"]
    del alpha["status"]
    assert convert(alpha, V1BETA1)["spec"]["searchStrategy"] == "rapid"


def test_a_v1beta1_request_without_a_search_strategy_keeps_none() -> None:
    beta = _beta_request({"phase": "Profiling", "observedGeneration": 1})
    del beta["spec"]["searchStrategy"]
    assert convert(convert(beta, V1ALPHA1), V1BETA1) == beta


def test_a_v1beta1_request_with_another_search_strategy_keeps_it() -> None:
    beta = _beta_request({"phase": "Profiling", "observedGeneration": 1})
    beta["spec"]["searchStrategy"] = "thorough"
    assert convert(convert(beta, V1ALPHA1), V1BETA1) == beta
