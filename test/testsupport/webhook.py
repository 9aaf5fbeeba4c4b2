"""The conversion webhook on the local control plane, with a test CRD of its own.

`widget_crd(group, url)`: a namespaced CRD `widgets.<group>` with two versions,
v1 (storage: `spec.replicas`) and v2 (`spec.count`), converted by webhook at `url` (a loopback URL:
nothing routes a Service to a host process, so the local control plane is given the address itself).
`widget_convert` is the converter the webhook is given. `conversions(...)` reads an object as v2 in a
bounded loop and counts what failed.

As a process (two replicas with leader election, for the leader-kill test):
    python test/testsupport/webhook.py --kubeconfig K --namespace NS --crd NAME --port P \
        --metrics-port M --probe-port H --lease-name L [--lifetime S]
It runs a manager without controllers (leader election, probes, metrics) and the operator's webhook
wiring (operator/webhook_setup.py) with `widget_convert`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import random
import signal
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound, TransportError
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource

VERSIONS = ("v1", "v2")


# -- the session's webhook: the project's CRDs routed to the session operator ---------------------------


CRD_DIR = Path(__file__).resolve().parents[2] / "config" / "crd" / "bases"


@functools.cache
def session_route() -> tuple[str, str, int]:
    """(address, namespace, port): the loopback address this test process's operator serves the
    webhook on (one of its own in 127.200.0.0-127.254.255.254, so that sessions sharing a host never
    answer each other's API servers), and the namespace and port the CRDs name."""
    import local_webhook  # hack/ (on the tests' path; not when this file runs as a replica)

    [ref] = local_webhook.service_refs(local_webhook._docs([str(CRD_DIR)]))
    rng = random.Random()
    for _ in range(50):
        address = f"127.{rng.randrange(200, 255)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        with socket.socket() as s:
            try:
                s.bind((address, ref.port))
            except OSError:
                continue
        return address, ref.namespace, ref.port
    raise RuntimeError("no free loopback address for the session's webhook")


def route_session_webhook(kubeconfig: str) -> None:
    """The ExternalName Service that sends the CRDs' conversions to the session operator
    (hack/local_webhook.py); replaces a Service of another type (config/default's)."""
    import local_webhook

    address, _, _ = session_route()
    argv = ["--address", address, f"--kubeconfig={kubeconfig}", str(CRD_DIR)]
    assert local_webhook.main(argv) == 0, "cannot route the CRDs' conversion webhook"


def widget_resource(group: str, version: str) -> Resource:
    return Resource(group, version, "widgets", "Widget")


def widget_convert(obj: Mapping[str, object], to: str) -> dict[str, object]:
    """v1 `spec.replicas` <-> v2 `spec.count`; `spec.poison: true` cannot be converted."""
    out: dict[str, Any] = {**obj, "apiVersion": to}
    spec = dict(obj.get("spec") or {})  # type: ignore[call-overload]
    if spec.get("poison"):
        raise ValueError("spec.poison cannot be converted")
    if to.endswith("/v2") and "replicas" in spec:
        spec["count"] = spec.pop("replicas")
    elif to.endswith("/v1") and "count" in spec:
        spec["replicas"] = spec.pop("count")
    out["spec"] = spec
    return out


def widget_crd(group: str, url: str | None, *, ca_bundle: str | None = None) -> dict[str, Any]:
    schema = {
        "openAPIV3Schema": {
            "type": "object",
            "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }
    }
    client_config: dict[str, Any] = {"url": url}
    if ca_bundle is not None:
        client_config["caBundle"] = ca_bundle
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {"name": v, "served": True, "storage": v == "v1", "schema": schema} for v in VERSIONS
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client_config},
            },
        },
    }


@dataclass
class Tally:
    ok: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


async def convert_once(api: Client, group: str, ns: str, name: str, tally: Tally) -> None:
    try:
        got = await api.get(widget_resource(group, "v2"), name, namespace=ns)
        assert got["apiVersion"] == f"{group}/v2" and "count" in got["spec"], got
        tally.ok += 1
    except (ApiError, TransportError) as err:
        tally.failed += 1
        if len(tally.errors) < 10:
            tally.errors.append(str(err))


async def conversions(
    api: Client, group: str, ns: str, name: str, *, stop: asyncio.Event, max_count: int, max_seconds: float
) -> Tally:
    """Read `name` as v2 (a conversion each time: v1 is stored) until `stop`, `max_count` reads or
    `max_seconds`, whichever comes first."""
    tally = Tally()
    deadline = time.monotonic() + max_seconds
    while not stop.is_set() and tally.ok + tally.failed < max_count and time.monotonic() < deadline:
        await convert_once(api, group, ns, name, tally)
        await asyncio.sleep(0.02)
    return tally


