"""DynamoGraphDeploymentScalingAdapter, nvidia.com/v1beta1: the scale subresource of one component.

The v1beta1 shape is v1alpha1's with the graph's `services` renamed `components`: the reference
names a `componentName` where v1alpha1 named a `serviceName`. `status.replicas` is required, as
upstream has it.

One field is this operator's, not upstream's: `status.conditions` (the adapter's Ready condition,
which v1alpha1 carries here too). Without it a v1alpha1 status would lose its conditions on the way
through v1beta1, and the operator could not write them once v1beta1 is stored.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from ..v1alpha1.base import ApiModel, Condition, Time
from ..v1alpha1.groupversion import (
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
)
from ..v1alpha1.markers import CrdInfo, ListType, PrinterColumn, ScaleSubresource, Schema
from .groupversion import API_VERSION

Int32 = Annotated[int, Schema({"format": "int32"})]


class DynamoGraphDeploymentComponentRef(ApiModel):
    """One component of a DynamoGraphDeployment in the adapter's own namespace."""

    name: Annotated[str, Schema({"minLength": 1})] = Field(
        description="metadata.name of the DynamoGraphDeployment."
    )
    component_name: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Name of the entry of the graph's spec.components that this adapter scales."
    )


class DynamoGraphDeploymentScalingAdapterSpec(ApiModel):
    """How many replicas the referenced component should run."""

    replicas: Int32 = Field(
        ge=0,
        description="Wanted replicas of the component. Autoscalers (HPA, KEDA, the Planner) or people "
        "set it, usually through the scale subresource.",
    )
    dgd_ref: DynamoGraphDeploymentComponentRef = Field(description="The graph and component being scaled.")


class DynamoGraphDeploymentScalingAdapterStatus(ApiModel):
    """What the adapter last saw of its component; the scale subresource reads replicas and selector."""

    replicas: Int32 = Field(description="Replicas the component has now, as its graph reports them.")
    selector: str | None = Field(
        None, description="Label selector of the component's pods, so an HPA can average their metrics."
    )
    last_scale_time: Time | None = Field(
        None, description="When the adapter last changed the component's replicas."
    )
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None,
        description="This operator's addition: Ready is True while the adapter drives its component, "
        "False with reason GraphNotFound, ServiceNotFound or AdapterDisabled and a message saying what "
        "to fix.",
    )


class DynamoGraphDeploymentScalingAdapter(ApiModel):
    """Lets HPA, KEDA or the Planner scale one component of a DynamoGraphDeployment through the
    Kubernetes scale subresource.

    Only the adapter's controller writes the component's replicas into the graph, so several
    autoscalers never fight over them.
    """

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
        singular="dynamographdeploymentscalingadapter",
        short_names=("dgdsa",),
        printer_columns=(
            PrinterColumn("DGD", ".spec.dgdRef.name", description="DynamoGraphDeployment"),
            PrinterColumn("Component", ".spec.dgdRef.componentName", description="Component"),
            PrinterColumn("Replicas", ".status.replicas", type="integer", description="Current replicas"),
            PrinterColumn(
                "Ready", '.status.conditions[?(@.type=="Ready")].status', description="Ready condition"
            ),
            PrinterColumn(
                "Reason", '.status.conditions[?(@.type=="Ready")].reason', description="Why (not) Ready"
            ),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
        scale=ScaleSubresource(".spec.replicas", ".status.replicas", ".status.selector"),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1beta1")
    kind: str = Field(
        DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND, description="DynamoGraphDeploymentScalingAdapter"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentScalingAdapterSpec = Field(description="Wanted replicas and the component.")
    status: DynamoGraphDeploymentScalingAdapterStatus | None = Field(
        None, description="Observed replicas and readiness."
    )
