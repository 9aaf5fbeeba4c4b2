"""nvidia.com/v1beta1: pydantic models of the four kinds upstream serves in this version.

Same conventions as api/v1alpha1 (snake_case attributes, camelCase JSON, embedded Kubernetes types as
dicts). Both versions are served, converted by the webhook (`dynamo_operator.api.conversion`).
DynamoModel has no v1beta1.
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

# The kinds stored as v1beta1: every kind of this version. The DGDR's controller keeps its lifecycle
# in fields v1beta1 holds (internal/dynamo/dgdr/stored.py), so its status writes lose nothing.
STORED: frozenset[str] = frozenset(
    {
        "DynamoComponentDeployment",
        "DynamoGraphDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
    }
)

__all__ = [
    "API_VERSION",
    "KINDS",
    "STORED",
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
