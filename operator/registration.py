"""Registers every controller on a manager. `register_all` is a flat list of calls, one per controller.

The operator context (built by the CLI from flags and API detection) is read duck-typed here, so
controllers need nothing from the `operator` package (which imports us): whatever it lacks falls
back to the generation defaults.

Optional APIs are not fixed at start-up: the context's capabilities only seed `OptionalApiWatch`,
which follows their CRDs. Generation contexts read its current value on every reconcile, and the
child kinds that need an optional API are owned through `OptionalOwnership` (informer, handler and
prune list switched with the API), never through the builder.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from typing import Any

import structlog
from dynamo_operator import orphans
from dynamo_operator.cache_shapes import CHILD_SHAPES
from dynamo_operator.controllers import (
    dynamographdeploymentrequest,
    dynamographdeploymentscalingadapter,
    dynamomodel,
)
from dynamo_operator.controllers.dynamocomponentdeployment import (
    DynamoComponentDeploymentReconciler,
    PullSecretNotifier,
    pod_informer,
    watch_pods,
)
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler, mpi_ssh_secret
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.cache.interface import Informer
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.orphans import OrphanCollector
from dynamo_operator.internal.controller.predicates import CHILD_CONTENT_CHANGED, CHILD_STATUS_CHANGED, Funcs
from dynamo_operator.internal.dynamo.context import Capabilities, GenContext, IngressDefaults
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.secrets.index import FIELD_SELECTOR, DockerSecretIndex, transform
from dynamo_operator.operator_metrics import ResourceCounter, observed
from dynamo_operator.optional_api_watch import OptionalApiWatch, crd_presence
from dynamo_operator.optional_ownership import OptionalKind, OptionalOwnership, OwningReconciler

log = structlog.get_logger(__name__)

DGD_CONTROLLER = "dynamographdeployment"
DCD_CONTROLLER = "dynamocomponentdeployment"
# Upstream refreshes the registry index every 60 s on top of the Secret events.
DOCKER_SECRET_REFRESH_SECONDS = 60.0

GenContextFor = Callable[[str], GenContext]


def register_all(mgr: Manager, ctx: Any) -> OptionalApiWatch:
    """Every controller of the operator, in one flat list; returns the optional-API watch."""
    for resource, shape in CHILD_SHAPES.items():  # before any informer of these kinds exists
        mgr.cache.set_shape(resource, shape)
    index = DockerSecretIndex()
    apis = watch_optional_apis(mgr, capabilities_of(ctx))
    gen_context = gen_context_factory(ctx, index, capabilities=lambda: apis.current)
    collector = orphans.new_collector(mgr, ctx)
    dcd = register_component_deployments(mgr, ctx, gen_context, apis, collector)
    register_graph_deployments(mgr, ctx, gen_context, apis, collector)
    mpi_ssh_secret.register(mgr, gen_context)
    orphans.register(mgr, collector)
    register_docker_secrets(mgr, index, dcd)
    dynamographdeploymentscalingadapter.register(mgr)
    dynamographdeploymentrequest.register(mgr, ctx)
    dynamomodel.register(mgr, unload_grace=ctx.options.lora_unload_grace)
    # Not leader-only, as upstream: every replica's /metrics shows the counts from its warm cache.
    mgr.add_runnable(ResourceCounter(mgr.cache).run, needs_leader=False, name="resource-counter")
    return apis


def capabilities_of(ctx: Any) -> Capabilities:
    """The optional APIs the CLI detected at start-up (the seed of `OptionalApiWatch`)."""
    caps = getattr(ctx, "capabilities", None)
    if isinstance(caps, Capabilities):
        return caps
    return Capabilities(
        **{field.name: bool(getattr(caps, field.name, False)) for field in dataclasses.fields(Capabilities)}
    )


def generation_capabilities(served: Capabilities, ctx: Any) -> Capabilities:
    """What generation may use of the served APIs: VirtualServices are written only when a gateway is
    configured, as upstream does; Grove only when `--enable-grove` is not `false`."""
    options = getattr(ctx, "options", None)
    gateway = bool(getattr(options, "istio_virtual_service_gateway", ""))
    grove = str(getattr(options, "enable_grove", "false") or "false") != "false"
    return dataclasses.replace(served, istio=served.istio and gateway, grove=served.grove and grove)


def watch_optional_apis(mgr: Manager, initial: Capabilities) -> OptionalApiWatch:
    """The CRD informer (metadata only, trimmed) and the loop that keeps the capabilities current."""
    crds = mgr.cache.informer(CUSTOM_RESOURCE_DEFINITION, metadata_only=True, transform=crd_presence)
    watch = OptionalApiWatch(client=mgr.client, crds=crds.store, initial=initial)
    crds.add_event_handler(watch)
    # Not leader-only: a standby keeps its informers and its view of the APIs warm as well.
    mgr.add_runnable(watch.run, needs_leader=False, name="optional-api-watch")
    return watch


def gen_context_factory(
    ctx: Any, index: DockerSecretIndex, *, capabilities: Callable[[], Capabilities]
) -> GenContextFor:
    """Per-namespace generation context: operator settings, the optional APIs served at this moment
    (`capabilities()` is read on every call) and that namespace's pull secrets."""
    options = getattr(ctx, "options", None)

    def opt(name: str) -> str:
        return str(getattr(options, name, "") or "")

    ingress = IngressDefaults(
        controller_class_name=opt("ingress_controller_class_name"),
        tls_secret_name=opt("ingress_controller_tls_secret_name"),
        host_suffix=opt("ingress_host_suffix"),
        virtual_service_gateway=opt("istio_virtual_service_gateway"),
    )
    settings: dict[str, Any] = {}
    if opt("planner_cluster_role_name"):
        settings["planner_cluster_role"] = opt("planner_cluster_role_name")
    if opt("epp_cluster_role_name"):
        settings["epp_cluster_role"] = opt("epp_cluster_role_name")
    if opt("mpi_run_ssh_secret_name"):
        settings["mpi_ssh_secret_name"] = opt("mpi_run_ssh_secret_name")
    if opt("mpi_run_ssh_secret_namespace"):
        settings["mpi_ssh_secret_namespace"] = opt("mpi_run_ssh_secret_namespace")
    if opt("discovery_backend"):
        settings["discovery_backend"] = opt("discovery_backend")
    infra = {
        env: opt(flag)
        for env, flag in (
            (consts.ENV_NATS_SERVER, "nats_address"),
            (consts.ENV_ETCD_ENDPOINTS, "etcd_address"),
            (consts.ENV_PROMETHEUS_ENDPOINT, "prometheus_endpoint"),
            (consts.ENV_MODEL_EXPRESS_URL, "model_express_url"),
        )
        if opt(flag)
    }
    if infra:
        settings["infrastructure_env"] = infra
    if opt("operator_version") and opt("operator_version") != "unknown":
        settings["operator_version"] = opt("operator_version")

    def for_namespace(namespace: str) -> GenContext:
        return GenContext(
            namespace=namespace,
            capabilities=generation_capabilities(capabilities(), ctx),
            docker_secrets=index.snapshot(namespace),
            ingress=ingress,
            **settings,
        )

    return for_namespace


