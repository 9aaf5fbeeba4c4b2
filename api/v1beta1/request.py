"""DynamoGraphDeploymentRequest, nvidia.com/v1beta1: deploy a model under latency targets.

v1beta1 replaces v1alpha1's free-form `profilingConfig.config` with typed blocks (workload, sla,
hardware, modelCache, features), the profiling pod's knobs with a Job override, and the graph
overrides with a partial graph (`overrides.dgd`). The generated graph always lands in the request's
own namespace: there is no namespace override in this version.

Only `model` is required; every other field has a default or is optional. Upstream's v1beta1 has no
CEL rule on this kind; neither has this model.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from ..v1alpha1.base import ApiModel, Condition, EmbeddedObject, RawObject
from ..v1alpha1.groupversion import (
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL,
)
from ..v1alpha1.markers import CrdInfo, K8sType, ListType, PrinterColumn, Schema
from .enums import ProfilingPhase
from .groupversion import API_VERSION

Int32 = Annotated[int, Schema({"format": "int32"})]
Int64 = Annotated[int, Schema({"format": "int64"})]
JobSpec = Annotated[dict[str, Any], K8sType("io.k8s.api.batch.v1.JobSpec")]

# A Dynamo version, major.minor.patch, each part at most four digits without a leading zero.
RUNTIME_VERSION_PATTERN = r"^(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})$"


class DGDRPhase(enum.StrEnum):
    """Where a request is in its life."""

    PENDING = "Pending"
    PROFILING = "Profiling"
    READY = "Ready"
    DEPLOYING = "Deploying"
    DEPLOYED = "Deployed"
    FAILED = "Failed"


class SearchStrategy(enum.StrEnum):
    """How far the profiler searches."""

    RAPID = "rapid"
    THOROUGH = "thorough"


class GPUSKUType(enum.StrEnum):
    """GPU models the profiler's performance database knows (its system names)."""

    GB200_SXM = "gb200_sxm"
    GB10 = "gb10"
    B200_SXM = "b200_sxm"
    H200_SXM = "h200_sxm"
    H100_SXM = "h100_sxm"
    H100_PCIE = "h100_pcie"
    A100_SXM = "a100_sxm"
    A100_PCIE = "a100_pcie"
    A30 = "a30"
    L40S = "l40s"
    L40 = "l40"
    L4 = "l4"
    V100_SXM = "v100_sxm"
    V100_PCIE = "v100_pcie"
    T4 = "t4"
    MI200 = "mi200"
    MI300 = "mi300"


class BackendType(enum.StrEnum):
    """Inference engine to profile and deploy; auto lets the profiler choose."""

    AUTO = "auto"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    VLLM = "vllm"


class OptimizationType(enum.StrEnum):
    """What the profiler optimises for."""

    LATENCY = "latency"
    THROUGHPUT = "throughput"


class WorkloadSpec(ApiModel):
    """The traffic the deployment is sized for."""

    isl: Int32 | None = Field(4000, description="Input sequence length, in tokens.")
    osl: Int32 | None = Field(1000, description="Output sequence length, in tokens.")
    concurrency: float | None = Field(
        None,
        description="Concurrent requests to plan for; set this or requestRate, not both. With neither and "
        "no planner, the profiler picks the configuration of highest throughput.",
    )
    request_rate: float | None = Field(
        None,
        description="Requests per second to plan for; set this or concurrency, not both. With neither and "
        "no planner, the profiler picks the configuration of highest throughput.",
    )


class SLASpec(ApiModel):
    """Latency targets the chosen configuration must meet."""

    ttft: float | None = Field(None, description="Time to first token, in milliseconds.")
    itl: float | None = Field(None, description="Time between two output tokens, in milliseconds.")
    e2e_latency: float | None = Field(
        None,
        alias="e2eLatency",
        description="Whole-request latency in milliseconds; an alternative to ttft and itl.",
    )
    optimization_type: OptimizationType | None = Field(
        None, description="latency or throughput: what the profiler favours among configurations that fit."
    )


