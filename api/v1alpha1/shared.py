"""The component spec shared by every `spec.services[x]` of a graph and by a DynamoComponentDeployment.

The provider fragments (`providerOverride`, and `multinode.leader` / `multinode.worker`) apply to a
graph's generated workload only: upstream's schema of a standalone DynamoComponentDeployment leaves
them out, and so does ours (`DynamoComponentDeploymentSpec.__crd_omit__`). The model keeps one shape
for both, so a DCD spec reads as a service spec wherever generation takes one.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from .base import ApiModel, Container, EnvVar, Probe
from .checkpoint import ServiceCheckpointConfig
from .common import (
    Autoscaling,
    ExtraPodMetadata,
    IngressSpec,
    ModelReference,
    MultinodeSpec,
    Resources,
    ScalingAdapter,
    SharedMemorySpec,
    StringMap,
    VolumeMount,
)
from .epp import EPPConfig
from .groupversion import MAX_VOLUME_MOUNTS
from .markers import Cel, K8sType, Schema
from .service_addons import ADDON_RULES, FailoverSpec, FrontendSidecarSpec, GPUMemoryServiceSpec
from .topology import ProviderOverride, TopologyConstraint

# MAJOR.MINOR.PATCH, each part without leading zeros and at most four digits.
RUNTIME_VERSION_PATTERN = r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$"


class ExtraPodSpec(ApiModel):
    """A PodSpec merged over the generated one, plus `mainContainer` merged over the main container.

    PodSpec fields stay in the model's extras (`model_extra`), as plain dicts.
    """

    # PodSpec fields are kept verbatim; only mainContainer is typed here.
    model_config = ConfigDict(extra="allow")
    # The CRD schema is PodSpec (containers optional, the operator supplies the main one) + mainContainer.
    __k8s_base__ = K8sType("io.k8s.api.core.v1.PodSpec", drop_required=("containers",))

    main_container: Container | None = Field(
        None, description="Container fields merged over the generated main container (image, args, env, ...)."
    )

    def pod_spec(self) -> dict[str, Any]:
        """The PodSpec part (everything except mainContainer), camelCase keys as written by the user."""
        return dict(self.model_extra or {})


_EPP = "has(self.componentType) && self.componentType == 'epp'"

# Upstream's rules on minAvailable, as its schema words them.
MIN_AVAILABLE_RULES = (
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


class DynamoComponentDeploymentSharedSpec(ApiModel):
    """Desired state of one component (a graph service or a standalone component deployment)."""

    __cel__: ClassVar[tuple[Cel, ...]] = (
        Cel(
            rule=f"!({_EPP}) || has(self.eppConfig)",
            message="eppConfig is required for an epp component",
            field_path=".eppConfig",
            reason="FieldValueRequired",
        ),
        Cel(
            rule=f"!({_EPP}) || !has(self.multinode)",
            message="an epp component cannot be multinode",
            field_path=".multinode",
            reason="FieldValueForbidden",
        ),
        Cel(
            rule=f"!({_EPP}) || !has(self.replicas) || self.replicas == 1",
            message="an epp component must have exactly 1 replica",
            field_path=".replicas",
            reason="FieldValueInvalid",
        ),
        *ADDON_RULES,
        *MIN_AVAILABLE_RULES,
    )

    provider_override: ProviderOverride | None = Field(
        None,
        description="Provider fragment for this service's generated unit (Grove); graph services only.",
    )
    annotations: StringMap | None = Field(
        None,
        description="Annotations for the generated resources (Pod, Service, Ingress); some tune behaviour.",
    )
    labels: StringMap | None = Field(None, description="Labels for the generated resources.")
    service_name: str | None = Field(
        None, description="Name of the component (set from the graph's services key)."
    )
    component_type: str | None = Field(
        None, description="Role of the component: frontend, worker, prefill, decode, planner, epp, main."
    )
    sub_component_type: str | None = Field(None, description='Sub-role of the component, e.g. "prefill".')
    runtime_version_override: Annotated[str, Schema({"pattern": RUNTIME_VERSION_PATTERN})] | None = Field(
        None,
        description="Dynamo runtime version (MAJOR.MINOR.PATCH) of the main image, for an image whose "
        "tag does not say it. It does not change the image.",
    )
    dynamo_namespace: str | None = Field(
        None,
        description="Deprecated, ignored: the Dynamo namespace derives from the namespace and graph name.",
    )
    global_dynamo_namespace: bool | None = Field(
        None, description="Place the component in the global Dynamo namespace."
    )
    resources: Resources | None = Field(
        None, description="CPU, memory, GPU and custom resource requests and limits of the component."
    )
    autoscaling: Autoscaling | None = Field(
        None, description="Deprecated and ignored: use a DynamoGraphDeploymentScalingAdapter instead."
    )
    envs: list[EnvVar] | None = Field(
        None, description="Extra environment variables for the component's containers."
    )
    env_from_secret: str | None = Field(
        None, description="Secret whose keys become environment variables of the main container."
    )
    volume_mounts: Annotated[list[VolumeMount], Schema({"maxItems": MAX_VOLUME_MOUNTS})] | None = Field(
        None, description="Graph PVCs (spec.pvcs) mounted into the component."
    )
    ingress: IngressSpec | None = Field(
        None, description="Exposure outside the cluster (Ingress or VirtualService)."
    )
    model_ref: ModelReference | None = Field(
        None, description="Model this component serves; a headless Service is created for endpoint discovery."
    )
    shared_memory: SharedMemorySpec | None = Field(
        None, description="The /dev/shm tmpfs: disable it or set its size."
    )
    extra_pod_metadata: ExtraPodMetadata | None = Field(
        None, description="Labels and annotations for the Pods."
    )
    extra_pod_spec: ExtraPodSpec | None = Field(
        None,
        description="A Kubernetes PodSpec merged over the generated pod spec, plus mainContainer "
        "(a Kubernetes Container) merged over the main container.",
    )
    liveness_probe: Probe | None = Field(None, description="Liveness probe; replaces the default one.")
    readiness_probe: Probe | None = Field(None, description="Readiness probe; replaces the default one.")
    replicas: Annotated[int, Schema({"format": "int32"})] | None = Field(
        None,
        ge=0,
        description="Desired number of Pods (of leader/worker groups for multinode). "
        "Owned by the scaling adapter when scalingAdapter.enabled is true.",
    )
    min_available: Annotated[int, Schema({"format": "int32", "minimum": 1})] | None = Field(
        None,
        description="Replicas Grove schedules as one gang and keeps, below which it ends the gang "
        "(Grove pathway only; 1 when left out there). Immutable once set.",
    )
    multinode: MultinodeSpec | None = Field(None, description="Multinode settings; absent means single-node.")
    scaling_adapter: ScalingAdapter | None = Field(
        None,
        description="Let a DynamoGraphDeploymentScalingAdapter own the replicas (for HPA, KEDA, Planner).",
    )
    epp_config: EPPConfig | None = Field(
        None, description='Endpoint Picker Plugin configuration; only for componentType "epp".'
    )
    frontend_sidecar: FrontendSidecarSpec | None = Field(
        None,
        description="A frontend container added to every pod of this component (e.g. for the Gateway "
        "API Inference Extension), configured like a frontend service.",
    )
    checkpoint: ServiceCheckpointConfig | None = Field(
        None, description="Checkpoint and restore of the component (not implemented by this operator)."
    )
    topology_constraint: TopologyConstraint | None = Field(
        None, description="Topology packing of the component's pods (not implemented by this operator)."
    )
    gpu_memory_service: GPUMemoryServiceSpec | None = Field(
        None,
        description="GPU Memory Service sidecar; the GPUs are shared through a DRA claim "
        "(needs resource.k8s.io).",
    )
    failover: FailoverSpec | None = Field(
        None,
        description="Active/standby engine containers sharing the GPUs; needs gpuMemoryService and the "
        "graph annotation nvidia.com/dynamo-kube-discovery-mode: container.",
    )
