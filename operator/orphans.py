"""Dynamo's wiring of the orphan collector (internal.controller.orphans): which owners are ours, which
children it may delete, and how it runs on the manager.

Owners are the kinds whose reconcilers write children through `ChildSyncer`: DynamoGraphDeployment
and DynamoComponentDeployment. Children are every kind those reconcilers own, except
PersistentVolumeClaims: a claim holds data, and deleting data is left to the garbage collector
alone (a PVC is never created for a gone graph, see `ChildSyncer`'s owner check).
"""

from __future__ import annotations

from collections.abc import Iterable

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.orphans import OrphanCollector
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.settings import Settings

NAME = "orphans"
OWNERS = (kinds.DGD, kinds.DCD)
NEVER_COLLECTED = frozenset({kinds.PVC})
WORKERS = 2  # suspects are rare; most are settled by one cache lookup


def new_collector(mgr: Manager, settings: Settings) -> OrphanCollector:
    """A collector for Dynamo's owner kinds; reconcilers add their child kinds with `watch`."""
    return OrphanCollector(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(NAME),
        owners=OWNERS,
        grace=settings.orphan_grace,
    )


def watch(collector: OrphanCollector, owned: Iterable[Resource]) -> None:
    """Let the collector judge children of these kinds (PVCs never)."""
    collector.add_children(r for r in owned if r not in NEVER_COLLECTED)


def register(mgr: Manager, collector: OrphanCollector) -> Controller:
    """Bind the collector to the informers and run it while leading: first a sweep of what the
    synced caches hold, then its workers."""
    controller = collector.controller(mgr.cache, name=NAME, workers=WORKERS, namespace=mgr.options.namespace)

    async def run() -> None:
        collector.sweep()
        await controller.run()

    mgr.add_runnable(run, needs_leader=True, name=NAME)
    return controller
