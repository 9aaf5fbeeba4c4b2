"""Every child a graph should have, on either pathway, or the one reason it cannot have them. Pure.

The graph reconciler applies all of a graph's children or none: half a graph (a frontend without
its workers) helps nobody. So generation and its checks run to the end before anything is written,
and a failure is one `GenerationError` whose `reason` becomes the graph's condition: a semantic
problem (`InvalidSpec`), services whose names collide (`NameCollision`), names over Grove's budget
(`GroveNameTooLong`), optional APIs the cluster lacks (`MissingAPIs`: MissingAPI, or
NoOrchestratorAvailable when only LeaderWorkerSet is). A spec with several problems reports the
first in that order, except that missing APIs are reported only once the rest generates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.graph.generate import (
    desired_graph_objects,
    desired_shared_objects,
    missing_apis,
)
from dynamo_operator.internal.dynamo.graph.view import RESTART_ORDER, GraphView, semantic_problems
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects


class MissingAPIs(GenerationError):
    """Optional APIs some services need are not served; one message lists them all. The reason
    says which kind: `MissingOrchestrator` when only a multinode orchestrator is missing."""

    reason: ClassVar[str] = consts.REASON_MISSING_API

    def __init__(self, missing: Sequence[MissingAPIError]) -> None:
        message = "; ".join(str(err) for err in missing)
        ValueError.__init__(self, message)
        self.field, self.message, self.missing = "spec.services", message, list(missing)


class MissingOrchestrator(MissingAPIs):
    """Every API missing is the one that runs multinode components (LeaderWorkerSet)."""

    reason: ClassVar[str] = consts.REASON_NO_ORCHESTRATOR


def missing_apis_error(missing: Sequence[MissingAPIError]) -> MissingAPIs:
    """The error for `missing`: NoOrchestratorAvailable only when nothing but multinode orchestration
    is missing (a missing DRA or InferencePool API is not a missing orchestrator)."""
    if all(err.api.startswith(consts.LWS_GROUP) for err in missing):
        return MissingOrchestrator(missing)
    return MissingAPIs(missing)


@dataclass(frozen=True, slots=True)
class GraphChildren:
    """`owned`: the graph's own children, in apply order. `shared`: the namespace's planner and EPP
    ServiceAccounts/RoleBindings, shared by graphs, created if absent and never owned."""

    owned: list[Obj]
    shared: list[Obj]


def dcd_children(
    view: GraphView, ctx: GenContext, *, restart_at: Mapping[str, str], worker_hash: str
) -> GraphChildren:
    """The DCD pathway's children: a DCD per service plus the graph-level objects."""
    return _children(
        view,
        ctx,
        grove=False,
        generate=lambda: desired_graph_objects(
            view.graph, ctx, stored=view.stored, restart_at=restart_at, worker_hash=worker_hash
        ),
    )


def grove_children(
    view: GraphView,
    ctx: GenContext,
    *,
    restart_at: Mapping[str, str],
    worker_hash: str | None = None,
    live_pcs: ForeignObject | None = None,
) -> GraphChildren:
    """The Grove pathway's children: one PodCliqueSet, per-service Services, graph-level objects
    (`worker_hash`: what the worker cliques carry, grove/workerhash.py; `live_pcs`: the set as it is
    now, whose old-style topology constraints move to the current shape in steps, grove/topology.py)."""
    return _children(
        view,
        ctx,
        grove=True,
        generate=lambda: desired_grove_objects(
            view.graph,
            ctx,
            stored=view.stored,
            restart_at=restart_at,
            worker_hash=worker_hash,
            live_pcs=live_pcs,
        ),
    )


def _children(
    view: GraphView, ctx: GenContext, *, grove: bool, generate: Callable[[], list[Obj]]
) -> GraphChildren:
    if problems := semantic_problems(view):
        raise GenerationError(RESTART_ORDER, "; ".join(problems))
    missing = missing_apis(view.graph, ctx, grove=grove)
    children = GraphChildren(owned=generate(), shared=desired_shared_objects(view.stored, ctx))
    if missing:
        raise missing_apis_error(missing)
    return children