def register_component_deployments(
    mgr: Manager,
    ctx: Any,
    gen_context: GenContextFor,
    apis: OptionalApiWatch,
    collector: OrphanCollector | None = None,
) -> Controller:
    pods = pod_informer(mgr.cache, namespace=mgr.options.namespace)
    reconciler = DynamoComponentDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(DCD_CONTROLLER),
        gen_context=gen_context,
        # The optional kinds (LWS, PodGroup, VirtualService, ResourceClaimTemplate) are owned through
        # OptionalOwnership.
        lws=False,
        istio=False,
        volcano=False,
        pods=pods.store,
    )
    b = mgr.builder(DCD_CONTROLLER)
    reconciler.setup(b)
    controller = b.complete(observed(reconciler, kinds.DCD))
    if collector is not None:
        orphans.watch(collector, reconciler.owned)
    watch_pods(pods, controller.queue)
    own_optional_kinds(
        mgr,
        apis,
        reconciler,
        controller,
        owner=kinds.DCD,
        optional=[
            OptionalKind(kinds.LWS, lambda c: c.lws, CHILD_STATUS_CHANGED),  # its status drives ours
            OptionalKind(kinds.POD_GROUP, lambda c: c.lws and c.volcano, CHILD_CONTENT_CHANGED),
            OptionalKind(
                kinds.VIRTUAL_SERVICE,
                lambda c: generation_capabilities(c, ctx).istio,
                CHILD_CONTENT_CHANGED,
            ),
            # gpuMemoryService's claim templates (DRA, a built-in API).
            OptionalKind(kinds.RESOURCE_CLAIM_TEMPLATE, lambda c: c.dra, CHILD_CONTENT_CHANGED),
        ],
    )
    return controller


