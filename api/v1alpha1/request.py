"""DynamoGraphDeploymentRequest: profile a model against SLAs, then generate (optionally apply) a graph."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from .base import ApiModel, Condition, EmbeddedObject, RawObject, ResourceRequirements, Toleration
from .enums import IMMUTABLE_SPEC_STATES, BackendFramework
from .groupversion import (
    API_VERSION,
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL,
)
from .markers import Cel, CrdInfo, ListType, PrinterColumn, Schema
from .shared import RUNTIME_VERSION_PATTERN


class ConfigMapKeySelector(ApiModel):
    """A key of a ConfigMap in the request's namespace."""

    name: Annotated[str, Schema({"minLength": 1})] = Field(description="Name of the ConfigMap.")
    key: str = Field("disagg.yaml", description='Key in the ConfigMap ("disagg.yaml" when empty).')


class ProfilingConfigSpec(ApiModel):
    """Configuration of the profiling job."""

    config: RawObject | None = Field(
        None, description="Profiler configuration (profile_sla format), passed to the profiler as is."
    )
    config_map_ref: ConfigMapKeySelector | None = Field(
        None, description="ConfigMap key with the base graph config (disagg.yaml) given to the profiler."
    )
    profiler_image: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Image of the profiling job, e.g. nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1."
    )
    output_pvc: str | None = Field(
        None,
        alias="outputPVC",
        description="Existing PVC (same namespace) receiving all profiling artifacts instead of an emptyDir.",
    )
    resources: ResourceRequirements | None = Field(None, description="Resources of the profiling container.")
    tolerations: list[Toleration] | None = Field(None, description="Tolerations of the profiling pod.")
    node_selector: dict[str, str] | None = Field(None, description="Node selector of the profiling pod.")


class DeploymentOverridesSpec(ApiModel):
    """Metadata and image overrides of the graph created when autoApply is true."""

    name: str | None = Field(None, description="Name of the created graph (default: the request's name).")
    namespace: str | None = Field(
        None,
        description=(
            "Namespace of the created graph. Only empty or the request's own namespace is accepted: a "
            "request never deploys into another namespace (the dynamo-operator-dgdr-own-namespace "
            "admission policy refuses anything else, and the operator fails such a request)."
        ),
    )
    labels: dict[str, str] | None = Field(None, description="Extra labels of the created graph.")
    annotations: dict[str, str] | None = Field(None, description="Extra annotations of the created graph.")
    workers_image: str | None = Field(
        None, description="Image of the worker components (profiling graphs and the final graph)."
    )


class DynamoGraphDeploymentRequestSpec(ApiModel):
    """What to deploy and under which constraints; immutable once profiling has started."""

    model: Annotated[str, Schema({"minLength": 1})] = Field(
        description='Model to deploy, e.g. "Qwen/Qwen3-0.6B"; '
        "written into profilingConfig.config.deployment.model."
    )
    backend: BackendFramework = Field(
        description="Backend to profile (vllm, sglang, trtllm); "
        "written into profilingConfig.config.engine.backend."
    )
    use_mocker: bool = Field(
        False, description="Deploy a mocker graph (simulated engines, no GPUs) built from the profiling data."
    )
    enable_gpu_discovery: bool = Field(
        False,
        description="Let the profiler discover GPUs from the nodes (cluster-wide operators only); "
        "overrides the hardware settings of the config.",
    )
    profiling_config: ProfilingConfigSpec = Field(description="Configuration of the profiling job.")
    runtime_version_override: Annotated[str, Schema({"pattern": RUNTIME_VERSION_PATTERN})] | None = Field(
        None,
        description="Dynamo runtime version (MAJOR.MINOR.PATCH) given to the components of the generated "
        "graph that set none themselves; needed when the image's tag is not a version.",
    )
    auto_apply: bool = Field(False, description="Create the generated graph once profiling completes.")
    deployment_overrides: DeploymentOverridesSpec | None = Field(
        None, description="Overrides of the created graph (autoApply only)."
    )


class DeploymentStatus(ApiModel):
    """The graph created by the request (autoApply)."""

    name: str | None = Field(None, description="Name of the created graph.")
    namespace: str | None = Field(None, description="Namespace of the created graph.")
    state: str | None = Field(None, description="State of the created graph, mirrored from its status.")
    created: bool | None = Field(
        None, description="The graph was created (a deleted graph is not recreated)."
    )


class DynamoGraphDeploymentRequestStatus(ApiModel):
    """Observed state of a request."""

    state: str | None = Field(
        None,
        description='Lifecycle state: "", Pending, Profiling, Deploying, Ready, DeploymentDeleted, Failed.',
    )
    backend: str | None = Field(None, description="Backend, for display.")
    observed_generation: Annotated[int, Schema({"format": "int64"})] | None = Field(
        None, description="Generation of the spec last accepted."
    )
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None, description="Validation, Profiling, SpecGenerated, DeploymentReady; one per type."
    )
    profiling_results: str | None = Field(
        None, description='ConfigMap with the profiling data: "configmap/<name>".'
    )
    generated_deployment: EmbeddedObject | None = Field(
        None, description="The generated DynamoGraphDeployment (apiVersion, kind, metadata, spec)."
    )
    deployment: DeploymentStatus | None = Field(None, description="The graph created by autoApply.")


_STATES = ", ".join(f"'{s.value}'" for s in IMMUTABLE_SPEC_STATES)


class DynamoGraphDeploymentRequest(ApiModel):
    """A request to deploy a model under SLA targets: profile it, then generate (and apply) a graph."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL,
        singular="dynamographdeploymentrequest",
        short_names=("dgdr",),
        printer_columns=(
            PrinterColumn("Model", ".spec.model", description="Model"),
            PrinterColumn("Backend", ".status.backend", description="Backend"),
            PrinterColumn("State", ".status.state", description="State"),
            PrinterColumn("DGD-State", ".status.deployment.state", description="State of the created graph"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )
    __cel__ = (
        Cel(
            rule="!has(oldSelf.status) || !has(oldSelf.status.state)"
            f" || !(oldSelf.status.state in [{_STATES}]) || self.spec == oldSelf.spec",
            message="spec is immutable once profiling has started; create a new request instead",
            field_path=".spec",
            reason="FieldValueForbidden",
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1alpha1")
    kind: str = Field(DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND, description="DynamoGraphDeploymentRequest")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentRequestSpec = Field(description="What to profile and deploy.")
    status: DynamoGraphDeploymentRequestStatus | None = Field(
        None, description="Observed state of the request."
    )
