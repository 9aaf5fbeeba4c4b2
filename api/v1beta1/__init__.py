"""nvidia.com/v1beta1: pydantic models of the four kinds upstream serves in this version.

Same conventions as api/v1alpha1 (snake_case attributes, camelCase JSON, embedded Kubernetes types as
dicts). This release stores v1alpha1: v1beta1 is served and converted by the webhook
(`dynamo_operator.api.conversion`). DynamoModel has no v1beta1.
"""

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
from .groupversion import API_VERSION, VERSION
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
    "API_VERSION",
    "KINDS",
    "VERSION",
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
