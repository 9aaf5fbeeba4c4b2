"""A multinode vLLM component applied on its own, outside any graph, on the real LWS controller: its
worker pods mount the wait-for-leader script, so the component itself writes that ConfigMap (in a
graph the graph does), and it goes when the component goes."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from integration.controllers_multinode.multinode_testlib import apply, condition
from testsupport.api import eventually
from testsupport.objects import get_or_none
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.addons("lws")]

IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
DCD = "solo"
SCRIPT = f"{DCD}-wait-leader-script"
TIMEOUT = 120.0
MISSING_CLAIM = "a-claim-nobody-made"


def component(ns: str) -> dict[str, Any]:
    """One vLLM replica over two nodes, multiprocessing executor: its workers wait for the leader."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": DCD, "namespace": ns},
        "spec": {
            "componentType": "worker",
            "backendFramework": "vllm",
            "annotations": {"nvidia.com/vllm-distributed-executor-backend": "mp"},
            "multinode": {"nodeCount": 2},
            "resources": {"limits": {"gpu": "8"}},
            "extraPodSpec": {
                "mainContainer": {
                    "image": IMAGE,
                    "command": ["python3", "-m", "dynamo.vllm"],
                    "args": ["--model", "m", "--tensor-parallel-size", "16"],
                }
            },
        },
    }


async def script_of(api: Client, ns: str) -> dict[str, Any] | None:
    """The component's wait-for-leader ConfigMap, None while there is none."""
    found = [cm for cm in await api.list(kinds.CONFIG_MAP, namespace=ns) if cm["metadata"]["name"] == SCRIPT]
    return found[0] if found else None


async def test_a_standalone_multinode_component_writes_the_script_its_workers_wait_with(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    assert operator.capabilities.lws
    await apply(api, component(ns))
    script = await eventually(lambda: script_of(api, ns), timeout=TIMEOUT)
    dcd = await api.get(kinds.DCD, DCD, namespace=ns)
    [owner] = script["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == (
        "DynamoComponentDeployment",
        DCD,
        dcd["metadata"]["uid"],
    )
    # The script goes in the write wave before the set that mounts it: the set may follow a moment later.
    lws = await eventually(lambda: get_or_none(api, kinds.LWS, f"{DCD}-0", ns), timeout=TIMEOUT)
    worker_volumes = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["volumes"]
    assert {"name": "wait-leader-script", "configMap": {"name": SCRIPT}} in worker_volumes
    # The workers start (their volume exists), and the component turns Available.
    await eventually(
        lambda: api.get(kinds.DCD, DCD, namespace=ns),
        until=lambda d: condition(d, "Available").get("status") == "True",
        timeout=TIMEOUT,
    )


async def test_a_standalone_component_that_stops_needing_the_script_loses_it(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Ray workers wait for their head by themselves: switching the executor to Ray prunes the script."""
    await apply(api, component(ns))
    await eventually(lambda: script_of(api, ns), timeout=TIMEOUT)
    ray = component(ns)
    ray["spec"]["annotations"] = {"nvidia.com/vllm-distributed-executor-backend": "ray"}
    await apply(api, ray)
    await eventually(
        lambda: script_of(api, ns),
        until=lambda found: found is None,
        timeout=TIMEOUT,
    )


async def test_a_multinode_component_names_why_its_pods_do_not_run(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Its pods are found by their set's label (they carry no selector label of ours): pods the
    scheduler cannot place show in the component's Available condition with the scheduler's words."""
    stuck = component(ns)
    spec = stuck["spec"]["extraPodSpec"]
    spec["volumes"] = [{"name": "cache", "persistentVolumeClaim": {"claimName": MISSING_CLAIM}}]
    spec["mainContainer"]["volumeMounts"] = [{"name": "cache", "mountPath": "/cache"}]
    await apply(api, stuck)
    dcd = await eventually(
        lambda: api.get(kinds.DCD, DCD, namespace=ns),
        until=lambda d: condition(d, "Available").get("reason") == "PodsUnschedulable",
        timeout=TIMEOUT,
        interval=0.25,
    )
    available = condition(dcd, "Available")
    assert available["status"] == "False"
    assert MISSING_CLAIM in available["message"]
