"""Small types shared by the component spec and the graph spec: resources, volumes, ingress, scaling."""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field

from .base import (
    ApiModel,
    HorizontalPodAutoscalerBehavior,
    MetricSpec,
    Quantity,
    ResourceClaim,
)
from .markers import Cel, ListType, Schema
from .topology import ProviderOverride

StringMap = dict[str, str]


class PersistentVolumeAccessMode(enum.StrEnum):
    """Access modes a created PVC may ask for."""

    READ_WRITE_ONCE = "ReadWriteOnce"
    READ_ONLY_MANY = "ReadOnlyMany"
    READ_WRITE_MANY = "ReadWriteMany"
    READ_WRITE_ONCE_POD = "ReadWriteOncePod"


class Autoscaling(ApiModel):
    """Deprecated and ignored: scale through a DynamoGraphDeploymentScalingAdapter (HPA, KEDA, Planner)."""

    enabled: bool | None = Field(None, description="Deprecated, ignored.")
    min_replicas: int | None = Field(None, description="Deprecated, ignored.")
    max_replicas: int | None = Field(None, description="Deprecated, ignored.")
    behavior: HorizontalPodAutoscalerBehavior | None = Field(None, description="Deprecated, ignored.")
    metrics: list[MetricSpec] | None = Field(None, description="Deprecated, ignored.")


class ResourceItem(ApiModel):
    """Amounts of CPU, memory, GPUs and custom resources for one side (requests or limits)."""

    cpu: str | None = Field(None, description='CPU amount, for example "500m" or "2".')
    memory: str | None = Field(None, description='Memory amount, for example "4Gi".')
    gpu: str | None = Field(
        None,
        description="Number of GPUs. For multinode components this is per node: total = nodeCount * gpu.",
    )
    gpu_type: str | None = Field(
        None, description='Resource name used for the GPU count; "nvidia.com/gpu" when empty.'
    )
    custom: StringMap | None = Field(
        None, description="Any further resource names and amounts (extended resources such as NICs)."
    )


class Resources(ApiModel):
    """Requests and limits of a component: CPU, memory, GPUs, custom resources and DRA claims."""

    requests: ResourceItem | None = Field(None, description="Minimum resources the component needs.")
    limits: ResourceItem | None = Field(None, description="Maximum resources the component may use.")
    claims: Annotated[list[ResourceClaim], ListType("map", ("name",))] | None = Field(
        None, description="Dynamic resource allocation claims the main container uses."
    )


class VolumeMount(ApiModel):
    """Mounts one of the graph's declared PVCs (spec.pvcs) into the component."""

    __cel__ = (
        Cel(
            rule="(has(self.useAsCompilationCache) && self.useAsCompilationCache)"
            " || (has(self.mountPoint) && size(self.mountPoint) > 0)",
            message="mountPoint is required unless useAsCompilationCache is true",
            field_path=".mountPoint",
            reason="FieldValueRequired",
        ),
    )

    name: Annotated[str, Schema({"minLength": 1, "maxLength": 253})] = Field(
        description="Name of a PVC declared in the graph's spec.pvcs (used as the claim name)."
    )
    mount_point: Annotated[str, Schema({"maxLength": 4096})] | None = Field(
        None,
        description="Path to mount the volume at. May be omitted for a compilation cache "
        "(a backend-specific default path is used then).",
    )
    use_as_compilation_cache: bool = Field(
        False,
        description="Use this volume as the backend's compilation cache "
        "(sets the backend's cache environment variables).",
    )


class PVC(ApiModel):
    """A persistent volume claim the graph uses, optionally created by the operator."""

    __cel__ = tuple(
        Cel(
            rule=f"!(has(self.create) && self.create) || has(self.{name})",
            message=f"{name} is required when create is true",
            field_path=f".{name}",
            reason="FieldValueRequired",
        )
        for name in ("storageClass", "size", "volumeAccessMode")
    )

    create: bool | None = Field(
        None, description="Create the PVC (owned by the graph) instead of using an existing one."
    )
    name: Annotated[str, Schema({"minLength": 1, "maxLength": 253})] = Field(
        description="Name of the PVC; volume mounts refer to it."
    )
    storage_class: Annotated[str, Schema({"maxLength": 253})] | None = Field(
        None, description="Storage class of the created PVC. Required when create is true."
    )
    size: Quantity | None = Field(
        None, description="Requested size of the created PVC. Required when create is true."
    )
    volume_access_mode: PersistentVolumeAccessMode | None = Field(
        None, description="Access mode of the created PVC. Required when create is true."
    )


