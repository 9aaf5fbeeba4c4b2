"""DynamoGraphDeployment: a graph of Dynamo components (frontend, workers, planner, ...) deployed together."""

from __future__ import annotations

import enum
from typing import Annotated, Any, ClassVar

from pydantic import Field

from .base import ApiModel, Condition, EnvVar, Time
from .common import PVC
from .enums import BackendFramework, RestartPhase, RestartStrategyType, RollingUpdatePhase
from .groupversion import (
    API_VERSION,
    DYNAMO_GRAPH_DEPLOYMENT_KIND,
    DYNAMO_GRAPH_DEPLOYMENT_PLURAL,
    MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS,
    MAX_GRAPH_AND_SERVICE_NAME_CHARS,
    MAX_PVCS,
    MAX_SERVICES,
    SERVICES_REQUIRED,
)
from .markers import Cel, CrdInfo, ListType, PrinterColumn, Schema
from .shared import DynamoComponentDeploymentSharedSpec
from .topology import DynamoGraphDeploymentExperimentalSpec, ProviderOverride, SpecTopologyConstraint


class ComponentKind(enum.StrEnum):
    """The Kubernetes workload kind behind a service."""

    POD_CLIQUE = "PodClique"
    POD_CLIQUE_SCALING_GROUP = "PodCliqueScalingGroup"
    DEPLOYMENT = "Deployment"
    LEADER_WORKER_SET = "LeaderWorkerSet"


class PlacementScoreState(enum.StrEnum):
    """Whether the scheduler reports a placement score for the graph, and for how much of it."""

    REPORTED = "Reported"
    PARTIAL = "Partial"
    UNSUPPORTED = "Unsupported"
    UNKNOWN = "Unknown"


ServiceName = Annotated[str, Schema({"maxLength": 63})]


class RestartStrategy(ApiModel):
    """How a restart proceeds through the services."""

    __cel__ = (
        Cel(
            rule="self.type != 'Parallel' || !has(self.order) || size(self.order) == 0",
            message="order must not be set when type is Parallel",
            field_path=".order",
            reason="FieldValueForbidden",
        ),
    )

    type: RestartStrategyType = Field(RestartStrategyType.SEQUENTIAL, description="Sequential or Parallel.")
    order: Annotated[list[ServiceName], ListType("set"), Schema({"maxItems": MAX_SERVICES})] | None = Field(
        None,
        description="Order in which services restart (Sequential only): every service exactly once. "
        "Default: service names sorted.",
    )


class Restart(ApiModel):
    """Restarts every service of the graph whenever `id` changes."""

    id: Annotated[str, Schema({"minLength": 1, "maxLength": 253})] = Field(
        description="Any string; changing it restarts the graph according to the strategy."
    )
    strategy: RestartStrategy | None = Field(None, description="How the restart proceeds.")


_ORDER = "self.restart.strategy.order"
_NO_ORDER = f"!has(self.restart) || !has(self.restart.strategy) || !has({_ORDER}) || size({_ORDER}) == 0"
_MULTINODE_KEPT = (
    "self.services.all(k, !(k in oldSelf.services)"
    " || has(self.services[k].multinode) == has(oldSelf.services[k].multinode))"
)


# One dot-separated part of a service key: every generated name embeds the key lower-cased, so each
# part must be a DNS label once lower-cased (no empty part, no leading or trailing '-').
_KEY_PART = "[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?"


def _normalised(key: str) -> str:
    """A service key as generated names spell it (internal/dynamo/common/naming.normalised_service)."""
    return f"{key}.lowerAscii().replace('.', '-')"


_SERVICE_KEY_RULES = (
    Cel(
        rule=f"self.all(k, size(k) <= 63 && k.matches('^{_KEY_PART}([.]{_KEY_PART})*$'))",
        message="service names must be at most 63 characters: letters, digits and '-' in parts "
        "separated by single dots, each part starting and ending with a letter or digit",
        reason="FieldValueInvalid",
    ),
    Cel(
        rule=f"self.all(k, self.all(j, k == j || {_normalised('k')} != {_normalised('j')}))",
        message="service names must stay distinct once lower-cased with '.' read as '-' (generated"
        " object names spell them so): e.g. 'Frontend' and 'frontend', or 'Cache.A' and 'Cache-A', collide",
        reason="FieldValueInvalid",
    ),
    Cel(
        rule="self.filter(k, has(self[k].componentType) && self[k].componentType == 'epp').size() <= 1",
        message="at most one service may have componentType epp (its ConfigMap and InferencePool"
        " are named after the graph)",
        reason="FieldValueInvalid",
    ),
)


