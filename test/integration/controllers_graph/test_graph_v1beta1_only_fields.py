"""What only v1beta1 can say about a pod reaches the pods the operator makes, on a real API server.

Upstream's trtllm agg-with-config example mounts a ConfigMap key as a file (`readOnly`, `subPath`);
a v1beta1 worker may also name a pod template container as its `frontendSidecar`. v1alpha1, the form
generation reads, has no field for either: the conversion keeps them in the reserved annotation and
generation reads them back (internal/dynamo/common/remainder.py). Applied with kubectl as v1beta1,
the stored DCD holds them where upstream's does and the Deployment carries them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator
from testsupport.webhook import session_bundle_in_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

EXAMPLE = (
    Path(__file__).resolve().parents[3]
    / ".."
    / "shared"
    / "upstream-examples-2a6da14c"
    / "examples-applied"
    / "backends_trtllm_agg-with-config.yaml"
)
MOUNT_PATH = "/workspace/examples/backends/trtllm/engine_configs/qwen3/agg.yaml"
TIMEOUT = 120.0
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"


def sidecar_graph(name: str) -> dict[str, Any]:
    main = {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}
    sidecar = {
        "name": "sidecar-frontend",
        "image": IMAGE,
        "args": ["-m", "dynamo.frontend", "--router-mode", "direct"],
    }
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "vllm",
            "components": [
                {
                    "name": "worker",
                    "type": "worker",
                    "frontendSidecar": "sidecar-frontend",
                    "podTemplate": {"spec": {"containers": [main, sidecar]}},
                }
            ],
        },
    }


def container(pod_spec: dict[str, Any], name: str) -> dict[str, Any]:
    [found] = [c for c in pod_spec["containers"] if c["name"] == name]
    return found


async def apply(kubectl: Kubectl, api: Client, ns: str, path: Path) -> None:
    # The API server can call the webhook only once the session operator's CA is in the CRDs.
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    # In a thread: the webhook answering the API server runs on this event loop.
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(path))


async def worker_deployment(api: Client, ns: str, prefix: str) -> dict[str, Any]:
    [deployment] = await eventually(
        lambda: api.list(kinds.DEPLOYMENT, namespace=ns),
        until=lambda xs: [d for d in xs if d["metadata"]["name"].startswith(prefix)] != [],
        timeout=TIMEOUT,
    )
    return deployment


async def test_a_read_only_sub_path_mount_reaches_the_stored_dcd_and_the_deployment(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str
) -> None:
    assert EXAMPLE.is_file(), f"{EXAMPLE} is missing (the shared reference data)"
    await apply(kubectl, api, ns, EXAMPLE)
    deployments = await eventually(
        lambda: api.list(kinds.DEPLOYMENT, namespace=ns),
        until=lambda xs: any("trtllmworker" in d["metadata"]["name"] for d in xs),
        timeout=TIMEOUT,
    )
    [deployment] = [d for d in deployments if "trtllmworker" in d["metadata"]["name"]]
    main = container(deployment["spec"]["template"]["spec"], "main")
    [mount] = [m for m in main["volumeMounts"] if m["mountPath"] == MOUNT_PATH]
    assert mount == {
        "name": "nvidia-config",
        "mountPath": MOUNT_PATH,
        "readOnly": True,
        "subPath": "agg.yaml",
    }

    dcds = await asyncio.to_thread(
        kubectl.json, "get", "dynamocomponentdeployments.v1beta1.nvidia.com", "-n", ns
    )
    [dcd] = [d for d in dcds["items"] if "trtllmworker" in d["metadata"]["name"]]
    stored_main = container(dcd["spec"]["podTemplate"]["spec"], "main")
    assert {"readOnly": True, "subPath": "agg.yaml"}.items() <= stored_main["volumeMounts"][0].items()


async def test_a_named_frontend_sidecar_is_completed_on_the_deployment(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(sidecar_graph("side")))
    await apply(kubectl, api, ns, path)
    deployment = await worker_deployment(api, ns, "side-worker")
    sidecar = container(deployment["spec"]["template"]["spec"], "sidecar-frontend")
    assert sidecar["command"] == ["python3"]
    assert sidecar["args"] == ["-m", "dynamo.frontend", "--router-mode", "direct"]
    assert {e["name"]: e.get("value") for e in sidecar["env"]}["DYN_COMPONENT"] == "frontend"
    assert sidecar["readinessProbe"]["httpGet"]["path"] == "/health"

    dcds = await asyncio.to_thread(
        kubectl.json, "get", "dynamocomponentdeployments.v1beta1.nvidia.com", "-n", ns
    )
    assert [d["spec"].get("frontendSidecar") for d in dcds["items"]] == ["sidecar-frontend"]
