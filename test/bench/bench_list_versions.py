#!/usr/bin/env python3
"""Listing N graphs as v1beta1 (the storage version: no conversion) against the same list as v1alpha1
(every object converted by the operator's webhook), on a fresh local control plane.

    PYTHONSAFEPATH=1 .venv/bin/python test/bench/bench_list_versions.py [--graphs 1000] [--rounds 5]

The webhook is the operator's own wiring (operator/webhook_setup.py) in this process, on a loopback
address the CRDs' Service is routed to (hack/local_webhook.py). The graphs are created as v1beta1 with
two components each, and nothing reconciles them. Each round lists every graph in pages of 500 in
each version, alternating which goes first; the figures are the median round, seconds and per graph.
Bounded: --graphs and --rounds, and every wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "hack"), str(REPO / "test"), str(Path(__file__).resolve().parent)]

import bench_graph as bg  # noqa: E402
import local_webhook  # noqa: E402
import localcluster  # noqa: E402
import yaml  # noqa: E402
from dynamo_operator import webhook_setup  # noqa: E402
from dynamo_operator.flags import OperatorOptions  # noqa: E402
from dynamo_operator.internal import kinds  # noqa: E402
from dynamo_operator.internal.client.client import Client  # noqa: E402
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION  # noqa: E402
from dynamo_operator.internal.stored_version import older, speaking_v1alpha1  # noqa: E402
from testsupport.webhook import session_bundle_in_crds  # noqa: E402

CRD_DIR = REPO / "config" / "crd" / "bases"
NAMESPACE = "bench-list"
PAGE = 500


async def install_crds(api: Client) -> None:
    for path in sorted(CRD_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        await api.apply(CUSTOM_RESOURCE_DEFINITION, doc, field_manager="bench", force=True)

    async def established() -> bool:
        for path in sorted(CRD_DIR.glob("*.yaml")):
            crd = await api.get(
                CUSTOM_RESOURCE_DEFINITION, yaml.safe_load(path.read_text())["metadata"]["name"]
            )
            conditions = (crd.get("status") or {}).get("conditions") or []
            if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return False
        return True

    await bg.wait_until(established, timeout=60, what="CRDs established")


async def list_all(api: Client, version: str) -> tuple[float, int]:
    """Seconds to list every graph of the namespace in `version`, and how many came back."""
    resource = older(kinds.DGD) if version == "v1alpha1" else kinds.DGD
    started = time.perf_counter()
    count, token = 0, None
    while True:
        page = await api.list_page(resource, namespace=NAMESPACE, limit=PAGE, continue_token=token)
        count += len(page.items)
        if not (token := page.continue_token):
            return time.perf_counter() - started, count


async def main(args: argparse.Namespace) -> int:
    cluster = localcluster.LocalCluster(f"bench-list-{args.graphs}", nodes=1)
    with localcluster.running(cluster):
        plain = await Client.from_kubeconfig(cluster.kubeconfig)  # v1alpha1 reads go through the webhook
        writer = await Client.from_kubeconfig(
            cluster.kubeconfig, codecs=speaking_v1alpha1(kinds.DGD, kinds.DGDR)
        )
        try:
            await install_crds(plain)
            routed = local_webhook.main(
                ["--address", "127.0.0.1", f"--kubeconfig={cluster.kubeconfig}", str(CRD_DIR)]
            )
            assert routed == 0, "cannot route the CRDs' webhook"
            [ref] = local_webhook.service_refs(local_webhook._docs([str(CRD_DIR)]))
            options = OperatorOptions(
                leader_election_namespace=ref.namespace, webhook_bind_address=f"127.0.0.1:{ref.port}"
            )
            async with webhook_setup.serving(plain, options) as hook:
                assert hook is not None
                await bg.wait_until(
                    lambda: session_bundle_in_crds(plain, list(webhook_setup.CONVERTED_CRDS), ref.namespace),
                    timeout=60,
                    what="CA bundle in the CRDs",
                )
                await bg.make_namespace(plain, NAMESPACE)
                graphs: list[dict[str, Any]] = [bg.graph(f"g{i:05d}", NAMESPACE) for i in range(args.graphs)]
                await bg.bounded([lambda g=g: writer.create(kinds.DGD, g) for g in graphs])
                rounds: dict[str, list[float]] = {"v1beta1": [], "v1alpha1": []}
                for r in range(args.rounds):
                    order = ("v1beta1", "v1alpha1") if r % 2 == 0 else ("v1alpha1", "v1beta1")
                    for version in order:
                        seconds, count = await list_all(plain, version)
                        assert count == args.graphs, f"{version}: listed {count} of {args.graphs}"
                        rounds[version].append(seconds)
        finally:
            await plain.close()
            await writer.close()
    print(f"listing {args.graphs} two-component graphs, pages of {PAGE}, {args.rounds} rounds (median):")
    base = statistics.median(rounds["v1beta1"])
    for version, label in (("v1beta1", "stored version, no conversion"), ("v1alpha1", "through the webhook")):
        median = statistics.median(rounds[version])
        per = median / args.graphs * 1e6
        print(f"  {version:9} {median:7.3f} s  {per:7.0f} µs/graph  x{median / base:5.2f}   ({label})")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    sys.exit(asyncio.run(main(parser.parse_args())))
