"""The graph's `TopologyLevelsAvailable` condition: whether Grove still enforces the topology
placement the graph asks for. Pure.

Grove checks a PodCliqueSet's topology constraints against the ClusterTopologyBinding they name and
reports a problem on the set as `TopologyLevelsUnavailable: True` (the binding is gone, or a level it
packs by is no longer in it); its pods then schedule without those constraints. Upstream 2a6da14c
copies that onto the graph, inverted and in its own reasons, for graphs that ask for placement
(typed constraints or Grove topology fragments, grove/topology.py), and emits one Warning Event each
time the graph becomes (or stays, with a new reason or message) unavailable. This module says what
the condition is and whether such an Event is due; the reconciler writes both.
"""

from __future__ import annotations

from dataclasses import dataclass

from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, Graph
from dynamo_operator.internal.dynamo.grove.live import pod_clique_set_view
from dynamo_operator.internal.dynamo.grove.topology import read_placement
from dynamo_operator.internal.dynamo.status.conditions import Condition, StatusCondition, find

CONDITION_TOPOLOGY_LEVELS_AVAILABLE = "TopologyLevelsAvailable"
REASON_ALL_AVAILABLE = "AllTopologyLevelsAvailable"
REASON_LEVELS_UNAVAILABLE = "TopologyLevelsUnavailable"
REASON_DEFINITION_NOT_FOUND = "TopologyDefinitionNotFound"
REASON_PENDING = "TopologyConditionPending"

# What Grove (v0.1.0-alpha.12) writes on the PodCliqueSet.
GROVE_CONDITION_LEVELS_UNAVAILABLE = "TopologyLevelsUnavailable"
GROVE_REASON_BINDING_NOT_FOUND = "ClusterTopologyNotFound"

# Grove's message is copied into ours; a status field is no place for an unbounded one.
_MAX_MESSAGE = 1024


@dataclass(frozen=True, slots=True)
class TopologyVerdict:
    """The condition to set on the graph and, when due, the message of one Warning Event (whose
    reason is the condition's)."""

    condition: Condition
    warning: str | None = None


def topology_verdict(
    dgd: Graph, live: ForeignObject | None, previous: StatusCondition | None
) -> TopologyVerdict | None:
    """The graph's topology condition from its live PodCliqueSet (`pcs`) and the graph's current
    condition of that type (`previous`); None when the graph asks for no topology placement or its
    set does not exist yet (nothing to report on; upstream sets nothing either). Raises
    GenerationError as `read_placement` does (a graph generation has refused already)."""
    if live is None or not read_placement(dgd).any:
        return None
    pcs = pod_clique_set_view(live)
    set_name = str((pcs.get("metadata") or {}).get("name") or "")
    grove = find((pcs.get("status") or {}).get("conditions"), GROVE_CONDITION_LEVELS_UNAVAILABLE)
    if grove is None:
        return TopologyVerdict(
            Condition(
                CONDITION_TOPOLOGY_LEVELS_AVAILABLE,
                "Unknown",
                REASON_PENDING,
                f"Grove has not yet reported whether the topology levels this graph packs by exist"
                f" (PodCliqueSet {set_name})",
            )
        )
    if grove.get("status") != "True":
        return TopologyVerdict(
            Condition(
                CONDITION_TOPOLOGY_LEVELS_AVAILABLE,
                "True",
                REASON_ALL_AVAILABLE,
                "Every topology level this graph packs by is in the cluster topology",
            )
        )
    not_found = grove.get("reason") == GROVE_REASON_BINDING_NOT_FOUND
    reason = REASON_DEFINITION_NOT_FOUND if not_found else REASON_LEVELS_UNAVAILABLE
    detail = str(grove.get("message") or "").strip()[:_MAX_MESSAGE] or "no detail given"
    what = (
        "the ClusterTopologyBinding it names was not found"
        if not_found
        else "a topology level it packs by is not in the cluster topology"
    )
    message = (
        f"Grove no longer enforces this graph's topology constraints (PodCliqueSet {set_name}):"
        f" {what}; its pods are placed without them. Grove says: {detail}"
    )
    condition = Condition(CONDITION_TOPOLOGY_LEVELS_AVAILABLE, "False", reason, message)
    unchanged = (
        previous is not None
        and previous.get("status") == "False"
        and previous.get("reason") == reason
        and previous.get("message") == message
    )
    return TopologyVerdict(condition, None if unchanged else message)
