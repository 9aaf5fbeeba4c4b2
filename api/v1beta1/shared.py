"""The component spec v1beta1 shares between a graph's `components[]` and a DynamoComponentDeployment.

v1beta1 describes a component's pods with a Kubernetes `podTemplate` (the container named `main` is
the Dynamo runtime) where v1alpha1 had `resources`, `envs`, probes and `extraPodSpec`; preview
features (GPU memory service, failover, checkpoint, Grove scaling groups) live under `experimental`.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import Field

from ..v1alpha1.base import ApiModel
from ..v1alpha1.markers import Cel, K8sType, ListType, Schema
from .types import (
    AnyJson,
    DNSLabel,
    ItemRules,
    Quantity,
    RawObject,
    Replace,
    StringMap,
    TopologyDomain,
)

RUNTIME_VERSION_PATTERN = r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$"
COMPONENT_NAME = Schema(
    {"minLength": 1, "maxLength": 63, "pattern": "^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$"}
)
MAIN_CONTAINER = "main"


class ComponentType(enum.StrEnum):
    """A component's role in the graph; prefill and decode workers are roles of their own."""

    FRONTEND = "frontend"
    WORKER = "worker"
    PREFILL = "prefill"
    DECODE = "decode"
    PLANNER = "planner"
    EPP = "epp"


class CheckpointBackendFramework(enum.StrEnum):
    """The backend a checkpoint was taken with (upstream lists them in this order)."""

    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"


class GMSMode(enum.StrEnum):
    """Where GPU memory is shared: between containers of one pod, or between pods."""

    INTRA_POD = "IntraPod"
    INTER_POD = "InterPod"


class CheckpointMode(enum.StrEnum):
    AUTO = "Auto"
    MANUAL = "Manual"


class CheckpointDeletionPolicy(enum.StrEnum):
    DELETE = "Delete"
    RETAIN = "Retain"


class CheckpointStartupPolicy(enum.StrEnum):
    IMMEDIATE = "Immediate"
    WAIT_FOR_CHECKPOINT = "WaitForCheckpoint"


class ProviderOverride(ApiModel):
    """A sparse fragment of a workload provider's own schema (Grove), merged into what it generates."""

    api_version: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Group/version of the provider schema (Grove: grove.io/v1alpha1)."
    )
    target: str | None = Field(
        None, description="The provider kind or embedded schema; admission fills it in when unambiguous."
    )
    value: RawObject = Field(description="The fragment, in the provider's own field names.")


class MultinodeRole(ApiModel):
    """Settings of one role (leader or worker) of a multinode component."""

    provider_override: ProviderOverride | None = Field(
        None, description="Provider fragment for this role's generated template (DGD components only)."
    )


class MultinodeSpec(ApiModel):
    """A component spread over several nodes."""

    node_count: Annotated[int, Schema({"format": "int32", "minimum": 2})] = Field(
        2,
        description="Nodes per replica; the GPUs used are nodeCount times the main container's GPU request.",
    )


class GraphMultinodeSpec(MultinodeSpec):
    """A graph component spread over several nodes, with provider fragments per role."""

    leader: MultinodeRole | None = Field(None, description="The leader role.")
    worker: MultinodeRole | None = Field(None, description="The worker role.")


class ModelReference(ApiModel):
    """The model a component serves; a headless Service is made for endpoint discovery."""

    name: Annotated[str, Schema({"minLength": 1})] = Field(description="Base model identifier.")
    revision: str | None = Field(None, description="Model revision.")


class ScalingAdapter(ApiModel):
    """Present (even empty) to have a DynamoGraphDeploymentScalingAdapter own `replicas`."""


class EndpointPickerPlugin(ApiModel):
    """One plugin instance of the endpoint picker."""

    name: str | None = Field(None, description="Instance name; defaults to the type.")
    type: str = Field(description="Plugin type.")
    parameters: AnyJson = Field(None, description="Plugin parameters, any JSON.")


class SchedulingProfilePlugin(ApiModel):
    """A plugin used by a scheduling profile."""

    plugin_ref: str = Field(description="Name of a plugin instance.")
    weight: int | None = Field(None, description="Weight of a scorer.")


