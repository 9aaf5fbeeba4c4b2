"""The pydantic models: names, aliases, defaults, tolerance of unknown fields, constants."""

from __future__ import annotations

from typing import Any

import dynamo_operator.api.v1alpha1 as api
import pytest
from dynamo_operator.api.v1alpha1 import (
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoModel,
    ExtraPodSpec,
    MultinodeSpec,
    RestartStatus,
)

# Every type of the API reference (seed 001), by the name the reference gives it.
SPEC_TYPES = [
    "Autoscaling",
    "ComponentKind",
    "ConfigMapKeySelector",
    "DeploymentOverridesSpec",
    "DeploymentStatus",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentRequestSpec",
    "DynamoGraphDeploymentRequestStatus",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentScalingAdapterSpec",
    "DynamoGraphDeploymentScalingAdapterStatus",
    "DynamoGraphDeploymentServiceRef",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
    "DynamoModel",
    "DynamoModelSpec",
    "DynamoModelStatus",
    "EPPConfig",
    "EndpointInfo",
    "ExtraPodMetadata",
    "ExtraPodSpec",
    "IngressSpec",
    "IngressTLSSpec",
    "ModelReference",
    "ModelSource",
    "MultinodeSpec",
    "PVC",
    "ProfilingConfigSpec",
    "ResourceItem",
    "Resources",
    "Restart",
    "RestartPhase",
    "RestartStatus",
    "RestartStrategy",
    "RestartStrategyType",
    "ScalingAdapter",
    "ServiceReplicaStatus",
    "SharedMemorySpec",
    "VolumeMount",
]


@pytest.mark.parametrize("name", SPEC_TYPES)
def test_every_spec_type_is_exported_under_its_spec_name(name: str) -> None:
    assert name in api.__all__
    assert getattr(api, name).__name__ == name


@pytest.mark.parametrize(
    ("constant", "value"),
    [
        pytest.param("GROUP", "nvidia.com", id="group"),
        pytest.param("VERSION", "v1alpha1", id="version"),
        pytest.param("API_VERSION", "nvidia.com/v1alpha1", id="api-version"),
        pytest.param("DYNAMO_GRAPH_DEPLOYMENT_PLURAL", "dynamographdeployments", id="dgd"),
        pytest.param("DYNAMO_COMPONENT_DEPLOYMENT_PLURAL", "dynamocomponentdeployments", id="dcd"),
        pytest.param("DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL", "dynamographdeploymentrequests", id="dgdr"),
        pytest.param(
            "DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL",
            "dynamographdeploymentscalingadapters",
            id="dgdsa",
        ),
        pytest.param("DYNAMO_MODEL_PLURAL", "dynamomodels", id="dm"),
        pytest.param("DYNAMO_MODEL_KIND", "DynamoModel", id="dm-kind"),
    ],
)
def test_group_version_constants(constant: str, value: str) -> None:
    assert getattr(api, constant) == value


def _dgd(**service: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "n"},
        "spec": {"backendFramework": "vllm", "services": {"Worker": {"componentType": "worker", **service}}},
    }


def test_snake_case_attributes_and_camel_case_json() -> None:
    dgd = DynamoGraphDeployment.model_validate(_dgd(envFromSecret="s", sharedMemory={"size": "16Gi"}))
    worker = dgd.spec.services["Worker"]  # type: ignore[index]
    assert (worker.env_from_secret, worker.shared_memory.size) == ("s", "16Gi")  # type: ignore[union-attr]
    assert dgd.to_dict()["spec"]["services"]["Worker"]["envFromSecret"] == "s"


def test_populate_by_name_accepts_python_names() -> None:
    spec = MultinodeSpec(node_count=4)
    assert spec.to_dict() == {"nodeCount": 4}


@pytest.mark.parametrize(
    ("model", "data", "json_key"),
    [
        pytest.param(RestartStatus, {"observedID": "r1"}, "observedID", id="observedID"),
    ],
)
def test_irregular_json_names(model: type[api.ApiModel], data: dict[str, Any], json_key: str) -> None:
    assert json_key in model.model_validate(data).to_dict()


