"""nvidia.com/v1alpha1: pydantic models of the five Dynamo kinds and their shared types.

The models load on first use (`__getattr__` below); the group, version, limits and enumerations are
here at once, and are all the running operator reads.

Attributes are snake_case, JSON names camelCase; dump with `model_dump(by_alias=True, exclude_none=True)`
(or `.to_dict()`). Embedded Kubernetes types (PodSpec, Container, Probe, EnvVar, Condition, ...) are dicts.
"""

# ruff: noqa: F405  (__all__ names the models the star import below gives the type checker)

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_models import models_on_first_use
from .enums import (
    IMMUTABLE_SPEC_STATES,
    BackendFramework,
    DGDRState,
    ModelType,
    RestartPhase,
    RestartStrategyType,
    RollingUpdatePhase,
)
from .groupversion import (
    API_VERSION,
    DYNAMO_COMPONENT_DEPLOYMENT_KIND,
    DYNAMO_COMPONENT_DEPLOYMENT_PLURAL,
    DYNAMO_GRAPH_DEPLOYMENT_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_PLURAL,
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL,
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
    DYNAMO_MODEL_KIND,
    DYNAMO_MODEL_PLURAL,
    GROUP,
    MAX_COMPONENT_DEPLOYMENT_NAME_CHARS,
    MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS,
    MAX_GRAPH_AND_SERVICE_NAME_CHARS,
    MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS,
    MAX_NAME_CHARS,
    MAX_PVCS,
    MAX_SERVICES,
    MAX_VOLUME_MOUNTS,
    VERSION,
)

# Short aliases, as the Go code spells the kinds (DGD_KIND etc.).
DGD_KIND = DYNAMO_GRAPH_DEPLOYMENT_KIND
DGD_PLURAL = DYNAMO_GRAPH_DEPLOYMENT_PLURAL
DCD_KIND = DYNAMO_COMPONENT_DEPLOYMENT_KIND
DCD_PLURAL = DYNAMO_COMPONENT_DEPLOYMENT_PLURAL
DGDR_KIND = DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND
DGDR_PLURAL = DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL
DGDSA_KIND = DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND
DGDSA_PLURAL = DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL

if TYPE_CHECKING:
    from .models import *  # noqa: F403  (the models, typed; loaded at run time by __getattr__)


__getattr__ = models_on_first_use(__name__)


__all__ = [
    "API_VERSION",
    "DCD_KIND",
    "DCD_PLURAL",
    "DGDR_KIND",
    "DGDR_PLURAL",
    "DGDSA_KIND",
    "DGDSA_PLURAL",
    "DGD_KIND",
    "DGD_PLURAL",
    "DYNAMO_COMPONENT_DEPLOYMENT_KIND",
    "DYNAMO_COMPONENT_DEPLOYMENT_PLURAL",
    "DYNAMO_GRAPH_DEPLOYMENT_KIND",
    "DYNAMO_GRAPH_DEPLOYMENT_PLURAL",
    "DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND",
    "DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL",
    "DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND",
    "DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL",
    "DYNAMO_MODEL_KIND",
    "DYNAMO_MODEL_PLURAL",
    "GROUP",
    "IMMUTABLE_SPEC_STATES",
    "KINDS",
    "MAX_COMPONENT_DEPLOYMENT_NAME_CHARS",
    "MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS",
    "MAX_GRAPH_AND_SERVICE_NAME_CHARS",
    "MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PVCS",
    "MAX_SERVICES",
    "MAX_VOLUME_MOUNTS",
    "PVC",
    "VERSION",
    "ApiModel",
    "Autoscaling",
    "BackendFramework",
    "ComponentKind",
    "ConfigMapKeySelector",
    "DGDRState",
    "DeploymentOverridesSpec",
    "DeploymentStatus",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentExperimentalSpec",
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
    "EndpointPickerConfig",
    "ExtraPodMetadata",
    "ExtraPodSpec",
    "FailoverSpec",
    "FrontendSidecarSpec",
    "GPUMemoryServiceMode",
    "GPUMemoryServiceSpec",
    "IngressSpec",
    "IngressTLSSpec",
    "KvTransferPolicy",
    "ModelReference",
    "ModelSource",
    "ModelType",
    "MultinodeRoleSpec",
    "MultinodeSpec",
    "PersistentVolumeAccessMode",
    "ProfilingConfigSpec",
    "ProviderOverride",
    "ResourceItem",
    "Resources",
    "Restart",
    "RestartPhase",
    "RestartStatus",
    "RestartStrategy",
    "RestartStrategyType",
    "RollingUpdatePhase",
    "RollingUpdateStatus",
    "ScalingAdapter",
    "ServiceCheckpointConfig",
    "ServiceReplicaStatus",
    "SharedMemorySpec",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "VolumeMount",
]