class ModelCacheSpec(ApiModel):
    """A PersistentVolumeClaim (in the request's namespace) that already holds the model's weights."""

    pvc_name: str | None = Field(None, description="Name of the claim.")
    pvc_model_path: str | None = Field(
        None,
        description='Where the checkpoint lies: relative to the claim\'s root (e.g. "models/llama-3"), or '
        "an absolute path inside the container that already starts with pvcMountPath.",
    )
    pvc_mount_path: str | None = Field(
        "/opt/model-cache", description="Where the claim is mounted in the containers."
    )


class OverridesSpec(ApiModel):
    """Changes to the profiling Job and to the graph the profiler generates."""

    profiling_job: JobSpec | None = Field(
        None, description="Merged into the Job spec the operator builds for the profiler."
    )
    dgd: EmbeddedObject | None = Field(
        None,
        description="A partial DynamoGraphDeployment (apiVersion nvidia.com/v1alpha1 or v1beta1, kind "
        "DynamoGraphDeployment) merged into the generated graph, using the schema of the version it "
        "names. It may change fields of components the profiler generated but not add components; its "
        "labels and annotations are merged and its metadata.name names the graph.",
    )


class MockerSpec(ApiModel):
    """Simulated engines in place of real ones."""

    enabled: bool | None = Field(
        None, description="Deploy mocker workers (no GPUs needed), e.g. for tests at scale."
    )


class FeaturesSpec(ApiModel):
    """Optional Dynamo features of the generated graph."""

    planner: RawObject | None = Field(
        None,
        description="Configuration of the Planner, passed through unchecked (the Planner validates it when "
        "it starts). Present means the generated graph runs a Planner.",
    )
    mocker: MockerSpec | None = Field(None, description="Simulated engines in place of real ones.")


class HardwareSpec(ApiModel):
    """The GPUs to profile and deploy on. Whatever is left out is discovered from the cluster's GPU
    nodes (cluster-wide operators with GPU discovery); with all four of gpuSku, vramMb, totalGpus and
    numGpusPerNode set, nothing is discovered."""

    gpu_sku: GPUSKUType | None = Field(
        None,
        description="GPU model to target; also narrows discovery to nodes of that model. Left out, the "
        "most common model in the cluster is used (ties go to the one with more memory).",
    )
    vram_mb: float | None = Field(None, description="Memory of one GPU, in MiB.")
    total_gpus: Int32 | None = Field(
        None,
        description="GPUs the profiler may use in all. Left out, the GPUs of the discovered nodes are "
        "counted (at most 32 for now).",
    )
    num_gpus_per_node: Int32 | None = Field(None, description="GPUs on each node.")
    interconnect: str | None = Field(
        None,
        description='How the GPUs of one node talk to each other, e.g. "nvlink" or "pcie". It only '
        "informs planning; it configures nothing. Too optimistic a value leads to plans that run "
        "slower than expected, too pessimistic a value to plans that leave speed unused.",
    )
    rdma: bool | None = Field(
        None,
        description="Whether RDMA networking is usable for moving data between workers. It only informs "
        "planning; it installs nothing. Claiming RDMA that is not there can make transfers fail.",
    )


