"""Dynamo's wiring of the orphan collector: which owners are ours and which children it may judge."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dynamo_operator import orphans
from dynamo_operator.controllers.dynamocomponentdeployment import DynamoComponentDeploymentReconciler
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
from dynamo_operator.internal import kinds
from dynamo_operator.internal.controller.orphans import DEFAULT_GRACE_SECONDS, OrphanCollector


def collector() -> OrphanCollector:
    return OrphanCollector(client=Any, cache=Any, recorder=Any, owners=orphans.OWNERS)  # type: ignore[arg-type]


def test_owners_are_the_kinds_that_write_children() -> None:
    assert {r.kind for r in orphans.OWNERS} == {kinds.DGD.kind, kinds.DCD.kind}


def test_every_owned_kind_is_watched_except_pvcs() -> None:
    """A claim holds data: its deletion is left to the garbage collector alone."""
    graph = DynamoGraphDeploymentReconciler(
        client=Any,
        cache=Any,
        recorder=Any,
        gen_context=Any,
        inference_pools=True,  # type: ignore[arg-type]
    )
    component = DynamoComponentDeploymentReconciler(
        client=Any,
        cache=Any,
        recorder=Any,
        gen_context=Any,
        lws=True,
        istio=True,
        volcano=True,  # type: ignore[arg-type]
    )
    c = collector()
    orphans.watch(c, graph.owned)
    orphans.watch(c, component.owned)
    assert kinds.PVC in graph.owned
    assert set(c.children) == (set(graph.owned) | set(component.owned)) - {kinds.PVC}
    assert len(c.children) == len(set(c.children))  # Services, owned by both, once


def test_grace_comes_from_the_options_when_set() -> None:
    assert orphans.grace_of(SimpleNamespace(options=SimpleNamespace(orphan_grace_seconds=2))) == 2.0
    assert orphans.grace_of(SimpleNamespace(options=SimpleNamespace())) == DEFAULT_GRACE_SECONDS
    assert orphans.grace_of(None) == DEFAULT_GRACE_SECONDS