class SchedulingProfile(ApiModel):
    """A named set of plugins the picker runs."""

    name: str = Field(description="Profile name.")
    plugins: list[SchedulingProfilePlugin] = Field(description="Plugins of the profile.")


class SaturationDetector(ApiModel):
    """When the picker considers the pool saturated."""

    queue_depth_threshold: int | None = Field(None, description="Waiting-queue depth.")
    kv_cache_util_threshold: float | None = Field(None, description="KV cache utilisation, 0 to 1.")
    metrics_staleness_threshold: str | None = Field(None, description="Age after which metrics are stale.")


class EndpointPickerConfig(ApiModel):
    """The Gateway API inference extension's EndpointPickerConfig, given inline."""

    api_version: str | None = Field(None, description="Its apiVersion.")
    kind: str | None = Field(None, description="Its kind.")
    plugins: list[EndpointPickerPlugin] = Field(description="Plugin instances.")
    scheduling_profiles: list[SchedulingProfile] = Field(description="Scheduling profiles.")
    feature_gates: list[str] | None = Field(None, description="Feature gates of the picker.")
    saturation_detector: SaturationDetector | None = Field(None, description="Saturation settings.")


# core/v1 ConfigMapKeySelector with the markers of its Go type (atomic, name defaulting to "").
_CONFIG_MAP_KEY_SELECTOR: dict[str, Any] = {
    "type": "object",
    "required": ["key"],
    "x-kubernetes-map-type": "atomic",
    "properties": {
        "key": {"type": "string"},
        "name": {"type": "string", "default": ""},
        "optional": {"type": "boolean"},
    },
}


class EPPConfig(ApiModel):
    """Configuration of the endpoint picker component (type epp): a ConfigMap or inline."""

    __cel__ = (
        Cel(
            rule="has(self.configMapRef) != has(self.config)",
            message="exactly one of configMapRef or config must be specified",
        ),
    )

    config_map_ref: Annotated[dict[str, Any], Replace(_CONFIG_MAP_KEY_SELECTOR)] | None = Field(
        None, description="ConfigMap key holding the picker configuration."
    )
    config: Annotated[EndpointPickerConfig, Schema({"x-kubernetes-preserve-unknown-fields": True})] | None = (
        Field(None, description="The picker configuration, inline.")
    )


class CompilationCacheConfig(ApiModel):
    """A PVC the backend keeps its compilation cache in; the operator mounts and wires it."""

    pvc_name: Annotated[str, Schema({"minLength": 1})] = Field(description="A PVC in the graph's namespace.")
    mount_path: str | None = Field(None, description="Mount path; the backend's default when empty.")


class TopologyConstraint(ApiModel):
    """Topology packing of one component."""

    pack_domain: TopologyDomain = Field(
        description="Domain to pack the component's pods in; at most as wide as the graph's."
    )


class ExtraClientPod(ApiModel):
    """A pod that shares GPU memory with the engine across pods (reserved, not implemented)."""

    name: DNSLabel = Field(description="Name of the client pod.")
    pod_template: RawObject = Field(description="Its pod template.")


class GPUMemoryServiceSpec(ApiModel):
    """GPU memory service: GPU memory shared through DRA."""

    __cel__ = (
        Cel(
            rule="!has(self.extraClientContainers) || size(self.extraClientContainers) == 0"
            " || self.mode == 'IntraPod'",
            message="extraClientContainers is only supported with mode=IntraPod",
        ),
        Cel(
            rule="!has(self.extraClientPods) || size(self.extraClientPods) == 0 || self.mode == 'InterPod'",
            message="extraClientPods is only supported with mode=InterPod",
        ),
        Cel(
            rule="!has(self.extraClientPods) || size(self.extraClientPods) == 0",
            message="extraClientPods is reserved for inter-pod GMS and is not implemented yet",
        ),
    )

    mode: GMSMode = Field(GMSMode.INTRA_POD, description="IntraPod or InterPod.")
    device_class_name: str = Field("gpu.nvidia.com", description="DRA DeviceClass of the shared GPUs.")
    extra_client_containers: Annotated[list[DNSLabel], ListType("set")] | None = Field(
        None, description="Other containers of the pod that read the shared memory (IntraPod)."
    )
    extra_client_pods: Annotated[list[ExtraClientPod], ListType("map", ("name",))] | None = Field(
        None, description="Client pods (InterPod; reserved)."
    )


