"""DynamoGraphDeployment, nvidia.com/v1beta1: a graph of Dynamo components deployed together.

Beside v1alpha1: `components[]` is a list keyed by `name` (v1alpha1's `services` map), `env` is
singular, the graph gains KV-transfer placement under `experimental`, and status reports
`components` (v1alpha1's `services`). This operator stores v1alpha1 this release; the conversion
webhook serves this version.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from ..v1alpha1.base import ApiModel
from ..v1alpha1.enums import BackendFramework
from ..v1alpha1.groupversion import DYNAMO_GRAPH_DEPLOYMENT_KIND, DYNAMO_GRAPH_DEPLOYMENT_PLURAL
from ..v1alpha1.markers import Cel, CrdInfo, ListType, PrinterColumn, Schema
from .groupversion import API_VERSION, MAX_COMPONENTS
from .shared import DynamoComponentDeploymentSharedSpec, ProviderOverride
from .types import Conditions, EnvVar, Int64, NonNegativeInt32, StringMap, Time, TopologyDomain


class RestartStrategyType(enum.StrEnum):
    SEQUENTIAL = "Sequential"
    PARALLEL = "Parallel"


class KvTransferEnforcement(enum.StrEnum):
    REQUIRED = "required"
    PREFERRED = "preferred"


class DGDState(enum.StrEnum):
    INITIALIZING = "initializing"
    PENDING = "pending"
    SUCCESSFUL = "successful"
    FAILED = "failed"


class PlacementScoreState(enum.StrEnum):
    REPORTED = "Reported"
    PARTIAL = "Partial"
    UNSUPPORTED = "Unsupported"
    UNKNOWN = "Unknown"


class ComponentKind(enum.StrEnum):
    """The Kubernetes workload kind behind a component."""

    POD_CLIQUE = "PodClique"
    POD_CLIQUE_SCALING_GROUP = "PodCliqueScalingGroup"
    DEPLOYMENT = "Deployment"
    LEADER_WORKER_SET = "LeaderWorkerSet"


class RollingUpdatePhase(enum.StrEnum):
    PENDING = "Pending"
    IN_PROGRESS = "InProgress"
    COMPLETED = "Completed"
    FAILED = "Failed"
    NONE = ""


class RestartStrategy(ApiModel):
    """How a restart proceeds through the components."""

    type: RestartStrategyType = Field(RestartStrategyType.SEQUENTIAL, description="Sequential or Parallel.")
    order: list[str] | None = Field(None, description="Order of a sequential restart, by component name.")


class Restart(ApiModel):
    """Restart every component whenever `id` changes (set only after creation)."""

    id: Annotated[str, Schema({"minLength": 1})] = Field(description="Any string; a new value restarts.")
    strategy: RestartStrategy | None = Field(None, description="How the restart proceeds.")


class SpecTopologyConstraint(ApiModel):
    """Topology-aware placement of the whole graph."""

    cluster_topology_name: Annotated[str, Schema({"minLength": 1})] = Field(
        description="The ClusterTopology resource that names the domains."
    )
    pack_domain: TopologyDomain | None = Field(None, description="Domain the graph's pods are packed in.")


class KvTransferPolicy(ApiModel):
    """Keep prefill and decode workers of a transfer within one topology domain."""

    __cel__ = (
        Cel(
            rule="(has(self.labelKey) && !has(self.clusterTopologyName))"
            " || (!has(self.labelKey) && has(self.clusterTopologyName))",
            message="exactly one of labelKey or clusterTopologyName is required",
        ),
        Cel(
            rule="!has(self.enforcement) || self.enforcement != 'preferred' || has(self.preferredWeight)",
            message="preferredWeight is required when enforcement is preferred",
        ),
        Cel(
            rule="!has(self.preferredWeight) || (has(self.enforcement) && self.enforcement == 'preferred')",
            message="preferredWeight may only be set when enforcement is preferred",
        ),
    )

    cluster_topology_name: Annotated[str, Schema({"minLength": 1})] | None = Field(
        None, description="A ClusterTopology naming the domain (or give labelKey)."
    )
    label_key: (
        Annotated[
            str,
            Schema(
                {
                    "minLength": 1,
                    "maxLength": 317,
                    "pattern": r"^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)"
                    r"(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?"
                    r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$",
                }
            ),
            Cel(
                rule="!self.contains('/') || self.split('/')[0].size() <= 253",
                message="labelKey prefix must be 253 characters or less",
            ),
        ]
        | None
    ) = Field(None, description="A node label whose value is the domain (or give clusterTopologyName).")
    domain: TopologyDomain = Field(description="The topology domain.")
    enforcement: KvTransferEnforcement = Field(
        KvTransferEnforcement.REQUIRED, description="required or preferred."
    )
    preferred_weight: Annotated[float, Schema({"minimum": 0, "maximum": 1})] | None = Field(
        None, description="Weight of a preferred placement, 0 to 1."
    )


class DynamoGraphDeploymentExperimentalSpec(ApiModel):
    """Preview features of the graph."""

    kv_transfer_policy: KvTransferPolicy | None = Field(None, description="KV-transfer placement.")


_COMPONENT_LIST_RULES = (
    Cel(
        rule="self.filter(c, has(c.type) && c.type == 'epp').size() <= 1",
        message="at most one component may have type epp",
    ),
    Cel(
        rule="self.all(c1, !has(c1.name) || self.filter(c2, has(c2.name)"
        " && c2.name.lowerAscii() == c1.name.lowerAscii()).size() == 1)",
        message="component names must be unique case-insensitively",
    ),
)


class DynamoGraphDeploymentSpec(ApiModel):
    """The desired graph."""

    __cel__ = (
        Cel(
            rule="oldSelf.hasValue() || !has(self.restart)",
            message="spec.restart must be unset on create;"
            " set spec.restart.id after creation to request a restart",
            optional_old_self=True,
        ),
    )

    annotations: StringMap | None = Field(
        None, description="Annotations for every child; the pod template wins."
    )
    labels: StringMap | None = Field(None, description="Labels for every child; the pod template wins.")
    priority_class_name: str | None = Field(None, description="PriorityClass of the graph's pods.")
    provider_override: ProviderOverride | None = Field(None, description="Provider fragment for the graph.")
    topology_constraint: SpecTopologyConstraint | None = Field(None, description="Graph topology placement.")
    components: (
        Annotated[
            list[DynamoComponentDeploymentSharedSpec],
            ListType("map", ("name",)),
            Schema({"maxItems": MAX_COMPONENTS}),
            *_COMPONENT_LIST_RULES,
        ]
        | None
    ) = Field(None, description="The components of the graph, keyed by name.")
    env: list[EnvVar] | None = Field(None, description="Environment for every component's main container.")
    backend_framework: BackendFramework | None = Field(None, description="The graph's inference backend.")
    restart: Restart | None = Field(None, description="Request a restart of the graph.")
    experimental: DynamoGraphDeploymentExperimentalSpec | None = Field(None, description="Preview features.")


class ComponentReplicaStatus(ApiModel):
    """Replica counts of one component's workload."""

    component_kind: ComponentKind = Field(description="Workload kind behind the component.")
    component_names: list[str] | None = Field(None, description="Workload names, the newest last.")
    runtime_namespace: str | None = Field(None, description="Dynamo namespace the component runs in.")
    replicas: NonNegativeInt32 = Field(description="Total replicas.")
    updated_replicas: NonNegativeInt32 = Field(description="Replicas at the current spec.")
    ready_replicas: NonNegativeInt32 | None = Field(None, description="Ready replicas.")
    available_replicas: NonNegativeInt32 | None = Field(None, description="Available replicas.")
    scheduled_replicas: NonNegativeInt32 | None = Field(None, description="Scheduled replicas.")