class DynamoGraphDeploymentRequestSpec(ApiModel):
    """The model to deploy and what the deployment must achieve."""

    model: Annotated[str, Schema({"minLength": 1})] = Field(
        description='Model to deploy: a Hugging Face id such as "Qwen/Qwen3-0.6B", or a private model name.'
    )
    backend: BackendType | None = Field(BackendType.AUTO, description="Inference engine to use.")
    image: str | None = Field(
        None,
        description="Image of the profiling Job (the Dynamo planner image; dynamo-frontend before "
        "Dynamo 1.1.0).",
    )
    runtime_version_override: Annotated[str, Schema({"pattern": RUNTIME_VERSION_PATTERN})] | None = Field(
        None,
        description="Dynamo runtime version given to generated components that set none themselves; "
        "needed when the image's tag is not a version. A component's own value in overrides.dgd wins.",
    )
    model_cache: ModelCacheSpec | None = Field(None, description="Weights already on a volume.")
    hardware: HardwareSpec | None = Field(None, description="The GPUs to plan for.")
    workload: WorkloadSpec | None = Field(None, description="The traffic to plan for.")
    sla: SLASpec | None = Field(None, description="Latency targets.")
    overrides: OverridesSpec | None = Field(None, description="Changes to the profiling Job and the graph.")
    features: FeaturesSpec | None = Field(None, description="Optional features of the generated graph.")
    search_strategy: SearchStrategy | None = Field(
        SearchStrategy.RAPID, description="rapid sweeps fast; thorough tries more configurations."
    )
    auto_apply: bool | None = Field(
        True,
        description="Create the graph once profiling is done. False leaves the generated graph in the "
        "status for someone to review and apply.",
    )


class ParetoConfig(ApiModel):
    """One point of the trade-off curve older profilers reported."""

    config: RawObject = Field(description="The whole deployment configuration at this point.")


class ProfilingResultsStatus(ApiModel):
    """What profiling produced."""

    pareto: list[ParetoConfig] | None = Field(
        None, description="Deprecated: only objects written by older profilers have it."
    )
    selected_config: RawObject | None = Field(
        None,
        description="The configuration the profiler chose for the targets; deployed when autoApply is true.",
    )


class DeploymentInfoStatus(ApiModel):
    """Replicas of the deployed graph."""

    replicas: Int32 | None = Field(None, description="Replicas wanted.")
    available_replicas: Int32 | None = Field(None, description="Replicas available and ready.")


class DynamoGraphDeploymentRequestStatus(ApiModel):
    """What the operator observed of a request."""

    phase: DGDRPhase | None = Field(None, description="Where the request is in its life.")
    profiling_phase: ProfilingPhase | None = Field(
        None, description="The profiling step under way; only set while the phase is Profiling."
    )
    dgd_name: str | None = Field(None, description="Name of the generated (or created) graph.")
    profiling_job_name: str | None = Field(None, description="Name of the profiling Job.")
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None,
        description="Latest observations, one per type: Succeeded, Validation, Profiling, SpecGenerated, "
        "DeploymentReady.",
    )
    profiling_results: ProfilingResultsStatus | None = Field(None, description="What profiling produced.")
    deployment_info: DeploymentInfoStatus | None = Field(
        None, description="Replicas of the graph, once one was created."
    )
    observed_generation: Int64 | None = Field(None, description="Generation of the spec last acted on.")


class DynamoGraphDeploymentRequest(ApiModel):
    """Deploys a model under latency targets: the operator profiles it, picks a configuration, and
    creates the graph (Pending, Profiling, Ready, Deploying, Deployed; or Failed)."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL,
        singular="dynamographdeploymentrequest",
        short_names=("dgdr",),
        printer_columns=(
            PrinterColumn("Model", ".spec.model"),
            PrinterColumn("Backend", ".spec.backend"),
            PrinterColumn("Phase", ".status.phase"),
            PrinterColumn("Profiling", ".status.profilingPhase"),
            PrinterColumn("Reason", '.status.conditions[?(@.type=="Succeeded")].reason'),
            PrinterColumn("Message", '.status.conditions[?(@.type=="Succeeded")].message'),
            PrinterColumn("DGD", ".status.dgdName"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1beta1")
    kind: str = Field(DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND, description="DynamoGraphDeploymentRequest")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentRequestSpec = Field(description="The model and its targets.")
    status: DynamoGraphDeploymentRequestStatus | None = Field(None, description="What the operator observed.")