class FailoverSpec(ApiModel):
    """Standby engines that take over from a failed one (needs the GPU memory service)."""

    mode: GMSMode = Field(GMSMode.INTRA_POD, description="IntraPod or InterPod.")
    num_shadows: Annotated[int, Schema({"format": "int32", "minimum": 1, "maximum": 1})] = Field(
        1, description="Standby engines per active one."
    )


class CheckpointIdentity(ApiModel):
    """What makes two checkpoints interchangeable."""

    model: Annotated[str, Schema({"minLength": 1})] = Field(description="Model identifier.")
    backend_framework: CheckpointBackendFramework = Field(description="Backend the checkpoint is for.")
    dynamo_version: str | None = Field(None, description="Dynamo version.")
    tensor_parallel_size: Annotated[int, Schema({"format": "int32", "minimum": 1})] = Field(
        1, description="Tensor parallel size."
    )
    pipeline_parallel_size: Annotated[int, Schema({"format": "int32", "minimum": 1})] = Field(
        1, description="Pipeline parallel size."
    )
    dtype: str | None = Field(None, description="Data type.")
    max_model_len: Annotated[int, Schema({"format": "int32", "minimum": 1})] | None = Field(
        None, description="Maximum sequence length."
    )
    extra_parameters: StringMap | None = Field(None, description="Further identity parameters.")


class CheckpointJob(ApiModel):
    """The job that takes a checkpoint."""

    pod_template: RawObject | None = Field(None, description="Pod template of the checkpoint job.")
    gms_client_containers: Annotated[list[DNSLabel], ListType("set")] | None = Field(
        None, description="Containers of the job that are GPU memory service clients."
    )


class CheckpointSpec(ApiModel):
    """Snapshot and restore of the component's containers (not implemented by this operator)."""

    __cel__ = (
        Cel(
            rule="!has(self.job) || !has(self.checkpointRef) || size(self.checkpointRef) == 0",
            message="checkpoint.job cannot be set when checkpointRef is specified",
        ),
    )

    enabled: bool = Field(description="Turns checkpointing on.")
    mode: CheckpointMode | None = Field(None, description="Auto or Manual.")
    checkpoint_ref: str | None = Field(None, description="An existing DynamoCheckpoint to restore from.")
    identity: CheckpointIdentity | None = Field(None, description="Identity of the checkpoint to make.")
    job: CheckpointJob | None = Field(None, description="The checkpoint job.")
    deletion_policy: CheckpointDeletionPolicy = Field(
        CheckpointDeletionPolicy.DELETE, description="What happens to a graph-made checkpoint with the graph."
    )
    startup_policy: CheckpointStartupPolicy = Field(
        CheckpointStartupPolicy.IMMEDIATE, description="Start at once, or wait for the checkpoint."
    )
    target_container_name: DNSLabel = Field(MAIN_CONTAINER, description="Container that is checkpointed.")


class GroveSpec(ApiModel):
    """Grove-only settings."""

    force_scaling_group: bool | None = Field(
        None, description="Render the component as a PodCliqueScalingGroup even when single-node."
    )


class ExperimentalSpec(ApiModel):
    """Preview features whose shape may still change between v1beta1 releases."""

    gpu_memory_service: GPUMemoryServiceSpec | None = Field(None, description="GPU memory service.")
    failover: FailoverSpec | None = Field(None, description="Engine failover.")
    checkpoint: CheckpointSpec | None = Field(None, description="Checkpoint and restore.")
    grove: GroveSpec | None = Field(None, description="Grove-only settings.")


# PodTemplateSpec's metadata as the API keeps it in a template, with the bound and backend rule
# upstream puts on the annotations.
_POD_TEMPLATE_METADATA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "annotations": {
            "type": "object",
            "additionalProperties": {"type": "string", "maxLength": 262144},
            "x-kubernetes-validations": [
                {
                    "rule": '!("nvidia.com/vllm-distributed-executor-backend" in self)'
                    ' || self["nvidia.com/vllm-distributed-executor-backend"].lowerAscii() in ["mp", "ray"]',
                    "message": "podTemplate backend annotation must be mp or ray, case-insensitively",
                }
            ],
        },
        "finalizers": {"type": "array", "items": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "name": {"type": "string"},
        "namespace": {"type": "string"},
    },
}


