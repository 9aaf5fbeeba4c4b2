"""What generation reads: the typed views (api/views) of the objects it is handed. Pure.

Generation reads graphs in their v1alpha1 form: the cache holds each graph as stored (v1beta1), and
its spec is lowered to v1alpha1 once per change of it (graph/lowering.py); the graph's status is
built and written as stored. A DCD is read as stored too; the pod builder lowers it to the v1alpha1
spec it builds from once per generation (component/lowering.py). The reconciler casts each object to
its view once, as it reads it (`stored_graph_view`, `component_view`).
From there mypy checks every key generation reads against the API models the CRDs are made from: a
misspelt or retired field is a type error, not a silent default.
What only the v1beta1 form can say (a mount's readOnly, a named frontend sidecar) is read back from
the conversion's reserved annotation by `remainder.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, cast

from dynamo_operator.api.views import k8s, objectmeta
from dynamo_operator.api.views import v1alpha1 as views
from dynamo_operator.api.views import v1beta1 as beta_views
from dynamo_operator.internal.jsontree import copy_tree

# A graph as generation reads it (v1alpha1, its spec lowered from the stored form), and as stored.
Graph: TypeAlias = views.DynamoGraphDeployment
StoredGraph: TypeAlias = beta_views.DynamoGraphDeployment
# One `spec.components[]` entry of a graph as stored.
StoredComponent: TypeAlias = beta_views.DynamoComponentDeploymentSharedSpec
GraphSpec: TypeAlias = views.DynamoGraphDeploymentSpec
# One `spec.services[x]` of a graph.
ServiceSpec: TypeAlias = views.DynamoComponentDeploymentSharedSpec
# A DCD as stored and read (v1beta1): generation lowers it to the spec it builds from (`DcdSpec`) in
# `component.workload.component_of`.
ComponentDeployment: TypeAlias = beta_views.DynamoComponentDeployment
StoredDcdSpec: TypeAlias = beta_views.DynamoComponentDeploymentSpec
# A DCD in v1alpha1: what `dynamo-operator render` makes for upstream's older goldens, and the form
# generation builds a component's workload from.
AlphaComponentDeployment: TypeAlias = views.DynamoComponentDeployment
# Read as stored, in v1beta1 (`kinds.DGDSA`): its `dgdRef` names a `componentName`.
ScalingAdapter: TypeAlias = beta_views.DynamoGraphDeploymentScalingAdapter
Model: TypeAlias = views.DynamoModel
# A DCD's spec as generation builds from it (v1alpha1): a service's spec plus the graph's backend.
DcdSpec: TypeAlias = views.DynamoComponentDeploymentSpec
ObjectMeta: TypeAlias = objectmeta.ObjectMeta
Container: TypeAlias = k8s.Container
PodSpec: TypeAlias = k8s.PodSpec
EnvVar: TypeAlias = k8s.EnvVar
# The statuses generation builds, in the form each kind's status writer holds them: the graph's, the
# component's and the adapter's as stored (v1beta1), the model's in v1alpha1 (its only version).
DgdStatus: TypeAlias = beta_views.DynamoGraphDeploymentStatus
DcdStatus: TypeAlias = beta_views.DynamoComponentDeploymentStatus
RestartStatus: TypeAlias = beta_views.RestartStatus
RollingUpdateStatus: TypeAlias = beta_views.RollingUpdateStatus
# Replica counts of one service as the status builders measure them (v1alpha1's `services[x]` form,
# `componentName` beside `componentNames`), and as a component's and a graph's status store them
# (v1beta1: `status.component`, `status.components[x]`).
ServiceReplicas: TypeAlias = views.ServiceReplicaStatus
ComponentReplicas: TypeAlias = beta_views.ComponentReplicaStatus
AdapterStatus: TypeAlias = beta_views.DynamoGraphDeploymentScalingAdapterStatus
ModelStatusView: TypeAlias = views.DynamoModelStatus
# A DGDR as the reconciler reads it (v1alpha1), its status as the machine builds it, and that status
# as v1beta1 stores it (dgdr/stored.py writes the stored form when the CRD stores v1beta1).
Request: TypeAlias = views.DynamoGraphDeploymentRequest
RequestSpec: TypeAlias = views.DynamoGraphDeploymentRequestSpec
RequestStatus: TypeAlias = views.DynamoGraphDeploymentRequestStatus
StoredRequestStatus: TypeAlias = beta_views.DynamoGraphDeploymentRequestStatus
# An object of a kind the API does not model (another project's, say Grove's), read as JSON: a reader
# narrows what it takes out of it.
ForeignObject: TypeAlias = Mapping[str, object]


def json_object(value: object) -> ForeignObject:
    """`value` if it is a JSON object, else an empty one: how a reader steps into a field of an
    object it has no view of (a missing field reads as empty, as `obj.get(key) or {}` would)."""
    return value if isinstance(value, Mapping) else {}


def graph_view(obj: Mapping[str, object]) -> Graph:
    """A v1alpha1 DGD (a file read offline, or a graph lowered by graph/lowering.py), as its view. No
    copy and no check: the API server validated it against the same models' schema."""
    return cast(Graph, obj)


