"""A refused graph is told what to fix in the terms of the stored version, v1beta1, on a real API server.

A v1beta1 worker mounts a volume its pod does not declare, or names no image; a v1alpha1 one asks
for failover in a graph without per-container discovery. The schema cannot see any of these: the
graph reconciler refuses the graph whole (`Ready=False`, `InvalidSpec`, one Warning Event, nothing
written) and names the field as v1beta1 spells it (`spec.components[name=...]`), whichever version
the manifest was written in (generation reads the v1alpha1 view; its paths are rewritten by
internal/dynamo/common/stored_terms.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.objects import condition
from testsupport.operator import RunningOperator
from testsupport.webhook import session_bundle_in_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(240)]

TIMEOUT = 120.0
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"
MOUNT = "spec.components[name=worker].podTemplate.spec.containers[name=main].volumeMounts[name=cache]"
VOLUMES = "spec.components[name=worker].podTemplate.spec.volumes"


def beta_graph(name: str) -> dict[str, Any]:
    main = {
        "name": "main",
        "image": IMAGE,
        "command": ["python3", "-m", "dynamo.vllm"],
        "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
    }
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {
            "components": [
                {"name": "worker", "type": "worker", "podTemplate": {"spec": {"containers": [main]}}}
            ]
        },
    }


def frontend_and_imageless_worker(name: str) -> dict[str, Any]:
    """A frontend that could run and a worker whose main container names no image."""
    frontend = {
        "name": "Frontend",
        "type": "frontend",
        "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
    }
    main = {"name": "main", "command": ["python3", "-m", "dynamo.vllm"]}
    worker = {"name": "worker", "type": "worker", "podTemplate": {"spec": {"containers": [main]}}}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "components": [frontend, worker]},
    }


def alpha_graph(name: str) -> dict[str, Any]:
    """A worker with failover but a graph without per-container discovery, which CEL cannot see
    (it does not read annotations)."""
    worker = {
        "componentType": "worker",
        "resources": {"limits": {"gpu": "1"}},
        "gpuMemoryService": {"enabled": True},
        "failover": {"enabled": True},
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}},
    }
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"services": {"worker": worker}},
    }


async def refused_message(
    api: Client, kubectl: Kubectl, ns: str, manifest: dict[str, Any], tmp_path: Path
) -> tuple[str, list[dict[str, Any]]]:
    """Apply `manifest` as a user would; the Ready message it is refused with and its Warning Events."""
    name = manifest["metadata"]["name"]
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest))
    # The API server can call the webhook only once the session operator's CA is in the CRDs.
    await eventually(lambda: session_bundle_in_crds(api, list(CONVERTED_CRDS)), timeout=90, interval=0.5)
    # In a thread: the webhook answering the API server runs on this event loop.
    await asyncio.to_thread(kubectl, "apply", "--server-side", "-n", ns, "-f", str(path))
    refused = await eventually(
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: condition(d, "Ready").get("reason") == "InvalidSpec",
        timeout=TIMEOUT,
        interval=0.25,
    )
    events = await eventually(
        lambda: api.list(EVENT, namespace=ns, field_selector=f"involvedObject.name={name},type=Warning"),
        until=lambda xs: any(e.get("reason") == "InvalidSpec" for e in xs),
        timeout=30,
    )
    return condition(refused, "Ready")["message"], events


async def nothing_written(api: Client, ns: str) -> None:
    assert await api.list(kinds.DCD, namespace=ns) == []
    assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []


async def test_a_v1beta1_graph_is_refused_naming_the_mount_in_its_pod_template(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    message, events = await refused_message(api, kubectl, ns, beta_graph("beta-mount"), tmp_path)
    assert message == f"{MOUNT}: names no volume of the pod ({VOLUMES})"
    assert [e["message"] for e in events] == [message]
    await nothing_written(api, ns)


async def test_a_graph_written_as_v1alpha1_is_refused_in_the_same_v1beta1_terms(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    message, _ = await refused_message(api, kubectl, ns, alpha_graph("alpha-failover"), tmp_path)
    assert message.startswith(
        "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]: "
        "spec.components[name=worker].experimental.failover needs per-container discovery"
    ), message
    assert "spec.services" not in message
    await nothing_written(api, ns)


async def test_a_component_without_an_image_refuses_the_whole_graph_before_anything_is_written(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """The frontend could run, but the graph is written whole or not at all: no DCD, no Deployment."""
    message, _ = await refused_message(api, kubectl, ns, frontend_and_imageless_worker("no-image"), tmp_path)
    assert message.startswith(
        "spec.components[name=worker].podTemplate.spec.containers[name=main].image: required"
    ), message
    await nothing_written(api, ns)


async def test_a_rule_only_v1alpha1_s_crd_states_refuses_a_v1beta1_graph_too(
    operator: RunningOperator, api: Client, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """Failover without the GPU memory service: the v1alpha1 CRD refuses it on write, the v1beta1 one
    (upstream's) leaves it to upstream's webhook, so the operator refuses it."""
    graph = beta_graph("failover-alone")
    worker = graph["spec"]["components"][0]
    worker["podTemplate"]["spec"]["containers"][0].pop("volumeMounts")
    worker["experimental"] = {"failover": {"mode": "IntraPod"}}
    message, _ = await refused_message(api, kubectl, ns, graph, tmp_path)
    field = "spec.components[name=worker].experimental.failover"
    assert message == f"{field}: failover needs gpuMemoryService on the same component", message
    await nothing_written(api, ns)
