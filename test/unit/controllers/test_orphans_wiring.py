"""Dynamo's wiring of the orphan collector: which owners are ours and which children it may judge."""

from __future__ import annotations

from typing import Any

from dynamo_operator import orphans
from dynamo_operator.context import settings_from
from dynamo_operator.controllers.dynamocomponentdeployment import DynamoComponentDeploymentReconciler
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal import kinds
from dynamo_operator.internal.controller.orphans import DEFAULT_GRACE_SECONDS, OrphanCollector
from dynamo_operator.internal.settings import Settings


def collector() -> OrphanCollector:
    return OrphanCollector(client=Any, cache=Any, recorder=Any, owners=orphans.OWNERS)  # type: ignore[arg-type]


def test_owners_are_the_kinds_that_write_children() -> None:
    assert {r.kind for r in orphans.OWNERS} == {kinds.DGD.kind, kinds.DCD.kind}


def test_every_owned_kind_is_watched_except_pvcs() -> None:
    """A claim holds data: its deletion is left to the garbage collector alone."""
    graph = DynamoGraphDeploymentReconciler(client=Any, cache=Any, recorder=Any, gen_context=Any)  # type: ignore[arg-type]
    component = DynamoComponentDeploymentReconciler(client=Any, cache=Any, recorder=Any, gen_context=Any)  # type: ignore[arg-type]
    c = collector()
    orphans.watch(c, graph.owned)
    orphans.watch(c, component.owned)
    assert kinds.PVC in graph.owned
    assert set(c.children) == (set(graph.owned) | set(component.owned)) - {kinds.PVC}
    assert len(c.children) == len(set(c.children))  # Services, owned by both, once


class Manager:
    """What `new_collector` reads of the manager."""

    client: Any = None
    cache: Any = None

    def event_recorder(self, component: str) -> Any:
        return None


def test_grace_comes_from_the_settings_when_set() -> None:
    assert orphans.new_collector(Manager(), Settings(orphan_grace=2.0))._grace == 2.0  # type: ignore[arg-type]


def test_grace_defaults_to_the_collectors_default() -> None:
    assert Settings().orphan_grace == DEFAULT_GRACE_SECONDS
    assert settings_from(OperatorOptions()).orphan_grace == DEFAULT_GRACE_SECONDS
