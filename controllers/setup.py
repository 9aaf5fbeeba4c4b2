"""Registers every controller on a manager. `register_all` is a flat list of calls, one per controller.

The operator context (built by the CLI from flags and API detection) is read duck-typed here, so
controllers need nothing from the `operator` package (which imports us): whatever it lacks falls
back to the generation defaults.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog
from dynamo_operator.controllers import (
    dynamographdeploymentrequest,
    dynamographdeploymentscalingadapter,
    dynamomodel,
    kinds,
    orphans,
)
from dynamo_operator.controllers.dynamocomponentdeployment import (
    DynamoComponentDeploymentReconciler,
    PullSecretNotifier,
    pod_informer,
    watch_pods,
)
from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
from dynamo_operator.internal.cache.interface import Informer
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.orphans import OrphanCollector
from dynamo_operator.internal.dynamo.context import Capabilities, GenContext, IngressDefaults
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.secrets.index import FIELD_SELECTOR, DockerSecretIndex, transform

log = structlog.get_logger(__name__)

DGD_CONTROLLER = "dynamographdeployment"
DCD_CONTROLLER = "dynamocomponentdeployment"
# Upstream refreshes the registry index every 60 s on top of the Secret events.
DOCKER_SECRET_REFRESH_SECONDS = 60.0

GenContextFor = Callable[[str], GenContext]


def register_all(mgr: Manager, ctx: Any) -> None:
    """Every controller of the operator, in one flat list."""
    index = DockerSecretIndex()
    gen_context = gen_context_factory(ctx, index)
    collector = orphans.new_collector(mgr, ctx)
    dcd = register_component_deployments(mgr, ctx, gen_context, collector)
    register_graph_deployments(mgr, ctx, gen_context, collector)
    orphans.register(mgr, collector)
    register_docker_secrets(mgr, index, dcd)
    dynamographdeploymentscalingadapter.register(mgr)
    dynamographdeploymentrequest.register(mgr, ctx)
    dynamomodel.register(mgr)


def capabilities_of(ctx: Any) -> Capabilities:
    """The optional APIs the CLI detected, as generation sees them."""
    caps = getattr(ctx, "capabilities", None)
    if isinstance(caps, Capabilities):
        return caps
    options = getattr(ctx, "options", None)
    return Capabilities(
        lws=bool(getattr(caps, "lws", False)),
        volcano=bool(getattr(caps, "volcano", False)),
        grove=bool(getattr(caps, "grove", False)),
        # VirtualServices are written only when a gateway is configured, as upstream does.
        istio=bool(getattr(caps, "istio", False))
        and bool(getattr(options, "istio_virtual_service_gateway", "")),
        gateway_inference_extension=bool(
            getattr(caps, "gateway_inference_extension", getattr(caps, "inference_extension", False))
        ),
    )


def gen_context_factory(ctx: Any, index: DockerSecretIndex) -> GenContextFor:
    """Per-namespace generation context: operator settings plus that namespace's pull secrets."""
    capabilities = capabilities_of(ctx)
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
    if opt("mpi_run_ssh_secret_name"):
        settings["mpi_ssh_secret_name"] = opt("mpi_run_ssh_secret_name")
    infra = {
        env: opt(flag)
        for env, flag in (
            ("PROMETHEUS_ENDPOINT", "prometheus_endpoint"),
            ("MODEL_EXPRESS_URL", "model_express_url"),
        )
        if opt(flag)
    }
    if infra:
        settings["infrastructure_env"] = infra

    def for_namespace(namespace: str) -> GenContext:
        return GenContext(
            namespace=namespace,
            capabilities=capabilities,
            docker_secrets=index.snapshot(namespace),
            ingress=ingress,
            **settings,
        )

    return for_namespace


def register_component_deployments(
    mgr: Manager, ctx: Any, gen_context: GenContextFor, collector: OrphanCollector | None = None
) -> Controller:
    caps = capabilities_of(ctx)
    pods = pod_informer(mgr.cache, namespace=mgr.options.namespace)
    reconciler = DynamoComponentDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(DCD_CONTROLLER),
        gen_context=gen_context,
        lws=caps.lws,
        istio=caps.istio,
        volcano=caps.volcano,
        pods=pods.store,
    )
    b = mgr.builder(DCD_CONTROLLER)
    reconciler.setup(b)
    controller = b.complete(reconciler)
    if collector is not None:
        orphans.watch(collector, reconciler.owned)
    watch_pods(pods, controller.queue)
    return controller


def register_graph_deployments(
    mgr: Manager, ctx: Any, gen_context: GenContextFor, collector: OrphanCollector | None = None
) -> Controller:
    reconciler = DynamoGraphDeploymentReconciler(
        client=mgr.client,
        cache=mgr.cache,
        recorder=mgr.event_recorder(DGD_CONTROLLER),
        gen_context=gen_context,
        inference_pools=capabilities_of(ctx).gateway_inference_extension,
    )
    b = mgr.builder(DGD_CONTROLLER)
    reconciler.setup(b)
    if collector is not None:
        orphans.watch(collector, reconciler.owned)
    return b.complete(reconciler)


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
