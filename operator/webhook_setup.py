"""Wiring of the conversion webhook: its certificates (`--webhook-cert-mode`), its server, the readiness
check, and the converter (`dynamo_operator.api.conversion.convert`) for the operator's four converted kinds.

It runs beside the manager, not inside it: conversions are the API server's requests, needed by every
reader of a v1beta1 or v1alpha1 object whatever this replica is doing, so the server starts before the
caches sync, serves on leaders and standbys alike, and stops after the manager has stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cert.files import MountedCertificates
from dynamo_operator.internal.cert.inject import CABundleInjector
from dynamo_operator.internal.cert.selfsigned import SelfSignedCertificates
from dynamo_operator.internal.cert.state import Wanted, service_names
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.manager import http, tls
from dynamo_operator.internal.manager.manager import Manager, ManagerError
from dynamo_operator.internal.webhook.review import Converter
from dynamo_operator.internal.webhook.server import WebhookServer

log = structlog.get_logger(__name__)

# The CRDs whose conversion stanza names this webhook (DynamoModel has one version only).
CONVERTED_CRDS: tuple[str, ...] = tuple(
    f"{r.plural}.{r.group}" for r in (kinds.DGD, kinds.DCD, kinds.DGDR, kinds.DGDSA)
)
# A rotation serves the new certificate once every CRD carried its CA this long (the API servers'
# informers must have seen the CRD first); a short lifetime (tests) shortens it.
MAX_CA_GRACE = 30.0


def default_converter() -> Converter:
    from dynamo_operator.api.conversion import convert

    return convert


@dataclass(slots=True)
class Webhook:
    """What is running, for tests and probes."""

    server: WebhookServer
    certificates: SelfSignedCertificates | MountedCertificates
    injector: CABundleInjector | None
    tasks: list[asyncio.Task[Any]]

    @property
    def serving(self) -> bool:
        return self.server.serving and self.certificates.serving


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and (err := task.exception()) is not None:
        log.error("Conversion webhook task failed", task=task.get_name(), exc_info=err)


@contextlib.asynccontextmanager
async def serving(
    client: Client,
    options: OperatorOptions,
    mgr: Manager | None = None,
    *,
    convert: Converter | None = None,
    crd_names: Sequence[str] = CONVERTED_CRDS,
) -> AsyncIterator[Webhook | None]:
    """Run the webhook for the block; None when `--webhook-bind-address=0`. Raises ManagerError when
    mounted certificates cannot be read (start-up fails with a clear line)."""
    address = http.parse_bind_address(options.webhook_bind_address)
    if address is None:
        yield None
        return
    namespace = options.leader_election_namespace
    context = tls.server_context()
    injector: CABundleInjector | None = None
    certificates: SelfSignedCertificates | MountedCertificates
    if options.webhook_cert_mode == "external":
        certificates = MountedCertificates(context, options.webhook_cert_dir)
        try:
            certificates.load()
        except (OSError, ValueError) as err:
            raise ManagerError(
                f"cannot load the webhook certificate from {options.webhook_cert_dir}: {err}"
            ) from err
    else:
        certificates = SelfSignedCertificates(
            client,
            namespace=namespace,
            secret_name=options.webhook_secret_name,
            wanted=Wanted(
                dns_names=service_names(options.webhook_service_name, namespace),
                ip_addresses=("127.0.0.1",),
                lifetime=datetime.timedelta(seconds=options.webhook_cert_lifetime),
            ),
            context=context,
        )
        injector = CABundleInjector(
            client,
            crd_names,
            grace=min(MAX_CA_GRACE, options.webhook_cert_lifetime / 30),
            on_change=certificates.kick,
        )
        certificates.injector = injector
    server = WebhookServer(
        convert or default_converter(), host=address[0], port=address[1], ssl_context=context
    )
    hook = Webhook(server=server, certificates=certificates, injector=injector, tasks=[])
    if mgr is not None:
        mgr.add_readyz_check("conversion-webhook", lambda: hook.serving)

    async def start_serving() -> None:
        # A TLS server without a certificate would fail every handshake: listen once one is loaded.
        await certificates.ready.wait()
        await server.start()

    runs = [certificates.run(), start_serving()]
    if injector is not None:
        runs.append(injector.run())
    for coro in runs:
        task = asyncio.ensure_future(coro)
        task.add_done_callback(_log_failure)
        hook.tasks.append(task)
    log.info(
        "Starting the conversion webhook",
        address=f"{address[0]}:{address[1]}",
        cert_mode=options.webhook_cert_mode,
        crds=list(crd_names),
    )
    try:
        yield hook
    finally:
        await server.stop()
        for task in hook.tasks:
            task.cancel()
        await asyncio.gather(*hook.tasks, return_exceptions=True)
