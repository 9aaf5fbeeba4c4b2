"""nvidia.com/v1alpha1: pydantic models of the five Dynamo kinds and their shared types.

Attributes are snake_case, JSON names camelCase; dump with `model_dump(by_alias=True, exclude_none=True)`
(or `.to_dict()`). Embedded Kubernetes types (PodSpec, Container, Probe, EnvVar, Condition, ...) are dicts.
"""

from .base import ApiModel
from .checkpoint import ServiceCheckpointConfig
from .common import (
    PVC,
    Autoscaling,
    ExtraPodMetadata,
    IngressSpec,
    IngressTLSSpec,
    ModelReference,
    MultinodeRoleSpec,
    MultinodeSpec,
    PersistentVolumeAccessMode,
    ResourceItem,
    Resources,
    ScalingAdapter,
    SharedMemorySpec,
    VolumeMount,
)
from .component import (
    DynamoComponentDeployment,
    DynamoComponentDeploymentSpec,
    DynamoComponentDeploymentStatus,
)
from .epp import EndpointPickerConfig, EPPConfig
from .graph import (
    BackendFramework,
    ComponentKind,
    DynamoGraphDeployment,
    DynamoGraphDeploymentSpec,
    DynamoGraphDeploymentStatus,
    Restart,
    RestartPhase,
    RestartStatus,
    RestartStrategy,
    RestartStrategyType,
    RollingUpdatePhase,
    RollingUpdateStatus,
    ServiceReplicaStatus,
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
from .model import DynamoModel, DynamoModelSpec, DynamoModelStatus, EndpointInfo, ModelSource, ModelType
from .request import (
    IMMUTABLE_SPEC_STATES,
    ConfigMapKeySelector,
    DeploymentOverridesSpec,
    DeploymentStatus,
    DGDRState,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentRequestSpec,
    DynamoGraphDeploymentRequestStatus,
    ProfilingConfigSpec,
)
from .scaling_adapter import (
    DynamoGraphDeploymentScalingAdapter,
    DynamoGraphDeploymentScalingAdapterSpec,
    DynamoGraphDeploymentScalingAdapterStatus,
    DynamoGraphDeploymentServiceRef,
)
from .service_addons import FailoverSpec, FrontendSidecarSpec, GPUMemoryServiceMode, GPUMemoryServiceSpec
from .shared import DynamoComponentDeploymentSharedSpec, ExtraPodSpec
from .topology import (
    DynamoGraphDeploymentExperimentalSpec,
    KvTransferPolicy,
    ProviderOverride,
    SpecTopologyConstraint,
    TopologyConstraint,
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

# The five top-level kinds, in the order the CRDs are generated.
KINDS: tuple[type[ApiModel], ...] = (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)

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
