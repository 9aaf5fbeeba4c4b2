"""`dynamo-operator` without a subcommand: configure, connect, detect, wire, run until a signal."""

from __future__ import annotations

import asyncio
import gc
import os
import signal

import structlog
from dynamo_operator import storage_migration, webhook_setup, wiring
from dynamo_operator.context import detect_capabilities, settings_from
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.leaderelection.config import LeaderElectionConfig, new_identity
from dynamo_operator.internal.manager.manager import Manager, ManagerError
from dynamo_operator.internal.manager.options import ManagerOptions
from dynamo_operator.internal.observability.logging import configure_logging
from dynamo_operator.internal.observability.tracing import configure_tracing
from dynamo_operator.storage_version import stored_version_codecs

log = structlog.get_logger(__name__)


def manager_options(options: OperatorOptions) -> ManagerOptions:
    election = None
    if options.leader_elect:
        election = LeaderElectionConfig(
            name=options.leader_election_id,
            namespace=options.leader_election_namespace,
            identity=new_identity(),
            lease_duration=options.leader_election_lease_duration,
            renew_deadline=options.leader_election_renew_deadline,
            retry_period=options.leader_election_retry_period,
        )
    return ManagerOptions(
        namespace=options.namespace,
        metrics_bind_address=options.metrics_bind_address,
        metrics_secure=options.metrics_secure,
        metrics_cert_dir=options.metrics_cert_path or None,
        health_probe_bind_address=options.health_probe_bind_address,
        leader_election=election,
        max_concurrent_reconciles=options.max_concurrent_reconciles,
        group_kind_concurrency=options.group_kind_concurrency,
        creates_first=options.creates_first,
        graceful_shutdown_timeout=options.graceful_shutdown_timeout,
    )


def install_signal_handlers(mgr: Manager) -> None:
    """First SIGTERM/SIGINT: graceful stop. A second one: exit 1 at once (controller-runtime's rule)."""
    loop = asyncio.get_running_loop()
    received = 0

    def on_signal(signum: int) -> None:
        nonlocal received
        received += 1
        if received > 1:
            log.warning("Second signal, exiting immediately", signal=signal.Signals(signum).name)
            os._exit(1)
        log.info("Signal received, stopping", signal=signal.Signals(signum).name)
        mgr.stop()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum)


async def run_operator(options: OperatorOptions) -> int:
    """Returns the process exit code."""
    configure_logging(level=options.log_level, fmt=options.log_format)
    gc.set_threshold(*options.gc_threshold)
    tracer_provider = configure_tracing()
    if options.metrics_cert_path and not options.metrics_secure:
        log.warning("--metrics-cert-path has no effect without --metrics-secure")
    try:
        manager_opts = manager_options(options)
    except ValueError as err:
        log.error("Invalid options", error=str(err))
        return 1
    try:
        client = await Client.from_kubeconfig(
            options.kubeconfig, max_in_flight=options.max_requests_in_flight or None
        )
    except Exception as err:  # no kubeconfig, no service account, unreadable file: a clear line, exit 1
        log.error("Cannot configure the Kubernetes client", kubeconfig=options.kubeconfig, error=str(err))
        tracer_provider.shutdown()
        return 1
    try:
        async with client:
            settings = settings_from(options, await detect_capabilities(client))
            client.speak(await stored_version_codecs(client))
            if settings.grove == "true" and not settings.capabilities.grove:
                # Upstream's rule for orchestrators.grove.enabled=true: asked for and missing is a
                # configuration error, not something to discover graph by graph.
                log.error("--enable-grove=true but the grove.io PodCliqueSet API is not served")
                return 1
            mgr = Manager(client, options=manager_opts)
            wiring.register_controllers(mgr, settings)
            storage_migration.register(mgr)
            install_signal_handlers(mgr)
            # Conversions are served from start-up by every replica, and until the manager has stopped.
            async with webhook_setup.serving(client, options, mgr):
                log.info("Starting manager", namespace=options.namespace, leader_elect=options.leader_elect)
                await mgr.run()
    except ManagerError as err:
        log.error("Manager failed", error=str(err))
        return 1
    finally:
        tracer_provider.shutdown()
    return 0
