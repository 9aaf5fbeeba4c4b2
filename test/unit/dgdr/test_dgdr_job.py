"""The profiling Job contract and how its outcome is read back."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from dynamo_operator.internal.dynamo.dgdr import profiler_config
from dynamo_operator.internal.dynamo.dgdr.job import (
    JobOutcome,
    JobPhase,
    failure_message,
    job_outcome,
    pod_failure_detail,
    profiling_job,
    runs_ai_configurator,
)


def make_dgdr(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "profilingConfig": {"profilerImage": "prof:1", "config": {"sla": {"ttft": 200}}},
    }
    base.update(spec)
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": "req", "namespace": "ns1", "uid": "u-1"},
        "spec": base,
    }


def _containers(job: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in job["spec"]["template"]["spec"]["containers"]}


def _profile_config(job: dict[str, Any]) -> dict[str, Any]:
    args = _containers(job)["profiler"]["args"]
    assert args[0] == "--profile-config"
    loaded = yaml.safe_load(args[1])
    assert isinstance(loaded, dict)
    return loaded


def test_job_identity_labels_and_pod_contract() -> None:
    job = profiling_job(make_dgdr())
    assert job["metadata"]["name"] == "profile-req" and job["metadata"]["namespace"] == "ns1"
    labels = {"app": "dynamo-profiler", "dgdr": "req", "nvidia.com/managed-by": "dynamo-operator"}
    assert job["metadata"]["labels"] == labels
    assert job["spec"]["template"]["metadata"]["labels"] == labels
    assert job["spec"]["backoffLimit"] == 3
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "dgdr-profiling-job"
    assert pod["restartPolicy"] == "Never"
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "runAsGroup": 1000,
        "fsGroup": 1000,
    }
    assert pod["imagePullSecrets"] == [{"name": "nvcr-imagepullsecret"}]
    assert list(_containers(job)) == ["profiler", "output-copier"]


def test_profiler_container_carries_image_command_env_and_output_mount() -> None:
    profiler = _containers(profiling_job(make_dgdr()))["profiler"]
    assert profiler["image"] == "prof:1"
    assert profiler["command"] == ["python", "-m", "benchmarks.profiler.profile_sla"]
    env = {e["name"]: e for e in profiler["env"]}
    assert env["HUGGING_FACE_HUB_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "hf-token-secret",
        "key": "HF_TOKEN",
    }
    assert env["NATS_SERVER"]["value"] == "nats://ns1-nats:4222"
    assert env["ETCD_ENDPOINTS"]["value"] == "ns1-etcd:2379"
    assert (env["DGDR_NAME"]["value"], env["DGDR_NAMESPACE"]["value"], env["DGDR_UID"]["value"]) == (
        "req",
        "ns1",
        "u-1",
    )
    assert profiler["volumeMounts"] == [{"name": "profiling-output", "mountPath": "/data"}]
    assert "resources" not in profiler


def test_profile_config_argument_forces_model_backend_namespace_and_output_dir() -> None:
    dgdr = make_dgdr(
        profilingConfig={
            "profilerImage": "p",
            "config": {"deployment": {"model": "other"}, "engine": {"backend": "sglang"}, "sla": {"itl": 9}},
        }
    )
    config = _profile_config(profiling_job(dgdr))
    assert config["deployment"] == {"model": "Qwen/Qwen3-0.6B", "namespace": "ns1"}
    assert config["engine"] == {"backend": "vllm"}
    assert config["output_dir"] == "/data"
    assert config["sla"] == {"itl": 9}


def test_user_namespace_and_output_dir_are_kept() -> None:
    dgdr = make_dgdr(
        profilingConfig={
            "profilerImage": "p",
            "config": {"deployment": {"namespace": "x"}, "output_dir": "/o"},
        }
    )
    config = _profile_config(profiling_job(dgdr))
    assert (config["deployment"]["namespace"], config["output_dir"]) == ("x", "/o")


def test_workers_image_reaches_profiler_as_dgd_image() -> None:
    config = _profile_config(profiling_job(make_dgdr(deploymentOverrides={"workersImage": "w:2"})))
    assert config["deployment"]["dgd_image"] == "w:2"


def test_config_map_ref_mounts_base_config_and_sets_engine_config() -> None:
    dgdr = make_dgdr(
        profilingConfig={
            "profilerImage": "p",
            "config": {"a": 1},
            "configMapRef": {"name": "base", "key": "k.yaml"},
        }
    )
    job = profiling_job(dgdr)
    assert _profile_config(job)["engine"]["config"] == "/config/disagg.yaml"
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    assert volumes["profiling-config"]["configMap"] == {
        "name": "base",
        "items": [{"key": "k.yaml", "path": "disagg.yaml"}],
    }
    mounts = _containers(job)["profiler"]["volumeMounts"]
    assert {"name": "profiling-config", "mountPath": "/config", "readOnly": True} in mounts


@pytest.mark.parametrize(
    ("output_pvc", "volume"),
    [
        pytest.param(None, {"name": "profiling-output", "emptyDir": {}}, id="emptydir"),
        pytest.param(
            "results",
            {"name": "profiling-output", "persistentVolumeClaim": {"claimName": "results"}},
            id="pvc",
        ),
    ],
)
def test_output_volume(output_pvc: str | None, volume: dict[str, Any]) -> None:
    profiling: dict[str, Any] = {"profilerImage": "p", "config": {"a": 1}}
    if output_pvc:
        profiling["outputPVC"] = output_pvc
    job = profiling_job(make_dgdr(profilingConfig=profiling))
    assert job["spec"]["template"]["spec"]["volumes"][0] == volume


def test_model_cache_pvc_is_mounted_read_only() -> None:
    config = {"deployment": {"modelCache": {"pvcName": "cache"}}}
    job = profiling_job(make_dgdr(profilingConfig={"profilerImage": "p", "config": config}))
    volumes = {v["name"]: v for v in job["spec"]["template"]["spec"]["volumes"]}
    assert volumes["model-cache"]["persistentVolumeClaim"] == {"claimName": "cache", "readOnly": True}
    mounts = _containers(job)["profiler"]["volumeMounts"]
    assert {"name": "model-cache", "mountPath": "/opt/model-cache", "readOnly": True} in mounts


def test_tolerations_resources_and_gpu_discovery_are_passed_through() -> None:
    tol = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    res = {"limits": {"nvidia.com/gpu": "1"}}
    job = profiling_job(
        make_dgdr(
            enableGpuDiscovery=True,
            profilingConfig={"profilerImage": "p", "config": {"a": 1}, "tolerations": tol, "resources": res},
        )
    )
    assert job["spec"]["template"]["spec"]["tolerations"] == tol
    profiler = _containers(job)["profiler"]
    assert profiler["resources"] == res
    assert profiler["args"][-1] == "--enable-gpu-discovery"


def test_sidecar_publishes_output_config_map_read_only() -> None:
    copier = _containers(profiling_job(make_dgdr()))["output-copier"]
    assert copier["image"] == "docker.io/alpine/kubectl:1.34.2"  # a pinned release, never `latest`
    assert copier["command"][:2] == ["/bin/sh", "-c"]
    assert {"name": "OUTPUT_CONFIG_MAP", "value": "dgdr-output-req"} in copier["env"]
    assert copier["volumeMounts"] == [{"name": "profiling-output", "mountPath": "/data", "readOnly": True}]


@pytest.mark.parametrize(
    ("sweep", "aic"),
    [
        pytest.param(None, False, id="missing-is-online"),
        pytest.param({"use_ai_configurator": True}, True, id="snake-case"),
        pytest.param({"useAiConfigurator": True}, True, id="camel-case"),
        pytest.param({"useAiConfigurator": False, "use_ai_configurator": True}, False, id="camel-wins"),
        pytest.param({"useAiConfigurator": "yes"}, False, id="non-bool-is-online"),
    ],
)
def test_ai_configurator_detection(sweep: dict[str, Any] | None, aic: bool) -> None:
    config: dict[str, Any] = {"a": 1} if sweep is None else {"sweep": sweep}
    assert profiler_config.uses_ai_configurator(config) is aic
    job = profiling_job(make_dgdr(profilingConfig={"profilerImage": "p", "config": config}))
    assert job["metadata"]["labels"]["app"] == ("aic-profiler" if aic else "dynamo-profiler")
    assert runs_ai_configurator(job) is aic


def test_a_job_is_generated_without_an_owner_unless_one_is_named() -> None:
    assert "ownerReferences" not in profiling_job(make_dgdr())["metadata"]
    ref = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeploymentRequest", "uid": "u-1"}
    assert profiling_job(make_dgdr(), owner_reference=ref)["metadata"]["ownerReferences"] == [ref]


@pytest.mark.parametrize(
    ("spec", "restricted", "errors"),
    [
        pytest.param({"profilingConfig": {"profilerImage": "p", "config": {"a": 1}}}, False, 0, id="valid"),
        pytest.param({"profilingConfig": {"config": {"a": 1}}}, False, 1, id="missing-image"),
        # What a v1beta1 request with only a model and an image reads as: the profiler's defaults.
        pytest.param({"profilingConfig": {"profilerImage": "p", "config": {}}}, False, 0, id="empty-config"),
        pytest.param({"profilingConfig": {"profilerImage": "p"}}, False, 0, id="no-config"),
        pytest.param({"profilingConfig": {"config": {"engine": "x"}}}, False, 2, id="errors-joined"),
        pytest.param(
            {"enableGpuDiscovery": True, "profilingConfig": {"profilerImage": "p", "config": {"a": 1}}},
            True,
            1,
            id="gpu-discovery-restricted",
        ),
        pytest.param(
            {"enableGpuDiscovery": True, "profilingConfig": {"profilerImage": "p", "config": {"a": 1}}},
            False,
            0,
            id="gpu-discovery-cluster-wide",
        ),
        pytest.param(
            {"profilingConfig": {"profilerImage": "p", "config": {"engine": "vllm"}}},
            False,
            1,
            id="engine-not-map",
        ),
    ],
)
def test_validation(spec: dict[str, Any], restricted: bool, errors: int) -> None:
    assert len(profiler_config.validate(spec, namespace_restricted=restricted)) == errors


@pytest.mark.parametrize(
    ("conditions", "outcome"),
    [
        pytest.param([], JobOutcome(JobPhase.RUNNING), id="no-conditions"),
        pytest.param(
            [{"type": "SuccessCriteriaMet", "status": "True"}], JobOutcome(JobPhase.RUNNING), id="interim"
        ),
        pytest.param([{"type": "Complete", "status": "True"}], JobOutcome(JobPhase.SUCCEEDED), id="complete"),
        pytest.param(
            [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "limit"}],
            JobOutcome(JobPhase.FAILED, "limit"),
            id="failed",
        ),
        pytest.param(
            [{"type": "Failed", "status": "False"}], JobOutcome(JobPhase.RUNNING), id="failed-false"
        ),
    ],
)
def test_job_outcome(conditions: list[dict[str, str]], outcome: JobOutcome) -> None:
    assert job_outcome({"status": {"conditions": conditions}}) == outcome


def _pod(name: str, phase: str, created: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "creationTimestamp": created}, "status": {"phase": phase, **status}}


def test_failure_detail_reads_newest_failed_profiler_termination() -> None:
    terminated = {"exitCode": 2, "reason": "Error", "message": "CUDA OOM"}
    pods = [
        _pod("old", "Failed", "2026-01-01T00:00:00Z", message="evicted"),
        _pod(
            "new",
            "Failed",
            "2026-01-01T00:01:00Z",
            containerStatuses=[
                {"name": "output-copier", "state": {"terminated": {"exitCode": 1}}},
                {"name": "profiler", "state": {"terminated": terminated}},
            ],
        ),
        _pod("running", "Running", "2026-01-01T00:02:00Z"),
    ]
    detail = pod_failure_detail(pods)
    assert detail == "Pod: new, Container: profiler, ExitCode: 2, Reason: Error, Message: CUDA OOM"
    message = failure_message(
        JobOutcome(JobPhase.FAILED, "Job has reached the specified backoff limit"), detail
    )
    assert message == (
        "profiling job failed: Job has reached the specified backoff limit. Details: " + detail
    )


def test_failure_detail_waiting_container_and_pod_message_fallbacks() -> None:
    waiting = {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}
    pods = [_pod("p", "Failed", "t", containerStatuses=[{"name": "profiler", "state": waiting}])]
    assert pod_failure_detail(pods) == (
        "Pod: p, Container: profiler, Waiting - Reason: ImagePullBackOff, Message: no such image"
    )
    assert pod_failure_detail([_pod("q", "Failed", "t", reason="Evicted", message="disk")]) == (
        "Pod: q, Reason: Evicted, Message: disk"
    )
    assert pod_failure_detail([_pod("r", "Running", "t")]) == ""
    assert failure_message(JobOutcome(JobPhase.FAILED, "x"), "") == "profiling job failed: x"


def test_the_node_selector_reaches_the_profiling_pod() -> None:
    selector = {"nvidia.com/gpu.product": "H100"}
    job = profiling_job(make_dgdr(profilingConfig={"profilerImage": "p", "nodeSelector": selector}))
    assert job["spec"]["template"]["spec"]["nodeSelector"] == selector


def test_without_a_node_selector_the_profiling_pod_has_none() -> None:
    job = profiling_job(make_dgdr(profilingConfig={"profilerImage": "p"}))
    assert "nodeSelector" not in job["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    "profiling", [{"profilerImage": "prof:1"}, {"profilerImage": "prof:1", "config": {}}]
)
def test_a_request_without_a_profiling_config_profiles_with_the_operators_fields_only(
    profiling: dict[str, Any],
) -> None:
    """What a v1beta1 request naming only its model and image reads as: the profiler gets the fields
    the operator always fills in (output, deployment namespace...), and its own defaults for the rest."""
    job = profiling_job(make_dgdr(profilingConfig=profiling))
    config = _profile_config(job)
    assert config  # the operator's fields
    assert "sla" not in config
    assert _containers(job)["profiler"]["image"] == "prof:1"