class SessionWebhook:
    """The operator's webhook wiring (operator/webhook_setup.py, default converter and CRDs) on a thread
    of its own with its own event loop and client, for the session operator.

    Not on the tests' loop: a test that runs kubectl synchronously blocks that loop, and a kubectl call
    that needs a conversion would then wait on a webhook that cannot answer (the API server gives up
    the TLS handshake after 10 s)."""

    def __init__(self, kubeconfig: str) -> None:
        self._kubeconfig = kubeconfig
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="session-webhook", daemon=True)

    def start(self, timeout: float = 60.0) -> None:
        self._thread.start()
        if not self._ready.wait(timeout) or self._error is not None:
            raise RuntimeError(f"the session's conversion webhook did not start: {self._error}")

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        from dynamo_operator import webhook_setup
        from dynamo_operator.flags import OperatorOptions

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        address, namespace, port = session_route()
        options = OperatorOptions(
            leader_election_namespace=namespace, webhook_bind_address=f"{address}:{port}"
        )
        try:
            async with (
                await Client.from_kubeconfig(self._kubeconfig) as client,
                webhook_setup.serving(client, options) as hook,
            ):
                assert hook is not None
                for _ in range(600):  # bounded: 60 s
                    if hook.serving:
                        break
                    await asyncio.sleep(0.1)
                # Ready once the API server can verify it too: until the CA bundle is in every
                # converted CRD, a test's first v1beta1 read (plain `kubectl get`) fails on the CA.
                crds = list(webhook_setup.CONVERTED_CRDS)
                for _ in range(600):  # bounded: 60 s
                    if await session_bundle_in_crds(client, crds, namespace):
                        break
                    await asyncio.sleep(0.1)
                self._ready.set()
                await self._stop.wait()
        except BaseException as err:
            self._error = err
            self._ready.set()
            raise


async def session_bundle_in_crds(client: Client, names: list[str], namespace: str = "dynamo-system") -> bool:
    """Whether every CRD of `names` carries the CA bundle of the session operator's Secret (conversions
    fail until then: the API server cannot verify the webhook)."""
    from dynamo_operator.flags import DEFAULT_WEBHOOK_SECRET
    from dynamo_operator.internal.cert.inject import carried
    from dynamo_operator.internal.cert.selfsigned import decode
    from dynamo_operator.internal.client.resource import SECRET

    try:
        wanted = decode(await client.get(SECRET, DEFAULT_WEBHOOK_SECRET, namespace=namespace)).get("ca.crt")
    except NotFound:
        return False
    for name in names:
        if carried(await client.get(CUSTOM_RESOURCE_DEFINITION, name)) != wanted:
            return False
    return True


# -- as a process -------------------------------------------------------------------------------------


async def _replica(args: argparse.Namespace) -> int:
    from dynamo_operator import webhook_setup
    from dynamo_operator.flags import OperatorOptions
    from dynamo_operator.internal.leaderelection import LeaderElectionConfig, new_identity
    from dynamo_operator.internal.manager import Manager, ManagerError, ManagerOptions
    from dynamo_operator.internal.observability.logging import configure_logging

    configure_logging(level="info", fmt="console")
    client = await Client.from_kubeconfig(args.kubeconfig)
    election = LeaderElectionConfig(
        name=args.lease_name,
        namespace=args.namespace,
        identity=new_identity(),
        lease_duration=8.0,
        renew_deadline=5.0,
        retry_period=1.0,
    )
    mgr = Manager(
        client,
        options=ManagerOptions(
            namespace=args.namespace,
            metrics_bind_address=f"127.0.0.1:{args.metrics_port}",
            health_probe_bind_address=f"127.0.0.1:{args.probe_port}",
            leader_election=election,
        ),
    )
    options = OperatorOptions(
        leader_election_namespace=args.namespace,
        webhook_bind_address=f"127.0.0.1:{args.port}",
        webhook_cert_lifetime=args.lifetime,
    )
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, mgr.stop)
    try:
        async with (
            client,
            webhook_setup.serving(client, options, mgr, convert=widget_convert, crd_names=[args.crd]),
        ):
            await mgr.run()
    except ManagerError as err:
        print(f"manager failed: {err}", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    for flag in ("--kubeconfig", "--namespace", "--crd", "--lease-name"):
        parser.add_argument(flag, required=True)
    for flag in ("--port", "--metrics-port", "--probe-port"):
        parser.add_argument(flag, type=int, required=True)
    parser.add_argument("--lifetime", type=float, default=365 * 24 * 3600.0)
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(_replica(args))
    return 1


if __name__ == "__main__":
    sys.exit(main())
