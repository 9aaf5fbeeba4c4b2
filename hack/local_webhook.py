#!/usr/bin/env python3
"""Route the CRDs' conversion webhook to a host process, for a local control plane (`make run`, tests).

The CRDs name a Service (`dynamo-operator-webhook-service` in `dynamo-system`, port 9443), and nothing
implements Services here. An ExternalName Service of that name does: for a webhook, the API server
resolves it to `<externalName>:<the CRD's port>` and checks the certificate for
`<service>.<namespace>.svc`, the name the operator's certificate carries when it runs in that
namespace. So the CRDs stay exactly as shipped; only this Service differs from a cluster's, and the
operator listens on `<address>:<port>` (a loopback address: a test session takes one of its own, so
several sessions on one host never answer each other's API servers).

CLI: local_webhook.py --address 127.0.0.1 [--kubeconfig K] PATH...   (the CRD files or directories;
the Service reference is read from them). Prints the address the operator must listen on.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

FIELD_MANAGER = "dynamo-localcluster"


class ServiceRef(NamedTuple):
    name: str
    namespace: str
    port: int


def uses_webhook(doc: dict[str, Any]) -> bool:
    conversion = (doc.get("spec") or {}).get("conversion") or {}
    return doc.get("kind") == "CustomResourceDefinition" and conversion.get("strategy") == "Webhook"


def service_refs(docs: Iterable[dict[str, Any]]) -> set[ServiceRef]:
    """The Services the CRDs' conversion webhooks name (one, for this project's CRDs)."""
    refs = set()
    for doc in filter(uses_webhook, docs):
        ref = doc["spec"]["conversion"]["webhook"]["clientConfig"].get("service")
        if ref:
            refs.add(ServiceRef(ref["name"], ref["namespace"], int(ref.get("port", 443))))
    return refs


def manifests(ref: ServiceRef, address: str) -> list[dict[str, Any]]:
    """The namespace and the ExternalName Service that send the webhook's calls to `address`."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ref.namespace}},
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": ref.name, "namespace": ref.namespace},
            "spec": {
                "type": "ExternalName",
                "externalName": address,
                "ports": [{"name": "webhook", "port": ref.port, "protocol": "TCP"}],
            },
        },
    ]


def _docs(paths: Iterable[str]) -> list[dict[str, Any]]:
    import yaml  # the project venv's; run-local.sh and the tests use it

    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.yaml")) if p.is_dir() else [p]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    kubectl = ["kubectl", *([f"--kubeconfig={args.kubeconfig}"] if args.kubeconfig else [])]
    refs = service_refs(_docs(args.paths))
    if len(refs) != 1:
        print(
            f"local_webhook: expected one webhook Service in the CRDs, found {sorted(refs)}", file=sys.stderr
        )
        return 1
    [ref] = refs
    items = manifests(ref, args.address)
    # A Service of another type (config/default's ClusterIP one) cannot simply become ExternalName.
    current = subprocess.run(
        [*kubectl, "get", "service", "-n", ref.namespace, ref.name, "-o", "jsonpath={.spec.type}"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if current.returncode == 0 and current.stdout not in ("", "ExternalName"):
        subprocess.run(
            [*kubectl, "delete", "service", "-n", ref.namespace, ref.name], check=False, timeout=60
        )
    done = subprocess.run(
        [*kubectl, "apply", "--server-side", "--force-conflicts", f"--field-manager={FIELD_MANAGER}",
         "-f", "-"],
        input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
        text=True, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    sys.stderr.write(done.stdout + done.stderr)
    if done.returncode == 0:
        print(f"{args.address}:{ref.port} {ref.namespace}")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
