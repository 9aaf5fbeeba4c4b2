"""A DGD read once: the fields the graph reconciler decides by, out of the raw object. Pure.

The cache hands the reconciler the graph as stored (v1beta1); `read_graph` takes what every step needs
from it (names, components, restart request, PVC entries, the origin version generation sees) so that
the steps read named fields instead of walking the dict again. `raw` stays beside it: status (built
and written as stored), Events and ownerReferences address the object as the API server has it.
`stored` is the graph as stored carrying the origin version: the restart plan, the graph's status,
the rollout's v2 worker hash (it hashes v1beta1 DCDs) and the graph-level objects read it (a graph
given in v1alpha1, offline or in a test, is raised to it). Generation of the DCDs and the Grove set
takes `graph`, the spec lowered to v1alpha1 (lowering.py) with the same origin version, because the
pod builder still renders from it (docs/design/ARCHITECTURE.md, "Two API versions").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from dynamo_operator.api.views.scalars import JsonObject
from dynamo_operator.api.views.v1beta1 import Restart
from dynamo_operator.internal.dynamo.common.inputs import Graph, StoredComponent, StoredGraph
from dynamo_operator.internal.dynamo.graph.components import components_of, raised
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.graph.meta import (
    origin_version,
    stored_with_origin_version,
    with_origin_version,
)


@dataclass(frozen=True, slots=True)
class PvcEntry:
    """One `spec.pvcs` entry: `create` says the graph makes the PVC (else the user brings it)."""

    name: str
    create: bool


@dataclass(frozen=True, slots=True)
class GraphView:
    """One DGD as this reconcile read it (see the module docstring)."""

    raw: JsonObject
    graph: Graph
    # The graph as stored (v1beta1) with its origin version, as `graph` carries it: what the
    # rollout's v2 worker hash reads (rollout/workerhash_v2.py).
    stored: StoredGraph
    origin: str | None
    namespace: str
    name: str
    uid: str
    generation: int | None
    # `spec.components` as stored, by name (name order), and `spec.restart`: what the restart plan,
    # the graph's status and the checks below read.
    components: Mapping[str, StoredComponent]
    restart: Restart | None
    pvcs: tuple[PvcEntry, ...]

    def names_pvc(self, name: str) -> bool:
        """The graph lists a PVC of that name (created by it or not)."""
        return any(p.name == name for p in self.pvcs)

    def missing_user_pvcs(self, exists: Callable[[str], bool]) -> list[str]:
        """PVCs the user is to bring (`create` false) that `exists` does not know, in spec order."""
        return [p.name for p in self.pvcs if not p.create and not exists(p.name)]


def read_graph(raw: JsonObject, *, children: Sequence[JsonObject], operator_version: str) -> GraphView:
    """The view of `raw`, whose controlled DCDs are `children` (they carry the origin version of a
    graph that predates the annotation) under an operator of `operator_version`. Raises
    GenerationError for a graph whose spec v1alpha1 cannot hold (lowering.py)."""
    dgd = lowered_graph(raw)
    meta = dgd["metadata"]
    spec = dgd.get("spec") or {}
    origin = origin_version(raw, children, operator_version)
    stored = stored_with_origin_version(raised(raw), origin)  # (raw is stored: raised is itself)
    stored_spec = stored.get("spec") or {}
    return GraphView(
        raw=raw,
        # Generation sees the graph with its origin version even before the stamp is written.
        graph=with_origin_version(dgd, origin),
        stored=stored,
        origin=origin,
        namespace=str(meta.get("namespace") or ""),
        name=str(meta["name"]),
        uid=str(meta.get("uid") or ""),
        generation=meta.get("generation"),
        components={x["name"]: x for x in components_of(stored)},
        restart=stored_spec.get("restart"),
        pvcs=tuple(
            PvcEntry(str(p["name"]), bool(p.get("create"))) for p in spec.get("pvcs") or () if p.get("name")
        ),
    )


# The field every cross-reference below is about.
RESTART_ORDER = "spec.restart.strategy.order"


def semantic_problems(view: GraphView) -> list[str]:
    """What the CRD schema cannot refuse: cross-references between fields, each a problem of
    `RESTART_ORDER`. (A graph without components is refused by the CRD and, as a backstop, by
    generation's `validate_graph`.) The restart order is checked as v1alpha1's CRD checks it and
    upstream's webhook checks a v1beta1 one: a Sequential order names every component once, a
    Parallel restart has none. Worded in the terms of the stored graph the view reads (components),
    as upstream's webhook words them."""
    problems: list[str] = []
    strategy = view.restart.get("strategy", {}) if view.restart else {}
    order = strategy.get("order") or []
    if not order:
        return problems
    if strategy.get("type") == "Parallel":
        return ["cannot be set when the strategy type is Parallel"]
    unknown = [s for s in order if s not in view.components]
    if unknown:
        problems.append(f"names unknown components: {', '.join(unknown)}")
    twice = sorted({s for s in order if order.count(s) > 1})
    if twice:
        problems.append(f"names components more than once: {', '.join(twice)}")
    missing = sorted(set(view.components) - set(order))
    if missing:
        problems.append(f"leaves out components: {', '.join(missing)}")
    return problems