def stored_graph_view(obj: Mapping[str, object]) -> StoredGraph:
    """A DGD as read from the cache (v1beta1), as its view (see `graph_view`)."""
    return cast(StoredGraph, obj)


def component_view(obj: Mapping[str, object]) -> ComponentDeployment:
    """A DCD as read from the cache, as its view (see `graph_view`)."""
    return cast(ComponentDeployment, obj)


def adapter_view(obj: Mapping[str, object]) -> ScalingAdapter:
    """A scaling adapter as read from the cache, as its view (see `graph_view`)."""
    return cast(ScalingAdapter, obj)


def model_view(obj: Mapping[str, object]) -> Model:
    """A DynamoModel as read from the cache, as its view (see `graph_view`)."""
    return cast(Model, obj)


def request_view(obj: Mapping[str, object]) -> Request:
    """A DGDR as read from the cache or returned by a write, as its view (see `graph_view`)."""
    return cast(Request, obj)


def stored_request_status_of(status: Mapping[str, object]) -> StoredRequestStatus:
    """A DGDR status `dgdr/stored.py` merged, field by field, out of the stored v1beta1 status and the
    conversion of the machine's v1alpha1 one, as its view: every field it holds comes from one of
    the two, both of the v1beta1 schema."""
    return cast(StoredRequestStatus, status)


def dgd_status_view(status: Mapping[str, object]) -> DgdStatus:
    """A graph's status as its writer holds it (the live one, or our own write the cache has not
    caught up with), as its view: written by this operator's status builders, or by the API server
    from the same schema."""
    return cast(DgdStatus, status)


def dcd_status_view(status: Mapping[str, object]) -> DcdStatus:
    """A DCD's status as its writer holds it, as its view (see `dgd_status_view`)."""
    return cast(DcdStatus, status)


def adapter_status_view(status: Mapping[str, object]) -> AdapterStatus:
    """A scaling adapter's status as its writer holds it, as its view (see `dgd_status_view`)."""
    return cast(AdapterStatus, status)


def model_status_view(status: Mapping[str, object]) -> ModelStatusView:
    """A DynamoModel's status as its writer holds it, as its view (see `dgd_status_view`)."""
    return cast(ModelStatusView, status)


def editable_copy(view: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a view as a plain dict: what generation starts from when it builds an output
    object (a DCD's spec) out of an input (a service's)."""
    return copy_tree(dict(view))


def dcd_spec_of(spec: Mapping[str, Any]) -> DcdSpec:
    """A DCD spec generation built (`service_to_dcd_spec`), as the view the workload is made from."""
    return cast(DcdSpec, spec)