class ComponentCheckpointStatus(ApiModel):
    """Checkpoint of one component."""

    checkpoint_name: str | None = Field(None, description="DynamoCheckpoint name.")
    checkpoint_id: str | None = Field(None, alias="checkpointID", description="Checkpoint id.")
    identity_hash: str | None = Field(None, description="Hash of the checkpoint identity.")
    ready: bool | None = Field(None, description="Whether the checkpoint is ready.")


class RestartStatus(ApiModel):
    """Progress of a graph restart."""

    observed_id: str | None = Field(None, alias="observedID", description="Restart id being processed.")
    phase: str | None = Field(None, description="Phase of the restart.")
    in_progress: list[str] | None = Field(None, description="Components restarting now.")


class PlacementStatus(ApiModel):
    """How well the graph's placement matches its topology request."""

    state: PlacementScoreState | None = Field(None, description="Whether a score is reported.")
    score: Annotated[float, Schema({"minimum": 0, "maximum": 1})] | None = Field(None, description="0 to 1.")


class RollingUpdateStatus(ApiModel):
    """Progress of a worker rolling update."""

    phase: RollingUpdatePhase | None = Field(None, description="Phase of the update.")
    start_time: Time | None = Field(None, description="When it started.")
    end_time: Time | None = Field(None, description="When it ended.")
    updated_components: list[str] | None = Field(None, description="Components already updated.")


class DynamoGraphDeploymentStatus(ApiModel):
    """What the operator observed of the graph."""

    observed_generation: Int64 | None = Field(None, description="Generation last acted on.")
    state: DGDState = Field(DGDState.INITIALIZING, description="Overall state.")
    conditions: Conditions | None = Field(None, description="Conditions (Ready).")
    components: dict[str, ComponentReplicaStatus] | None = Field(None, description="Per component replicas.")
    restart: RestartStatus | None = Field(None, description="Restart progress.")
    checkpoints: dict[str, ComponentCheckpointStatus] | None = Field(
        None, description="Per component checkpoints."
    )
    rolling_update: RollingUpdateStatus | None = Field(None, description="Rolling update progress.")
    placement: PlacementStatus | None = Field(None, description="Topology placement score.")


class DynamoGraphDeployment(ApiModel):
    """A graph of Dynamo components (nvidia.com/v1beta1)."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_PLURAL,
        singular="dynamographdeployment",
        short_names=("dgd",),
        # Upstream's columns plus State and Reason, as v1alpha1 has them: `kubectl get dgd` reads the
        # group's newest version, and the quick start tells users to read why a graph is not ready there.
        printer_columns=(
            PrinterColumn(
                "Ready", '.status.conditions[?(@.type=="Ready")].status', description="Ready condition"
            ),
            PrinterColumn("State", ".status.state", description="State of the graph"),
            PrinterColumn(
                "Reason",
                '.status.conditions[?(@.type=="Ready")].reason',
                description="Why the graph is (not) ready: the Ready condition's reason",
            ),
            PrinterColumn("Backend", ".spec.backendFramework", description="Inference backend"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1beta1")
    kind: str = Field(DYNAMO_GRAPH_DEPLOYMENT_KIND, description="DynamoGraphDeployment")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentSpec = Field(description="The desired graph.")
    # Upstream's status requires `state` (it has a default, so the API server fills it in).
    status: Annotated[DynamoGraphDeploymentStatus, Schema({"required": ["state"]})] | None = Field(
        None, description="What the operator observed."
    )
