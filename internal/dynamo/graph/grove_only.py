"""Fields only the Grove pathway acts on, refused on the component pathway. Pure.

A graph's `priorityClassName`, its `topologyConstraint`s and its Grove `providerOverride` fragments
are written into the PodCliqueSet (grove/podcliqueset.py, grove/topology.py). A graph on the
component pathway (DCDs, Deployments, LeaderWorkerSets) has nowhere to put them, and running it
without them would run something other than what was asked for: unpacked pods, a default priority.
Upstream's admission refuses such a graph ("requires the Grove pathway"); with no admission webhook
here, generation refuses it whole, naming the field and why the graph is not on Grove.
"""

from __future__ import annotations

from typing import ClassVar

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph

REASON = "GrovePathwayRequired"


class GroveOnlyFieldError(GenerationError):
    """The graph uses a field only the Grove pathway implements, and it is not on that pathway."""

    reason: ClassVar[str] = REASON


def grove_only_fields(dgd: Graph) -> list[str]:
    """The paths of the Grove-only fields the graph sets, in spec order (graph first)."""
    spec = dgd["spec"]
    found = [
        f"spec.{key}"
        for key in ("priorityClassName", "topologyConstraint", "providerOverride")
        if spec.get(key)
    ]
    for name, service in sorted((spec.get("services") or {}).items()):
        if not service:
            continue
        base = f"spec.services.{name}"
        found += [f"{base}.{key}" for key in ("topologyConstraint", "providerOverride") if service.get(key)]
        if service.get("minAvailable") is not None:
            found.append(f"{base}.minAvailable")  # a Grove gang's minimum: no Deployment has one
        multinode = service.get("multinode", {})
        for role, entry in (("leader", multinode.get("leader")), ("worker", multinode.get("worker"))):
            if entry and entry.get("providerOverride"):
                found.append(f"{base}.multinode.{role}.providerOverride")
    return found


def why_not_grove(dgd: Graph, ctx: GenContext) -> str:
    """Why the graph runs on the component pathway, as the user can change it."""
    annotations = dgd.get("metadata", {}).get("annotations") or {}
    if not ctx.capabilities.grove:
        return "Grove is not available to this operator (its API is not served, or --enable-grove is off)"
    if annotations.get(c.ANNOTATION_WORKLOAD_PROVIDER) == c.WORKLOAD_PROVIDER_COMPONENT:
        return (
            f"the graph records workload provider {c.WORKLOAD_PROVIDER_COMPONENT!r} "
            f"({c.ANNOTATION_WORKLOAD_PROVIDER}); a graph never changes pathway once deployed"
        )
    opt_out = annotations.get(c.ANNOTATION_ENABLE_GROVE)
    if opt_out is not None and opt_out.lower() == "false":
        return f"remove or unset annotation {c.ANNOTATION_ENABLE_GROVE} (currently {opt_out!r})"
    return "the graph is not on the Grove pathway"


def check_component_pathway(dgd: Graph, ctx: GenContext) -> None:
    """Raise GroveOnlyFieldError when a graph bound for the component pathway sets Grove-only fields."""
    fields = grove_only_fields(dgd)
    if not fields:
        return
    more = f" (and {', '.join(fields[1:])})" if len(fields) > 1 else ""
    raise GroveOnlyFieldError(fields[0], f"requires the Grove pathway{more}; {why_not_grove(dgd, ctx)}")
