"""Why a graph is not Ready, as one `Ready` reason from its components' own verdicts. Pure.

Upstream 2a6da14c tells capacity from readiness on the graph's `Ready` reason (on its Grove pathway):
a component whose pods cannot be placed is `insufficient_capacity`, one still rolling out is
`updating`, one whose pods are placed but not ready is `pods_not_ready`; components of different
kinds make `mixed_not_ready_reasons`, and what cannot be told stays `some_resources_are_not_ready`.
The Grove pathway classes each PodClique or scaling group from what Grove reports of it
(grove/readiness.py); this module gives the DCD pathway the same vocabulary, read from what each DCD
already reports (the reason of its `Available` condition, from its pods' diagnosis, and its replica
counts), and `aggregate` makes one reason of either's classes, so tools and people can tell "add
nodes" from "wait" or "look at the pods" without reading messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.inputs import ComponentDeployment
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.pod_diagnosis import Problem

INSUFFICIENT_CAPACITY: Final = "insufficient_capacity"
UPDATING: Final = "updating"
PODS_NOT_READY: Final = "pods_not_ready"
MIXED: Final = "mixed_not_ready_reasons"
UNCLASSIFIED: Final = consts.REASON_SOME_NOT_READY
"""A component whose cause is not told (no status yet, its latest spec not yet acted on, no pod
with a problem), as upstream says it; a class like the others."""

# The DCD's `Available` reasons that say its pods are placed but not ready (pod_diagnosis).
_PLACED_NOT_READY = frozenset(
    p.reason for p in (Problem.IMAGE_PULL, Problem.CREATE_ERROR, Problem.CRASH_LOOP, Problem.NOT_READY)
)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def component_not_ready_reason(dcd: ComponentDeployment | None) -> str:
    """The class of one not-ready component, in upstream's order: capacity first (a rollout whose
    new pods cannot be placed waits for capacity, not for time), then a rollout still running, then
    pods placed but not ready; `UNCLASSIFIED` when its DCD does not tell (as upstream, a spec not
    yet acted on is not called a rollout: nothing says yet that anything rolls)."""
    if dcd is None:
        return UNCLASSIFIED
    status = dcd.get("status") or {}
    if not status:
        return UNCLASSIFIED
    reason = str((conditions.find(status.get("conditions"), "Available") or {}).get("reason") or "")
    if reason == Problem.UNSCHEDULABLE.reason:
        return INSUFFICIENT_CAPACITY
    generation = _int((dcd.get("metadata") or {}).get("generation"))
    counts: Mapping[str, object] = status.get("component") or {}
    if _int(status.get("observedGeneration")) < generation:
        return UNCLASSIFIED
    if _int(counts.get("updatedReplicas")) < _int(counts.get("replicas")):
        return UPDATING  # pods of an older template still run beside the new ones
    if reason in _PLACED_NOT_READY:
        return PODS_NOT_READY
    return UNCLASSIFIED


def aggregate(classes: Iterable[str]) -> str:
    """One reason for the graph from its not-ready components' classes: their class when they all
    share it, `MIXED` when they differ (an unclassified one included), `UNCLASSIFIED` for none."""
    seen = set(classes)
    if not seen:
        return UNCLASSIFIED
    return seen.pop() if len(seen) == 1 else MIXED
