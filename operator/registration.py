"""Registers every controller on a manager: one typed `Settings`, one list of reconciler modules, each
built by its `build(mgr, settings)`, then what spans controllers (optional kinds, orphans, counters).

Optional APIs are not fixed at start-up: `settings.capabilities` only seeds `OptionalApiWatch`,
which follows their CRDs. `Settings.gen_context` reads its current value on every reconcile, and the
child kinds that need an optional API are owned through `OptionalOwnership` (informer, handler and
prune list switched with the API), never through the builder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import structlog
from dynamo_operator import orphans
from dynamo_operator.cache_shapes import CHILD_SHAPES
from dynamo_operator.controllers import (
    dynamocomponentdeployment,
    dynamographdeploymentrequest,
    dynamographdeploymentscalingadapter,
    dynamomodel,
)
from dynamo_operator.controllers.dynamographdeployment import mpi_ssh_secret
from dynamo_operator.controllers.dynamographdeployment import reconciler as dynamographdeployment
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.controller.builder import Built
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.optional_api_table import OPTIONAL_APIS, OptionalApi
from dynamo_operator.internal.optional_api_table import Owner as Side
from dynamo_operator.internal.settings import Settings
from dynamo_operator.operator_metrics import ResourceCounter
from dynamo_operator.optional_api_watch import OptionalApiWatch, crd_presence
from dynamo_operator.optional_ownership import OptionalKind, OptionalOwnership, OwningReconciler

log = structlog.get_logger(__name__)


def optional_kinds(side: Side, settings: Settings) -> list[OptionalKind]:
    """The kinds of every optional API that `side` watches, each while generation may use its API
    (`Settings.generation_capabilities`: Istio's only with a gateway, Grove's only when enabled)."""
    return [
        OptionalKind(
            kind.resource, _in_use(api, settings), kind.predicate, mapper=kind.mapper, owned=kind.owned
        )
        for api in OPTIONAL_APIS
        if api.owner is side
        for kind in api.kinds
    ]


def _in_use(api: OptionalApi, settings: Settings) -> Callable[[Capabilities], bool]:
    return lambda served: api.in_use(settings.generation_capabilities(served))


@dataclass(frozen=True, slots=True)
class Owner:
    """A controller that writes children (through ChildSyncer): the orphan collector judges its
    children, and it owns the kinds of the optional APIs whose table entry names its `side`, while
    those APIs are served."""

    build: Callable[[Manager, Settings], Built[OwningReconciler]]
    kind: Resource
    side: Side  # which optional APIs' kinds it watches (their `owner` in the table)


# Every controller of the operator, in order of registration: first the owners, then the others.
OWNERS: tuple[Owner, ...] = (
    Owner(dynamocomponentdeployment.build, kinds.DCD, Side.COMPONENT),
    Owner(dynamographdeployment.build, kinds.DGD, Side.GRAPH),
)
OTHERS: tuple[Callable[[Manager, Settings], Built[object]], ...] = (
    mpi_ssh_secret.build,
    dynamographdeploymentscalingadapter.build,
    dynamographdeploymentrequest.build,
    dynamomodel.build,
)


def register_all(mgr: Manager, settings: Settings) -> OptionalApiWatch:
    """Every controller of the operator; returns the optional-API watch."""
    for resource, shape in CHILD_SHAPES.items():  # before any informer of these kinds exists
        mgr.cache.set_shape(resource, shape)
    apis = watch_optional_apis(mgr, settings.capabilities)
    # Generated DCDs are in the version the operator reads them in, v1beta1 (graph/stored_dcd.py); to
    # a CRD an older release installed the client's codec sends them as v1alpha1.
    generation = dataclasses.replace(settings.generation, dcd_api_version=kinds.DCD.api_version)
    settings = dataclasses.replace(settings, apis=apis, generation=generation)
    collector = orphans.new_collector(mgr, settings)
    for owner in OWNERS:
        built = owner.build(mgr, settings)
        orphans.watch(collector, built.reconciler.owned)
        own_optional_kinds(mgr, apis, built, owner=owner.kind, optional=optional_kinds(owner.side, settings))
    for build in OTHERS:
        build(mgr, settings)
    orphans.register(mgr, collector)
    # Not leader-only, as upstream: every replica's /metrics shows the counts from its warm cache.
    mgr.add_runnable(ResourceCounter(mgr.cache).run, needs_leader=False, name="resource-counter")
    return apis


def watch_optional_apis(mgr: Manager, initial: Capabilities) -> OptionalApiWatch:
    """The CRD informer (metadata only, trimmed) and the loop that keeps the capabilities current."""
    crds = mgr.cache.informer(CUSTOM_RESOURCE_DEFINITION, metadata_only=True, transform=crd_presence)
    watch = OptionalApiWatch(client=mgr.client, crds=crds.store, initial=initial)
    crds.add_event_handler(watch)
    # Not leader-only: a standby keeps its informers and its view of the APIs warm as well.
    mgr.add_runnable(watch.run, needs_leader=False, name="optional-api-watch")
    return watch


def own_optional_kinds(
    mgr: Manager,
    apis: OptionalApiWatch,
    built: Built[OwningReconciler],
    *,
    owner: Resource,
    optional: list[OptionalKind],
) -> OptionalOwnership:
    """Own the `optional` kinds while their APIs are served (from now on, and whenever that changes);
    every change requeues each object of `owner`."""
    ownership = OptionalOwnership(
        cache=mgr.cache,
        reconciler=built.reconciler,
        controller=built.controller,
        owner=owner,
        namespace=mgr.options.namespace,
        kinds=optional,
    )
    ownership.start(apis.current)
    apis.subscribe(ownership)
    return ownership
