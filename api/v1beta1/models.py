"""Every pydantic model of nvidia.com/v1beta1, loaded by the package on first use (see its __init__)."""

from __future__ import annotations

from ..v1alpha1.base import ApiModel
from .component import (
    DynamoComponentDeployment,
    DynamoComponentDeploymentSpec,
    DynamoComponentDeploymentStatus,
)
from .graph import (
    ComponentReplicaStatus,
    DynamoGraphDeployment,
    DynamoGraphDeploymentSpec,
    DynamoGraphDeploymentStatus,
)
from .request import DynamoGraphDeploymentRequest
from .scaling_adapter import DynamoGraphDeploymentScalingAdapter
from .shared import ComponentType, DynamoComponentDeploymentSharedSpec

# The top-level kinds of this version; each gets a version entry in its kind's CRD.
KINDS: tuple[type[ApiModel], ...] = (
    DynamoComponentDeployment,
    DynamoGraphDeployment,
    DynamoGraphDeploymentRequest,
    DynamoGraphDeploymentScalingAdapter,
)


__all__ = [
    "KINDS",
    "ComponentReplicaStatus",
    "ComponentType",
    "DynamoComponentDeployment",
    "DynamoComponentDeploymentSharedSpec",
    "DynamoComponentDeploymentSpec",
    "DynamoComponentDeploymentStatus",
    "DynamoGraphDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentScalingAdapter",
    "DynamoGraphDeploymentSpec",
    "DynamoGraphDeploymentStatus",
]
