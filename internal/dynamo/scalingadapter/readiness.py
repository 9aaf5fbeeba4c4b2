"""Whether an adapter can drive its service: the `Ready` condition it reports, and when that is news.

An adapter drives the `replicas` of its graph's component (as stored, `spec.components[]`) only when
the graph exists, has the component, and the component has `scalingAdapter` (v1alpha1's
`scalingAdapter.enabled`): without it the replicas belong to the
graph's spec (users edit them there, the admission policy lets them), and an adapter writing them too
would be a second writer. For the same reason only one adapter drives a service: when several name
it, the graph's own adapter wins, else the oldest; two drivers with different replicas would undo
each other's writes forever. Every other case is `Ready=False` with a reason and a message that names
the graph and service and says what to change; none of them is retried on a timer, because each
ends with a change of the graph or of an adapter, which the watches deliver.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from dynamo_operator.api.views.objectmeta import OwnerReference
from dynamo_operator.internal.dynamo.common.inputs import ScalingAdapter, StoredComponent, StoredGraph
from dynamo_operator.internal.dynamo.scalingadapter.adapter import component_names, service_spec, target
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition

READY = "Ready"
GRAPH_KIND = "DynamoGraphDeployment"


class Reason(enum.StrEnum):
    """Reasons of the `Ready` condition."""

    ACTIVE = "Active"  # the adapter drives its service
    GRAPH_NOT_FOUND = "GraphNotFound"  # no such graph in the adapter's namespace (or it is being deleted)
    SERVICE_NOT_FOUND = "ServiceNotFound"  # the graph has no such service
    ADAPTER_DISABLED = "AdapterDisabled"  # the service lacks scalingAdapter.enabled
    DUPLICATE_ADAPTER = "DuplicateAdapter"  # another adapter already drives the service


def adapter_enabled(component: StoredComponent) -> bool:
    """The component hands its replicas to an adapter (`scalingAdapter` present, even empty: v1alpha1's
    `scalingAdapter.enabled: true`)."""
    return "scalingAdapter" in component


def ready_condition(
    adapter: ScalingAdapter, dgd: StoredGraph | None, rivals: Sequence[ScalingAdapter] = ()
) -> Condition:
    """The adapter's `Ready` condition given its graph as the cache shows it (None: absent) and the
    other adapters of its namespace that name the same graph and service (`rivals`)."""
    t = target(adapter)
    if dgd is None or dgd.get("metadata", {}).get("deletionTimestamp"):
        state = "is being deleted" if dgd is not None else f"was not found in namespace {t.namespace}"
        return Condition(
            READY,
            "False",
            Reason.GRAPH_NOT_FOUND.value,
            f"{GRAPH_KIND} {t.dgd} {state}: nothing to scale. Create the graph or point spec.dgdRef.name"
            " at an existing one; the adapter turns Ready by itself once the graph exists.",
        )
    service = service_spec(dgd, t.service)
    if service is None:
        known = ", ".join(component_names(dgd)) or "none"
        return Condition(
            READY,
            "False",
            Reason.SERVICE_NOT_FOUND.value,
            f"{GRAPH_KIND} {t.dgd} has no component {t.service} (its components: {known}). Fix"
            " spec.dgdRef.componentName or add the component to the graph; the adapter turns Ready by"
            " itself once it exists.",
        )
    if not adapter_enabled(service):
        return Condition(
            READY,
            "False",
            Reason.ADAPTER_DISABLED.value,
            f"Service {t.service} of {GRAPH_KIND} {t.dgd} does not have scalingAdapter enabled, so its"
            " replicas are set in the graph and this adapter does not write them. Give the component"
            f" {t.service} `scalingAdapter: {{}}` (v1beta1; in v1alpha1,"
            f" spec.services.{t.service}.scalingAdapter.enabled: true) to scale it here, or delete this"
            " adapter.",
        )
    winner = driver([adapter, *rivals], dgd)
    if winner != _name(adapter):
        return Condition(
            READY,
            "False",
            Reason.DUPLICATE_ADAPTER.value,
            f"Adapter {winner} already drives service {t.service} of {GRAPH_KIND} {t.dgd} (the graph's"
            " own adapter, else the oldest, wins); two drivers would undo each other's replicas. Scale"
            f" {winner} instead, or delete this adapter.",
        )
    return Condition(
        READY,
        "True",
        Reason.ACTIVE.value,
        f"Drives the replicas of service {t.service} of {GRAPH_KIND} {t.dgd}.",
    )


def driver(adapters: Sequence[ScalingAdapter], dgd: StoredGraph) -> str:
    """Name of the one adapter, among `adapters` naming the same service of `dgd`, that drives it: the
    graph's own adapter, else the oldest (then the first by name). Adapters being deleted or left
    behind by a former graph of that name do not compete."""
    uid = dgd.get("metadata", {}).get("uid")
    live = [
        a
        for a in adapters
        if not a.get("metadata", {}).get("deletionTimestamp") and not awaiting_collection(a, dgd)
    ]

    def rank(a: ScalingAdapter) -> tuple[bool, str, str]:
        ref = _controller_ref(a)
        own = ref is not None and ref.get("kind") == GRAPH_KIND and ref.get("uid") == uid
        return (not own, str(a.get("metadata", {}).get("creationTimestamp") or ""), _name(a))

    return _name(min(live or adapters, key=rank))


def warrants_warning(previous: Sequence[conditions.StatusCondition] | None, want: Condition) -> bool:
    """True when `want` is a problem the previous conditions did not already report: one Warning Event
    per transition into a problem (or from one problem to another), never one per reconcile."""
    if want.status == "True":
        return False
    old = conditions.find(previous, want.type)
    return old is None or (old.get("status"), old.get("reason")) != (want.status, want.reason)


def awaiting_collection(adapter: ScalingAdapter, dgd: StoredGraph | None) -> bool:
    """The adapter is controlled by a graph of its dgdRef's name that is gone or going (absent, being
    deleted, or replaced by a new graph of the same name): the garbage collector deletes it next, so
    it must neither write into a successor graph nor raise an alarm about its owner's absence."""
    ref = _controller_ref(adapter)
    if ref is None or ref.get("kind") != GRAPH_KIND:
        return False
    if ref.get("name") != adapter["spec"]["dgdRef"].get("name"):
        return False
    if dgd is None:
        return True
    meta = dgd.get("metadata", {})
    return bool(meta.get("deletionTimestamp")) or meta.get("uid") != ref.get("uid")


def _name(obj: ScalingAdapter) -> str:
    return str(obj.get("metadata", {}).get("name", ""))


def _controller_ref(obj: ScalingAdapter) -> OwnerReference | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return ref
    return None
