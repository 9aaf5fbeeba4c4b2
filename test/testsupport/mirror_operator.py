"""A small generic operator for runtime tests: it mirrors labelled ConfigMaps.

ConfigMap `x` labelled `mirror=true` → ConfigMap `x-mirror` (same namespace, same data), controlled
by `x` through an ownerReference and annotated with the identity of the process that wrote it. The
source's deletion deletes the mirror. Nothing here knows about Dynamo.

In-process: `register_mirror(mgr, identity=...)`. As a process (for leader-election tests):
    python test/testsupport/mirror_operator.py --kubeconfig K --namespace NS \
        --metrics-bind-address 127.0.0.1:P1 --health-probe-bind-address 127.0.0.1:P2 \
        --leader-elect --leader-election-id ID --identity-file F [--lease-duration 8 ...]
SIGTERM/SIGINT stop it gracefully (exit 0); a lost Lease exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CONFIG_MAP, split_key
from dynamo_operator.internal.controller import Result, label_selector
from dynamo_operator.internal.leaderelection import LeaderElectionConfig, new_identity
from dynamo_operator.internal.manager import Manager, ManagerError, ManagerOptions
from dynamo_operator.internal.observability.logging import configure_logging

CONTROLLER_NAME = "configmap-mirror"
SOURCE_LABEL = "mirror"
MIRROR_SUFFIX = "-mirror"
RECONCILED_BY = "mirror.test.dynamo/reconciled-by"
FIELD_MANAGER = "mirror-operator"


def mirror_name(source: str) -> str:
    return f"{source}{MIRROR_SUFFIX}"


class MirrorReconciler:
    """Keeps `<name>-mirror` equal to each labelled source ConfigMap; reads from the cache."""

    def __init__(self, mgr: Manager, *, identity: str) -> None:
        self._client = mgr.client
        self._cache = mgr.cache
        self._identity = identity
        self._recorder = mgr.event_recorder(CONTROLLER_NAME)

    async def reconcile(self, key: str) -> Result:
        namespace, name = split_key(key)
        assert namespace is not None
        source = self._cache.get(CONFIG_MAP, key)
        if source is None or (source["metadata"].get("labels") or {}).get(SOURCE_LABEL) != "true":
            with contextlib.suppress(NotFound):
                await self._client.delete(CONFIG_MAP, mirror_name(name), namespace=namespace)
            return Result()
        current = self._cache.get(CONFIG_MAP, f"{namespace}/{mirror_name(name)}")
        if current is not None and current.get("data") == source.get("data"):
            return Result()  # converged: no write
        await self._client.apply(CONFIG_MAP, self._desired(source), field_manager=FIELD_MANAGER)
        self._recorder.event(
            source, type="Normal", reason="Mirrored", message=f"mirrored to {mirror_name(name)}"
        )
        return Result()

    def _desired(self, source: Obj) -> dict[str, Any]:
        meta = source["metadata"]
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": mirror_name(meta["name"]),
                "namespace": meta["namespace"],
                "annotations": {RECONCILED_BY: self._identity},
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": meta["name"],
                        "uid": meta["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "data": dict(source.get("data") or {}),
        }


def register_mirror(mgr: Manager, *, identity: str, max_concurrent_reconciles: int = 2) -> None:
    """The mirror controller: For labelled ConfigMaps, Owns their mirrors."""
    reconciler = MirrorReconciler(mgr, identity=identity)
    (
        mgr.builder(CONTROLLER_NAME)
        .for_(CONFIG_MAP, label_selector({SOURCE_LABEL: "true"}))
        .owns(CONFIG_MAP)
        .with_options(max_concurrent_reconciles=max_concurrent_reconciles)
        .complete(reconciler)
    )


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="mirror_operator")
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--metrics-bind-address", default="0")
    p.add_argument("--health-probe-bind-address", default="0")
    p.add_argument("--leader-elect", action="store_true")
    p.add_argument("--leader-election-id", default="mirror-operator")
    p.add_argument("--lease-duration", type=float, default=15.0)
    p.add_argument("--renew-deadline", type=float, default=10.0)
    p.add_argument("--retry-period", type=float, default=2.0)
    p.add_argument("--graceful-shutdown-timeout", type=float, default=10.0)
    p.add_argument("--identity-file", type=Path)
    return p.parse_args(argv)


async def _run(args: argparse.Namespace) -> int:
    identity = new_identity()
    if args.identity_file:
        args.identity_file.write_text(identity)
    election = None
    if args.leader_elect:
        election = LeaderElectionConfig(
            name=args.leader_election_id,
            namespace=args.namespace,
            identity=identity,
            lease_duration=args.lease_duration,
            renew_deadline=args.renew_deadline,
            retry_period=args.retry_period,
        )
    options = ManagerOptions(
        namespace=args.namespace,
        metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address,
        leader_election=election,
        graceful_shutdown_timeout=args.graceful_shutdown_timeout,
    )
    async with await Client.from_kubeconfig(args.kubeconfig) as client:
        mgr = Manager(client, options=options)
        register_mirror(mgr, identity=identity)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, mgr.stop)
        try:
            await mgr.run()
        except ManagerError:
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    configure_logging(level="info", fmt="json")
    return asyncio.run(_run(_parse(argv)))


if __name__ == "__main__":
    sys.exit(main())
