#!/usr/bin/env python3
"""Point the CRDs' conversion webhook at a loopback URL, for a local control plane (`make run`, tests).

The CRDs name a Service (`dynamo-operator-webhook-service`), which nothing routes to a host process
here, and an ExternalName Service does not help either: the API server would dial its external name
on the CRD's port (443 by default), not on the operator's. So, on a local control plane only, each
CRD's `clientConfig` becomes `url: https://127.0.0.1:<port>/convert`; the operator's certificate names
127.0.0.1, and the operator still puts its CA bundle in, as in a cluster.

Two steps, because the CRDs were applied with `service` (server-side apply: by localcluster, a test
fixture, or `kubectl apply --server-side`): a JSON merge patch that sets `url` and removes `service`
(which also drops every manager's ownership of `service`), then an apply of the same CRDs carrying
`url` under the caller's field manager, so later applies of them do not bring `service` back beside it.

CLI: local_webhook.py --url URL [--kubeconfig K] [--field-manager M] PATH...  (YAML files or directories:
every document is applied, the CRDs converted by webhook with `url`)
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def uses_webhook(doc: dict[str, Any]) -> bool:
    conversion = (doc.get("spec") or {}).get("conversion") or {}
    return doc.get("kind") == "CustomResourceDefinition" and conversion.get("strategy") == "Webhook"


def with_url(doc: dict[str, Any], url: str) -> dict[str, Any]:
    """The CRD with its conversion webhook at `url` (no `service`); other documents unchanged."""
    if not uses_webhook(doc):
        return doc
    out = copy.deepcopy(doc)
    config = out["spec"]["conversion"]["webhook"].setdefault("clientConfig", {})
    config.pop("service", None)
    config["url"] = url
    return out


def merge_patch(url: str) -> dict[str, Any]:
    """What turns a CRD's client config into `url` whatever it held (a merge patch: null deletes)."""
    return {"spec": {"conversion": {"webhook": {"clientConfig": {"service": None, "url": url}}}}}


def _docs(paths: Iterable[str]) -> list[dict[str, Any]]:
    import yaml  # the project venv's; run-local.sh uses it

    files: list[Path] = []
    for p in map(Path, paths):
        files += sorted(p.glob("*.yaml")) if p.is_dir() else [p]
    return [d for f in files for d in yaml.safe_load_all(f.read_text()) if d]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--kubeconfig", default=None)
    parser.add_argument("--field-manager", default="dynamo-localcluster")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    kubectl = ["kubectl", *([f"--kubeconfig={args.kubeconfig}"] if args.kubeconfig else [])]
    docs = _docs(args.paths)
    for doc in filter(uses_webhook, docs):
        name = doc["metadata"]["name"]
        subprocess.run(
            [*kubectl, "patch", "crd", name, "--type=merge", "-p", json.dumps(merge_patch(args.url))],
            check=False,  # absent: the apply below creates it
            capture_output=True,
            timeout=60,
        )
    listing = {"apiVersion": "v1", "kind": "List", "items": [with_url(d, args.url) for d in docs]}
    done = subprocess.run(
        [*kubectl, "apply", "--server-side", "--force-conflicts", f"--field-manager={args.field_manager}",
         "-f", "-"],
        input=json.dumps(listing), text=True, capture_output=True, timeout=120, check=False,
    )  # fmt: skip
    sys.stderr.write(done.stdout + done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
