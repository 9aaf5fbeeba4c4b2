"""Every pydantic model of nvidia.com/v1alpha1, loaded by the package on first use (see its __init__)."""

from __future__ import annotations

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
    ComponentKind,
    DynamoGraphDeployment,
    DynamoGraphDeploymentSpec,
    DynamoGraphDeploymentStatus,
    Restart,
    RestartStatus,
    RestartStrategy,
    RollingUpdateStatus,
    ServiceReplicaStatus,
)
from .model import DynamoModel, DynamoModelSpec, DynamoModelStatus, EndpointInfo, ModelSource
from .request import (
    ConfigMapKeySelector,
    DeploymentOverridesSpec,
    DeploymentStatus,
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

# The five top-level kinds, in the order the CRDs are generated.
KINDS: tuple[type[ApiModel], ...] = (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
    DynamoModel,
)

__all__ = [
    "KINDS",
    "PVC",
    "ApiModel",
    "Autoscaling",
    "ComponentKind",
    "ConfigMapKeySelector",
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
    "MultinodeRoleSpec",
    "MultinodeSpec",
    "PersistentVolumeAccessMode",
    "ProfilingConfigSpec",
    "ProviderOverride",
    "ResourceItem",
    "Resources",
    "Restart",
    "RestartStatus",
    "RestartStrategy",
    "RollingUpdateStatus",
    "ScalingAdapter",
    "ServiceCheckpointConfig",
    "ServiceReplicaStatus",
    "SharedMemorySpec",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "VolumeMount",
]