def test_dgdr_output_pvc_alias() -> None:
    dgdr = DynamoGraphDeploymentRequest.model_validate(
        {
            "spec": {
                "model": "m",
                "backend": "vllm",
                "profilingConfig": {"profilerImage": "i", "outputPVC": "out", "configMapRef": {"name": "c"}},
            }
        }
    )
    assert dgdr.spec.profiling_config.output_pvc == "out"
    assert dgdr.spec.profiling_config.config_map_ref.key == "disagg.yaml"  # type: ignore[union-attr]
    assert dgdr.to_dict()["spec"]["profilingConfig"]["outputPVC"] == "out"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(lambda s: s.multinode.node_count, 2, id="multinode-nodeCount-2"),
        pytest.param(lambda s: s.scaling_adapter.enabled, False, id="scalingAdapter-enabled-false"),
        pytest.param(
            lambda s: s.volume_mounts[0].use_as_compilation_cache, False, id="compilation-cache-false"
        ),
    ],
)
def test_spec_defaults(path: Any, expected: Any) -> None:
    dgd = DynamoGraphDeployment.model_validate(
        _dgd(multinode={}, scalingAdapter={}, volumeMounts=[{"name": "p", "mountPoint": "/m"}])
    )
    assert path(dgd.spec.services["Worker"]) == expected  # type: ignore[index]


def test_restart_strategy_defaults_to_sequential_and_model_type_to_base() -> None:
    doc = _dgd()
    doc["spec"]["restart"] = {"id": "1", "strategy": {}}
    dgd = DynamoGraphDeployment.model_validate(doc)
    assert dgd.spec.restart.strategy.type == "Sequential"  # type: ignore[union-attr]
    model = DynamoModel.model_validate({"spec": {"modelName": "m", "baseModelName": "b"}})
    assert model.spec.model_type == "base"


def test_enums_are_plain_strings_after_validation() -> None:
    """Values compare equal to their enum and serialise without a custom representer."""
    dgd = DynamoGraphDeployment.model_validate(_dgd())
    assert type(dgd.spec.backend_framework) is str
    assert dgd.spec.backend_framework == api.BackendFramework.VLLM


def test_unknown_fields_are_ignored_so_older_operators_read_newer_objects() -> None:
    doc = _dgd(someFutureField={"x": 1})
    doc["spec"]["anotherNewField"] = True
    doc["status"] = {"state": "successful", "newStatusField": 3}
    dgd = DynamoGraphDeployment.model_validate(doc)
    assert "someFutureField" not in dgd.to_dict()["spec"]["services"]["Worker"]
    assert dgd.status is not None and dgd.status.state == "successful"


def test_deprecated_fields_are_accepted() -> None:
    dgd = DynamoGraphDeployment.model_validate(
        _dgd(dynamoNamespace="old", autoscaling={"enabled": True, "minReplicas": 1, "maxReplicas": 3})
    )
    worker = dgd.spec.services["Worker"]  # type: ignore[index]
    assert worker.autoscaling is not None and worker.dynamo_namespace == "old"


def test_extra_pod_spec_keeps_pod_spec_fields_apart_from_main_container() -> None:
    eps = ExtraPodSpec.model_validate(
        {"mainContainer": {"image": "img"}, "tolerations": [{"key": "k"}], "nodeSelector": {"a": "b"}}
    )
    assert eps.main_container == {"image": "img"}
    assert eps.pod_spec() == {"tolerations": [{"key": "k"}], "nodeSelector": {"a": "b"}}
    assert eps.to_dict() == {
        "mainContainer": {"image": "img"},
        "tolerations": [{"key": "k"}],
        "nodeSelector": {"a": "b"},
    }


def test_top_level_objects_default_api_version_and_kind() -> None:
    model = DynamoModel.model_validate(
        {"metadata": {"name": "m"}, "spec": {"modelName": "m", "baseModelName": "b"}}
    )
    assert (model.api_version, model.kind, model.status) == ("nvidia.com/v1alpha1", "DynamoModel", None)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        pytest.param({"multinode": {"nodeCount": 1}}, "nodeCount", id="nodeCount-below-2"),
        pytest.param({"replicas": -1}, "replicas", id="negative-replicas"),
    ],
)
def test_models_enforce_minimums(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        DynamoGraphDeployment.model_validate(_dgd(**data))
