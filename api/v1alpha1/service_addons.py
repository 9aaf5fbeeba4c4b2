"""Optional additions to a service's pod: a frontend sidecar, the GPU Memory Service, failover engines.

Defaults are the ones upstream's CRD applies at admission, so the stored spec (and with it the worker
hash, which is taken over the stored spec) is the same under both operators. Design note:
docs/design/newer-service-fields.md.
"""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field

from .base import ApiModel, EnvVar, RawObject
from .markers import Cel, ListType, Schema

# The container name of the generated frontend sidecar (a user container may not take it).
FRONTEND_SIDECAR_CONTAINER_NAME = "sidecar-frontend"
DEFAULT_DEVICE_CLASS_NAME = "gpu.nvidia.com"


class GPUMemoryServiceMode(enum.StrEnum):
    """Where the GPU Memory Service runs: beside the engine in its pod (the only mode that runs today)."""

    INTRA_POD = "intraPod"
    INTER_POD = "interPod"


_NOT_INTER_POD = "!self.enabled || !has(self.mode) || self.mode != 'interPod'"
# A container or client pod name (DNS label).
_DNS_LABEL = Schema({"minLength": 1, "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"})


class FrontendSidecarSpec(ApiModel):
    """A frontend container added to the service's pods, configured like a frontend service's main
    container (command, ports, probes, Dynamo env) with the image and the overrides given here."""

    image: Annotated[str, Schema({"minLength": 1})] = Field(description="Image of the frontend sidecar.")
    args: list[str] | None = Field(
        None,
        description='Arguments replacing the default ["-m", "dynamo.frontend"] whole, e.g. '
        '["-m", "dynamo.frontend", "--router-mode", "direct"].',
    )
    env_from_secret: str | None = Field(
        None, description="Secret whose keys become environment variables of the sidecar."
    )
    envs: list[EnvVar] | None = Field(
        None, description="Environment variables of the sidecar; they win over the generated ones."
    )


class GMSClientPodSpec(ApiModel):
    """A further pod that reads the shared GPU memory (inter-pod GMS; reserved)."""

    name: Annotated[str, _DNS_LABEL] = Field(description="Name of the client pod.")
    pod_template: RawObject = Field(description="Pod template of the client pod.")


class GPUMemoryServiceSpec(ApiModel):
    """The GPU Memory Service (GMS): the GPUs of the pod are claimed once through Dynamic Resource
    Allocation and shared between the engine and a `gms-server` sidecar. Needs the resource.k8s.io API."""

    __cel__ = (
        Cel(
            rule=_NOT_INTER_POD,
            message='mode "interPod" is not supported yet',
            field_path=".mode",
            reason="FieldValueInvalid",
        ),
        # Upstream's rules on the client lists, as its schema words them.
        Cel(
            rule="!has(self.extraClientContainers) || size(self.extraClientContainers) == 0"
            " || self.mode == 'intraPod'",
            message="extraClientContainers is only supported with mode=intraPod",
        ),
        Cel(
            rule="!has(self.extraClientPods) || size(self.extraClientPods) == 0 || self.mode == 'interPod'",
            message="extraClientPods is only supported with mode=interPod",
        ),
        Cel(
            rule="!has(self.extraClientPods) || size(self.extraClientPods) == 0",
            message="extraClientPods is reserved for inter-pod GMS and is not implemented yet",
        ),
    )

    enabled: bool = Field(
        description="Run the GMS sidecar; the main container's nvidia.com/gpu resources become a shared "
        "DRA claim."
    )
    mode: GPUMemoryServiceMode = Field(GPUMemoryServiceMode.INTRA_POD, description="Where GMS runs.")
    device_class_name: str = Field(
        DEFAULT_DEVICE_CLASS_NAME, description="DRA DeviceClass the GPUs are requested from."
    )
    extra_client_containers: Annotated[list[Annotated[str, _DNS_LABEL]], ListType("set")] | None = Field(
        None,
        description="Further containers of the pod spec wired as GMS clients (intraPod only); each must "
        "name a container the pod spec declares.",
    )
    extra_client_pods: Annotated[list[GMSClientPodSpec], ListType("map", ("name",))] | None = Field(
        None, description="Client pods of an inter-pod GMS; reserved upstream, refused for now."
    )


class FailoverSpec(ApiModel):
    """Active/standby engines in one pod: the main container is cloned into `engine-0` and `engine-1`,
    which share the GPUs through the GPU Memory Service; the standby takes over when the active fails."""

    __cel__ = (
        Cel(
            rule=_NOT_INTER_POD,
            message='mode "interPod" is not supported yet',
            field_path=".mode",
            reason="FieldValueInvalid",
        ),
    )

    enabled: bool = Field(description="Clone the main container into an active and a standby engine.")
    mode: GPUMemoryServiceMode = Field(
        GPUMemoryServiceMode.INTRA_POD, description="Must match gpuMemoryService.mode."
    )
    num_shadows: Annotated[int, Schema({"format": "int32"})] = Field(
        1, ge=1, le=1, description="Standby engines per active one (exactly 1 for now)."
    )


# Cross-field rules of a service spec that uses these fields (DynamoComponentDeploymentSharedSpec).
_GMS_ON = "(has(self.gpuMemoryService) && self.gpuMemoryService.enabled)"
_FAILOVER_ON = "(has(self.failover) && self.failover.enabled)"
_LIMIT_GPU = "has(self.resources.limits) && has(self.resources.limits.gpu) && self.resources.limits.gpu != ''"
_REQUEST_GPU = (
    "has(self.resources.requests) && has(self.resources.requests.gpu) && self.resources.requests.gpu != ''"
)

ADDON_RULES: tuple[Cel, ...] = (
    Cel(
        rule=f"!{_FAILOVER_ON} || {_GMS_ON}",
        message="failover requires gpuMemoryService.enabled to be true",
        field_path=".failover",
        reason="FieldValueInvalid",
    ),
    Cel(
        rule=f"!({_FAILOVER_ON} && {_GMS_ON}) || self.failover.mode == self.gpuMemoryService.mode",
        message="failover.mode must match gpuMemoryService.mode",
        field_path=".failover.mode",
        reason="FieldValueInvalid",
    ),
    Cel(
        rule=f"!{_GMS_ON} || (has(self.componentType)"
        " && self.componentType in ['worker', 'prefill', 'decode'])",
        message="gpuMemoryService is only supported for worker components (componentType worker, "
        "prefill or decode)",
        field_path=".gpuMemoryService",
        reason="FieldValueInvalid",
    ),
    Cel(
        # The GPU count the DRA claim asks for: limits.gpu, else requests.gpu (as upstream reads it).
        # That it is a whole number is checked at reconcile time: a regex here exceeds the CEL cost
        # budget (the quantity strings have no maximum length).
        rule=f"!{_GMS_ON} || (has(self.resources) && (({_LIMIT_GPU}) || ({_REQUEST_GPU})))",
        message="gpuMemoryService requires a GPU count in resources.limits.gpu (or resources.requests.gpu)",
        field_path=".resources",
        reason="FieldValueRequired",
    ),
)
# Not a CEL rule (a scan of extraPodSpec.containers exceeds the cost budget; PodSpec lists are
# unbounded): a user container named like the sidecar is reported at reconcile time.
