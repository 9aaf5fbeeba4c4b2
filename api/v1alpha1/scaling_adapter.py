"""DynamoGraphDeploymentScalingAdapter: a scale subresource for one service of a graph."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from .base import ApiModel, Condition, Time
from .groupversion import (
    API_VERSION,
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
)
from .markers import CrdInfo, ListType, PrinterColumn, ScaleSubresource, Schema


class DynamoGraphDeploymentServiceRef(ApiModel):
    """A service of a DynamoGraphDeployment in the adapter's namespace."""

    name: Annotated[str, Schema({"minLength": 1})] = Field(description="Name of the DynamoGraphDeployment.")
    service_name: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Key of the service in the graph's spec.services."
    )


class DynamoGraphDeploymentScalingAdapterSpec(ApiModel):
    """Desired replicas of the referenced service."""

    replicas: Annotated[int, Schema({"format": "int32"})] = Field(
        ge=0,
        description="Desired replicas of the service; written by autoscalers (HPA, KEDA, Planner) or users.",
    )
    dgd_ref: DynamoGraphDeploymentServiceRef = Field(description="The graph and service this adapter scales.")


class DynamoGraphDeploymentScalingAdapterStatus(ApiModel):
    """Observed replicas and pod selector (read through the scale subresource), and whether the adapter
    can drive its service."""

    replicas: Annotated[int, Schema({"format": "int32"})] | None = Field(
        None, description="Current replicas of the service (mirrors the graph)."
    )
    selector: str | None = Field(None, description="Label selector of the service's Pods (for HPA).")
    last_scale_time: Time | None = Field(
        None, description="When the adapter last changed the service's replicas."
    )
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None,
        description="Ready: True while the adapter drives its service; False with reason GraphNotFound,"
        " ServiceNotFound or AdapterDisabled (the service lacks scalingAdapter.enabled) and a message"
        " saying what to fix.",
    )


class DynamoGraphDeploymentScalingAdapter(ApiModel):
    """Scales one service of a DynamoGraphDeployment through the Kubernetes scale subresource.

    Only the adapter controller writes the service's replicas, so autoscalers never fight over them.
    """

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
        singular="dynamographdeploymentscalingadapter",
        short_names=("dgdsa",),
        printer_columns=(
            PrinterColumn("DGD", ".spec.dgdRef.name", description="DynamoGraphDeployment"),
            PrinterColumn("Service", ".spec.dgdRef.serviceName", description="Service"),
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

    api_version: str = Field(API_VERSION, description="nvidia.com/v1alpha1")
    kind: str = Field(
        DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND, description="DynamoGraphDeploymentScalingAdapter"
    )
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentScalingAdapterSpec = Field(description="Desired replicas and target service.")
    status: DynamoGraphDeploymentScalingAdapterStatus | None = Field(None, description="Observed replicas.")