def register_graph_deployments(
    mgr: Manager,
    ctx: Any,
    gen_context: GenContextFor,
    apis: OptionalApiWatch,
    collector: OrphanCollector | None = None,
) -> Controller:
    reconciler = DynamoGraphDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(DGD_CONTROLLER),
        gen_context=gen_context,
        inference_pools=False,  # owned through OptionalOwnership
    )
    b = mgr.builder(DGD_CONTROLLER)
    reconciler.setup(b)
    controller = b.complete(observed(reconciler, kinds.DGD))
    if collector is not None:
        orphans.watch(collector, reconciler.owned)
    own_optional_kinds(
        mgr,
        apis,
        reconciler,
        controller,
        owner=kinds.DGD,
        optional=[
            OptionalKind(
                kinds.INFERENCE_POOL, lambda c: c.gateway_inference_extension, CHILD_CONTENT_CHANGED
            ),
            *grove_kinds(lambda c: generation_capabilities(c, ctx).grove),
        ],
    )
    return controller


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


# What the graph's Grove readiness (internal/dynamo/grove_status.py) reads of a PodClique or scaling
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
    reconciler: OwningReconciler,
    controller: Controller,
    *,
    owner: Resource,
    optional: list[OptionalKind],
) -> OptionalOwnership:
    """Own the `optional` kinds while their APIs are served (from now on, and whenever that changes);
    every change requeues each object of `owner`."""
    ownership = OptionalOwnership(
        cache=mgr.cache,
        reconciler=reconciler,
        queue=controller.queue,
        owner=owner,
        namespace=mgr.options.namespace,
        kinds=optional,
    )
    ownership.start(apis.current)
    apis.subscribe(ownership)
    return ownership


def register_docker_secrets(mgr: Manager, index: DockerSecretIndex, dcd: Controller) -> None:
    """Registry Secrets only (field selector on type; transform keeps metadata and the one data key),
    feeding the index; a namespace whose index changed gets its DCDs reconciled again."""

    def requeue_namespace(namespace: str) -> None:
        for obj in mgr.cache.by_index(kinds.DCD, "namespace", namespace):
            meta = obj["metadata"]
            dcd.queue.add(f"{meta['namespace']}/{meta['name']}")

    informer: Informer = mgr.cache.informer(
        kinds.SECRET, namespace=mgr.options.namespace, field_selector=FIELD_SELECTOR, transform=transform
    )
    notifier = PullSecretNotifier(index, on_change=requeue_namespace)
    informer.add_event_handler(notifier)

    async def refresh_periodically() -> None:
        while True:
            await asyncio.sleep(DOCKER_SECRET_REFRESH_SECONDS)
            notifier.refresh(informer.store.list())

    mgr.add_runnable(refresh_periodically, needs_leader=False, name="docker-secret-refresh")
