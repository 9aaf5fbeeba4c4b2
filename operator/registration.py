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
from typing import Any

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
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.controller.builder import Built
from dynamo_operator.internal.controller.predicates import CHILD_CONTENT_CHANGED, CHILD_STATUS_CHANGED, Funcs
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.settings import Settings
from dynamo_operator.operator_metrics import ResourceCounter
from dynamo_operator.optional_api_watch import OptionalApiWatch, crd_presence
from dynamo_operator.optional_ownership import OptionalKind, OptionalOwnership, OwningReconciler

log = structlog.get_logger(__name__)


def component_optional_kinds(settings: Settings) -> list[OptionalKind]:
    """A component's LWS (its status drives ours), PodGroups, VirtualServices and gpuMemoryService's
    claim templates (DRA, a built-in API)."""
    return [
        OptionalKind(kinds.LWS, lambda c: c.lws, CHILD_STATUS_CHANGED),
        OptionalKind(kinds.POD_GROUP, lambda c: c.lws and c.volcano, CHILD_CONTENT_CHANGED),
        OptionalKind(
            kinds.VIRTUAL_SERVICE,
            lambda c: settings.generation_capabilities(c).istio,
            CHILD_CONTENT_CHANGED,
        ),
        OptionalKind(kinds.RESOURCE_CLAIM_TEMPLATE, lambda c: c.dra, CHILD_CONTENT_CHANGED),
    ]


def graph_optional_kinds(settings: Settings) -> list[OptionalKind]:
    """A graph's InferencePools and, when Grove may be used, Grove's kinds."""
    return [
        OptionalKind(kinds.INFERENCE_POOL, lambda c: c.gateway_inference_extension, CHILD_CONTENT_CHANGED),
        *grove_kinds(lambda c: settings.generation_capabilities(c).grove),
    ]


@dataclass(frozen=True, slots=True)
class Owner:
    """A controller that writes children (through ChildSyncer): the orphan collector judges its
    children, and it owns the `optional` kinds while their APIs are served."""

    build: Callable[[Manager, Settings], Built[OwningReconciler]]
    kind: Resource
    optional: Callable[[Settings], list[OptionalKind]]


# Every controller of the operator, in order of registration: first the owners, then the others.
OWNERS: tuple[Owner, ...] = (
    Owner(dynamocomponentdeployment.build, kinds.DCD, component_optional_kinds),
    Owner(dynamographdeployment.build, kinds.DGD, graph_optional_kinds),
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
    settings = dataclasses.replace(settings, apis=apis)
    collector = orphans.new_collector(mgr, settings)
    for owner in OWNERS:
        built = owner.build(mgr, settings)
        orphans.watch(collector, built.reconciler.owned)
        own_optional_kinds(mgr, apis, built, owner=owner.kind, optional=owner.optional(settings))
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


def grove_kinds(needed: Callable[[Capabilities], bool]) -> list[OptionalKind]:
    """The graph's PodCliqueSet (owned: its status carries Grove's verdicts) and the PodCliques and
    scaling groups Grove makes from it (read for readiness, mapped back to their graph)."""
    return [
        OptionalKind(kinds.POD_CLIQUE_SET, needed, CHILD_STATUS_CHANGED),
        OptionalKind(
            kinds.POD_CLIQUE, needed, GROVE_OBJECT_CHANGED, mapper=graph_of_grove_object, owned=False
        ),
        OptionalKind(
            kinds.POD_CLIQUE_SCALING_GROUP,
            needed,
            GROVE_OBJECT_CHANGED,
            mapper=graph_of_grove_object,
            owned=False,
        ),
    ]


# What the graph's Grove readiness (internal/dynamo/grove/readiness.py) reads of a PodClique or scaling
# group: a change elsewhere (conditions' times, scheduled/gated counts, template hashes) is no news.
_GROVE_STATUS_READ = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "observedGeneration",
)


def _what_grove_readiness_reads(obj: dict[str, Any]) -> tuple[Any, ...]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    return (
        meta.get("generation"),
        spec.get("replicas"),
        tuple(spec.get("cliqueNames") or ()),
        *(status.get(key) for key in _GROVE_STATUS_READ),
    )


# Grove makes these, so their creation is news to the graph (its status said "resource not found");
# after that only what readiness and scaling read.
GROVE_OBJECT_CHANGED = Funcs(
    on_update=lambda old, new: _what_grove_readiness_reads(old) != _what_grove_readiness_reads(new)
)


def graph_of_grove_object(obj: dict[str, Any]) -> list[str]:
    """The graph a PodClique or scaling group serves: the graph-name label Grove copies from our
    cliques, else its PodCliqueSet (named after the graph) as controller owner or `part-of` label."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    if not namespace:
        return []
    labels = meta.get("labels") or {}
    name = labels.get(consts.LABEL_GRAPH_DEPLOYMENT_NAME)
    if not name:
        for ref in meta.get("ownerReferences") or ():
            if ref.get("kind") == kinds.POD_CLIQUE_SET.kind and ref.get("controller"):
                name = ref.get("name")
    name = name or labels.get("app.kubernetes.io/part-of")
    return [f"{namespace}/{name}"] if name else []


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
