"""DynamoComponentDeployment, nvidia.com/v1beta1: one component, usually made by its graph."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from ..v1alpha1.base import ApiModel
from ..v1alpha1.enums import BackendFramework
from ..v1alpha1.groupversion import DYNAMO_COMPONENT_DEPLOYMENT_KIND, DYNAMO_COMPONENT_DEPLOYMENT_PLURAL
from ..v1alpha1.markers import CrdInfo, PrinterColumn
from .graph import ComponentReplicaStatus
from .groupversion import API_VERSION
from .shared import ComponentSpecBase
from .types import Conditions, Int64


class DynamoComponentDeploymentSpec(ComponentSpecBase):
    """The desired component: a graph component's spec plus the graph's backend."""

    backend_framework: BackendFramework | None = Field(None, description="Inference backend.")


class DynamoComponentDeploymentStatus(ApiModel):
    """What the operator observed of the component."""

    observed_generation: Int64 | None = Field(None, description="Generation last acted on.")
    conditions: Conditions | None = Field(None, description="Conditions (Available).")
    component: ComponentReplicaStatus | None = Field(
        None, description="Replicas of the component's workload."
    )


class DynamoComponentDeployment(ApiModel):
    """One Dynamo component (nvidia.com/v1beta1)."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_COMPONENT_DEPLOYMENT_PLURAL,
        singular="dynamocomponentdeployment",
        short_names=("dcd",),
        printer_columns=(
            PrinterColumn(
                "Available",
                ".status.conditions[?(@.type=='Available')].status",
                description="Available condition",
            ),
            PrinterColumn("Backend", ".spec.backendFramework", description="Inference backend"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1beta1")
    kind: str = Field(DYNAMO_COMPONENT_DEPLOYMENT_KIND, description="DynamoComponentDeployment")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoComponentDeploymentSpec = Field(description="The desired component.")
    status: DynamoComponentDeploymentStatus | None = Field(None, description="What the operator observed.")
