"""DynamoComponentDeployment: one Dynamo component and the workload, Service and Ingress it yields."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from .base import ApiModel, Condition
from .enums import BackendFramework
from .graph import ServiceReplicaStatus
from .groupversion import (
    API_VERSION,
    DYNAMO_COMPONENT_DEPLOYMENT_KIND,
    DYNAMO_COMPONENT_DEPLOYMENT_PLURAL,
    MAX_COMPONENT_DEPLOYMENT_NAME_CHARS,
    MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS,
)
from .markers import Cel, CrdInfo, ListType, PrinterColumn, Schema
from .shared import DynamoComponentDeploymentSharedSpec


class DynamoComponentDeploymentSpec(DynamoComponentDeploymentSharedSpec):
    """Desired state of a component deployment: the shared component spec plus its backend."""

    # Upstream's standalone DCD schema leaves out the provider fragments (a graph's workload only).
    __crd_omit__ = ("providerOverride", "multinode.leader", "multinode.worker")

    __cel__ = (
        *DynamoComponentDeploymentSharedSpec.__cel__,
        Cel(
            rule="has(self.backendFramework) == has(oldSelf.backendFramework)"
            " && (!has(self.backendFramework) || self.backendFramework == oldSelf.backendFramework)",
            message="backendFramework is immutable",
            field_path=".backendFramework",
            reason="FieldValueForbidden",
        ),
    )

    backend_framework: BackendFramework | None = Field(
        None, description="Inference backend (sglang, vllm, trtllm). Immutable."
    )


class DynamoComponentDeploymentStatus(ApiModel):
    """Observed state of a component deployment."""

    observed_generation: Annotated[int, Schema({"format": "int64"})] | None = Field(
        None, description="Generation last reconciled."
    )
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None, description="Latest observations (Available, DynamoComponentReady), one per type."
    )
    pod_selector: dict[str, str] | None = Field(None, description="Labels selecting the component's Pods.")
    service: ServiceReplicaStatus | None = Field(
        None, description="Replica counts of the component's workload."
    )


class DynamoComponentDeployment(ApiModel):
    """One Dynamo component (usually created by a DynamoGraphDeployment) and its workload."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_COMPONENT_DEPLOYMENT_PLURAL,
        singular="dynamocomponentdeployment",
        short_names=("dcd",),
        printer_columns=(
            PrinterColumn("Component", ".spec.serviceName", description="Service name of the component"),
            PrinterColumn(
                "Available",
                '.status.conditions[?(@.type=="Available")].status',
                description="Available condition",
            ),
            PrinterColumn("Backend", ".spec.backendFramework", description="Backend framework"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )
    __cel__ = (
        Cel(
            rule=f"size(self.metadata.name) <= (has(self.spec.multinode) ? "
            f"{MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS} : {MAX_COMPONENT_DEPLOYMENT_NAME_CHARS})",
            message=f"metadata.name must be at most {MAX_COMPONENT_DEPLOYMENT_NAME_CHARS} characters "
            f"({MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS} for a multinode component) "
            "so that generated object names fit",
            reason="FieldValueInvalid",
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1alpha1")
    kind: str = Field(DYNAMO_COMPONENT_DEPLOYMENT_KIND, description="DynamoComponentDeployment")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoComponentDeploymentSpec = Field(description="Desired state of the component deployment.")
    status: DynamoComponentDeploymentStatus | None = Field(
        None, description="Observed state of the component deployment."
    )