class IngressTLSSpec(ApiModel):
    """TLS settings of the generated Ingress or VirtualService."""

    secret_name: str | None = Field(None, description="Secret holding the TLS certificate and key.")


class IngressSpec(ApiModel):
    """How a component is exposed outside the cluster: an Ingress or a service-mesh VirtualService."""

    __cel__ = (
        Cel(
            rule="!(has(self.enabled) && self.enabled) || (has(self.host) && size(self.host) > 0)",
            message="host is required when ingress is enabled",
            field_path=".host",
            reason="FieldValueRequired",
        ),
    )

    enabled: bool | None = Field(
        None, description="Expose the component through an Ingress or VirtualService."
    )
    host: str | None = Field(
        None, description="Base host name; the full host is hostPrefix + host + '.' + hostSuffix."
    )
    use_virtual_service: bool | None = Field(
        None, description="Create a service-mesh VirtualService instead of an Ingress."
    )
    virtual_service_gateway: str | None = Field(None, description="Gateway the VirtualService attaches to.")
    host_prefix: str | None = Field(None, description="Prefix put before the host.")
    annotations: StringMap | None = Field(
        None, description="Annotations for the generated Ingress/VirtualService."
    )
    labels: StringMap | None = Field(None, description="Labels for the generated Ingress/VirtualService.")
    tls: IngressTLSSpec | None = Field(None, description="TLS settings.")
    host_suffix: str | None = Field(None, description='Suffix appended after the host ("local" when empty).')
    ingress_controller_class_name: str | None = Field(
        None, description='Ingress class to use, for example "nginx".'
    )


class ModelReference(ApiModel):
    """The model a component serves; a headless Service is created so the model's endpoints can be found."""

    name: Annotated[str, Schema({"minLength": 1})] = Field(
        description='Base model identifier, e.g. "llama-3-70b-instruct-v1".'
    )
    revision: str | None = Field(None, description="Model revision (optional).")


class SharedMemorySpec(ApiModel):
    """The tmpfs mounted at /dev/shm (8Gi by default)."""

    __cel__ = (
        Cel(
            rule="!(has(self.disabled) && self.disabled) || !has(self.size)",
            message="size must not be set when shared memory is disabled",
            field_path=".size",
            reason="FieldValueForbidden",
        ),
        Cel(
            rule="(has(self.disabled) && self.disabled) || has(self.size)",
            message="size is required when shared memory is enabled",
            field_path=".size",
            reason="FieldValueRequired",
        ),
    )

    disabled: bool | None = Field(None, description="Do not mount shared memory.")
    size: Quantity | None = Field(None, description="Size of the /dev/shm tmpfs, for example 16Gi.")


class ExtraPodMetadata(ApiModel):
    """Labels and annotations added to the component's Pods."""

    annotations: StringMap | None = Field(None, description="Annotations added to the Pods.")
    labels: StringMap | None = Field(None, description="Labels added to the Pods.")


class MultinodeRoleSpec(ApiModel):
    """Settings of one role (leader or worker) of a graph's multinode service."""

    provider_override: ProviderOverride | None = Field(
        None, description="Provider fragment for the template generated for this role (Grove)."
    )


class MultinodeSpec(ApiModel):
    """Spreads each replica of a component over several nodes."""

    node_count: Annotated[int, Schema({"format": "int32"})] = Field(
        2, ge=2, description="Nodes per replica (at least 2). Total GPUs = nodeCount * GPU limit."
    )
    leader: MultinodeRoleSpec | None = Field(None, description="The leader role (graph services only).")
    worker: MultinodeRoleSpec | None = Field(None, description="The worker role (graph services only).")


class ScalingAdapter(ApiModel):
    """Hands a service's replica count to a DynamoGraphDeploymentScalingAdapter (scale subresource)."""

    enabled: bool = Field(
        False,
        description="Create a scaling adapter that owns this service's replicas; "
        "autoscalers then scale the adapter, and direct replica edits are refused.",
    )