# "A graph has at least one service", stated once: the schema refuses an empty graph with this message,
# and generation (internal/dynamo/graph/generate.py), which also sees graphs no API server admitted
# (`render`'s files, v1beta1 graphs through their v1alpha1 view), refuses it with the same words.
class DynamoGraphDeploymentSpec(ApiModel):
    """Desired state of a graph: its services, shared PVCs and environment, backend and restarts."""

    __cel__ = (
        Cel(
            rule="has(self.services) && size(self.services) > 0",
            message=SERVICES_REQUIRED,
            field_path=".services",
            reason="FieldValueRequired",
        ),
        Cel(
            rule="!has(self.services) || self.services.all(k, !has(self.services[k].volumeMounts)"
            " || self.services[k].volumeMounts.all(m,"
            " has(self.pvcs) && self.pvcs.exists(p, p.name == m.name)))",
            message="every services[*].volumeMounts[*].name must name a PVC declared in spec.pvcs",
            field_path=".services",
            reason="FieldValueInvalid",
        ),
        Cel(
            rule=f"{_NO_ORDER} || (has(self.services) && size({_ORDER}) == size(self.services)"
            f" && {_ORDER}.all(s, s in self.services))",
            message="restart order must name every service exactly once and nothing else",
            field_path=".restart.strategy.order",
            reason="FieldValueInvalid",
        ),
        Cel(
            rule="has(self.backendFramework) == has(oldSelf.backendFramework)"
            " && (!has(self.backendFramework) || self.backendFramework == oldSelf.backendFramework)",
            message="backendFramework is immutable",
            field_path=".backendFramework",
            reason="FieldValueForbidden",
        ),
        Cel(
            rule=f"!has(self.services) || !has(oldSelf.services) || {_MULTINODE_KEPT}",
            message="a service cannot switch between single-node and multinode (services[*].multinode);"
            " remove the service and add it under a new name instead",
            field_path=".services",
            reason="FieldValueForbidden",
        ),
    )

    provider_override: ProviderOverride | None = Field(
        None,
        description="Provider fragment for the graph's root workload (Grove's PodCliqueSet); it cannot "
        "choose the provider (not implemented by this operator).",
    )
    annotations: dict[str, str] | None = Field(
        None, description="Annotations every service inherits unless it sets the same key."
    )
    labels: dict[str, str] | None = Field(
        None, description="Labels every service inherits unless it sets the same key."
    )
    priority_class_name: str | None = Field(
        None, description="PriorityClass of every pod of the graph's PodCliqueSet (Grove pathway only)."
    )
    pvcs: Annotated[list[PVC], ListType("map", ("name",)), Schema({"maxItems": MAX_PVCS})] | None = Field(
        None, description="PVCs the services may mount, each with a unique name."
    )
    services: (
        Annotated[
            dict[str, DynamoComponentDeploymentSharedSpec],
            Schema({"maxProperties": MAX_SERVICES}),
            *_SERVICE_KEY_RULES,
        ]
        | None
    ) = Field(None, description="The services of the graph, keyed by service name.")
    envs: list[EnvVar] | None = Field(
        None, description="Environment variables for all services; a service's own envs win by name."
    )
    backend_framework: BackendFramework | None = Field(
        None, description="Inference backend of the graph's workers (sglang, vllm, trtllm). Immutable."
    )
    restart: Restart | None = Field(None, description="Restart the graph by changing restart.id.")
    topology_constraint: SpecTopologyConstraint | None = Field(
        None,
        description="The cluster topology the graph is placed by, and the domain services without their "
        "own constraint are packed in (not implemented by this operator).",
    )
    experimental: DynamoGraphDeploymentExperimentalSpec | None = Field(
        None, description="Graph-level preview features; their shape may change between releases."
    )


class ServiceReplicaStatus(ApiModel):
    """Replica counts of one service's workload."""

    component_kind: ComponentKind = Field(description="Kind of the workload behind the service.")
    component_name: str = Field(description="Name of the workload.")
    component_names: list[str] | None = Field(
        None, description="Names of all workloads of the service (several LeaderWorkerSets for multinode)."
    )
    replicas: Annotated[int, Schema({"format": "int32"})] = Field(
        ge=0, description="Non-terminated replicas."
    )
    updated_replicas: Annotated[int, Schema({"format": "int32"})] = Field(
        ge=0, description="Replicas at the desired revision."
    )
    ready_replicas: Annotated[int, Schema({"format": "int32"})] | None = Field(
        None, ge=0, description="Ready replicas (Deployment, LeaderWorkerSet, PodClique)."
    )
    available_replicas: Annotated[int, Schema({"format": "int32"})] | None = Field(
        None, ge=0, description="Available replicas (Deployment, PodCliqueScalingGroup)."
    )
    # v1beta1 holds it too: the status is written in this version and converted, so a field this
    # model lacks would be pruned from what v1alpha1 clients read.
    scheduled_replicas: Annotated[int, Schema({"format": "int32"})] | None = Field(
        None,
        ge=0,
        description="Replicas the scheduler has placed, in service replicas (PodClique, "
        "PodCliqueScalingGroup); absent means not reported, never zero placed.",
    )