class PodTemplate(ApiModel):
    """A Kubernetes PodTemplateSpec; the container named `main` runs the Dynamo component."""

    metadata: Annotated[dict[str, Any], Replace(_POD_TEMPLATE_METADATA)] | None = Field(
        None, description="Labels and annotations of the component's pods."
    )
    spec: (
        Annotated[
            dict[str, Any],
            K8sType("io.k8s.api.core.v1.PodSpec"),
            ItemRules(
                "containers",
                (
                    Cel(
                        rule='self.name == "main" || (has(self.image) && self.image != "")',
                        message="sidecar containers must specify a non-empty image",
                    ),
                ),
            ),
            ItemRules(
                "initContainers",
                (
                    Cel(
                        rule='has(self.image) && self.image != ""',
                        message="init containers must specify a non-empty image",
                    ),
                ),
            ),
        ]
        | None
    ) = Field(None, description="The pod spec; `main` gets the operator's defaults merged in.")


_SHARED_RULES = (
    Cel(
        rule="!has(self.eppConfig) || (has(self.type) && self.type == 'epp')",
        message="eppConfig may only be set when type is epp",
    ),
    Cel(
        rule="!has(self.minAvailable) || (has(self.replicas) && self.replicas == 0)"
        " || self.minAvailable <= (has(self.replicas) ? self.replicas : 1)",
        message="minAvailable must be less than or equal to replicas unless replicas is 0",
    ),
    Cel(
        rule="!has(oldSelf.minAvailable)"
        " || (has(self.minAvailable) && self.minAvailable == oldSelf.minAvailable)",
        message="minAvailable is immutable after creation",
    ),
)


class ComponentSpecBase(ApiModel):
    """The fields every component spec has, in a graph or in a DynamoComponentDeployment."""

    __cel__ = _SHARED_RULES

    name: Annotated[str, COMPONENT_NAME] | None = Field(
        None, description="Component name, unique in its graph (case-insensitively)."
    )
    type: ComponentType | None = Field(None, description="The component's role.")
    runtime_version_override: Annotated[str, Schema({"pattern": RUNTIME_VERSION_PATTERN})] | None = Field(
        None,
        description="Dynamo runtime version (MAJOR.MINOR.PATCH) of the main image, when its tag lacks it.",
    )
    global_dynamo_namespace: bool | None = Field(
        None, description="Put the component in the global Dynamo namespace, not the graph's own."
    )
    pod_template: PodTemplate | None = Field(None, description="The component's pods.")
    replicas: Annotated[int, Schema({"format": "int32", "minimum": 0})] | None = Field(
        None, description="Desired pods; owned by the scaling adapter when `scalingAdapter` is set."
    )
    min_available: Annotated[int, Schema({"format": "int32", "minimum": 1})] | None = Field(
        None, description="Gang-scheduling minimum (Grove only); immutable once set."
    )
    multinode: MultinodeSpec | None = Field(None, description="Spread each replica over several nodes.")
    shared_memory_size: Quantity | None = Field(None, description="Size of /dev/shm; 0 turns it off.")
    model_ref: ModelReference | None = Field(None, description="The model the component serves.")
    scaling_adapter: ScalingAdapter | None = Field(None, description="Scale through a scaling adapter.")
    epp_config: EPPConfig | None = Field(None, description="Endpoint picker configuration (type epp).")
    frontend_sidecar: str | None = Field(
        None, description="Name of a container of the pod template that runs a frontend sidecar."
    )
    compilation_cache: CompilationCacheConfig | None = Field(
        None, description="PVC-backed compilation cache."
    )
    topology_constraint: TopologyConstraint | None = Field(None, description="Topology packing.")
    experimental: ExperimentalSpec | None = Field(None, description="Preview features.")


class DynamoComponentDeploymentSharedSpec(ComponentSpecBase):
    """One component of a graph (`spec.components[]`)."""

    name: Annotated[str, COMPONENT_NAME] = Field(
        description="Component name, unique in its graph (case-insensitively)."
    )
    multinode: GraphMultinodeSpec | None = Field(None, description="Spread each replica over several nodes.")
    provider_override: ProviderOverride | None = Field(
        None, description="Provider fragment for this component's generated template."
    )