class RestartStatus(ApiModel):
    """Progress of the latest restart."""

    observed_id: str | None = Field(None, alias="observedID", description="Restart id being processed.")
    phase: RestartPhase | None = Field(None, description="Phase of the restart.")
    in_progress: list[str] | None = Field(None, description="Services restarting right now.")


class PlacementStatus(ApiModel):
    """The scheduler's placement score for the whole graph, where a backend reports one."""

    state: PlacementScoreState | None = Field(None, description="Whether a score is reported.")
    score: float | None = Field(
        None, ge=0, le=1, description="The worst placement score of the graph's units, 0 to 1 (1 is best)."
    )


class RollingUpdateStatus(ApiModel):
    """Progress of a managed rolling update of the worker services."""

    phase: RollingUpdatePhase | None = Field(None, description="Phase of the rolling update.")
    start_time: Time | None = Field(None, description="When the rolling update started.")
    end_time: Time | None = Field(None, description="When the rolling update ended.")
    updated_services: list[str] | None = Field(None, description="Services already rolled.")


class DynamoGraphDeploymentStatus(ApiModel):
    """Observed state of a graph."""

    observed_generation: Annotated[int, Schema({"format": "int64"})] | None = Field(
        None, description="Generation last reconciled without error."
    )
    state: str | None = Field(None, description="High-level state: pending, successful or failed.")
    conditions: Annotated[list[Condition], ListType("map", ("type",))] | None = Field(
        None, description="Latest observations (Ready), one per type."
    )
    services: dict[str, ServiceReplicaStatus] | None = Field(
        None, description="Replica status per service, keyed by service name."
    )
    restart: RestartStatus | None = Field(None, description="Status of the latest restart.")
    rolling_update: RollingUpdateStatus | None = Field(None, description="Status of a worker rolling update.")
    placement: PlacementStatus | None = Field(None, description="Scheduler placement score of the graph.")


_ROLLING = (
    "has(oldSelf.status.rollingUpdate.phase)"
    " && oldSelf.status.rollingUpdate.phase in ['Pending', 'InProgress']"
)


def _restart_id(obj: str) -> str:
    return f"(has({obj}.spec.restart) ? {obj}.spec.restart.id : '')"


_NAME_BUDGET = (
    "size(self.metadata.name) + size(k) <= (has(self.spec.services[k].multinode)"
    f" ? {MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS} : {MAX_GRAPH_AND_SERVICE_NAME_CHARS})"
)


class DynamoGraphDeployment(ApiModel):
    """A Dynamo inference graph: its services become DynamoComponentDeployments."""

    __crd__: ClassVar[CrdInfo] = CrdInfo(
        plural=DYNAMO_GRAPH_DEPLOYMENT_PLURAL,
        singular="dynamographdeployment",
        short_names=("dgd",),
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
            PrinterColumn("Backend", ".spec.backendFramework", description="Backend framework"),
            PrinterColumn("Age", ".metadata.creationTimestamp", type="date"),
        ),
    )
    __cel__ = (
        Cel(
            rule=f"!has(self.spec.services) || self.spec.services.all(k, {_NAME_BUDGET})",
            message="metadata.name plus each spec.services key must be at most "
            f"{MAX_GRAPH_AND_SERVICE_NAME_CHARS} characters together"
            f" ({MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS} for multinode services)"
            " so that generated object names fit in 63",
            field_path=".spec.services",
            reason="FieldValueInvalid",
        ),
        Cel(
            rule="self.metadata.name.matches('^[a-z]')",
            message="metadata.name must start with a letter: it begins the names of the graph's"
            " Services, which must be DNS-1035 labels",
            reason="FieldValueInvalid",
        ),
        # Reads the old status: a restart must not start while workers are being rolled.
        Cel(
            rule=f"!has(oldSelf.status) || !has(oldSelf.status.rollingUpdate) || !({_ROLLING})"
            f" || {_restart_id('self')} == {_restart_id('oldSelf')}",
            message="spec.restart.id cannot change while a rolling update is in progress",
            field_path=".spec.restart",
            reason="FieldValueForbidden",
        ),
    )

    api_version: str = Field(API_VERSION, description="nvidia.com/v1alpha1")
    kind: str = Field(DYNAMO_GRAPH_DEPLOYMENT_KIND, description="DynamoGraphDeployment")
    metadata: dict[str, Any] = Field(default_factory=dict)
    spec: DynamoGraphDeploymentSpec = Field(description="Desired state of the graph.")
    status: DynamoGraphDeploymentStatus | None = Field(None, description="Observed state of the graph.")
