"""A graph that is not Ready says why, from its pods, on the DGD and on the component.

Real chain: the scheduler refuses pods whose claim does not exist, the filtered Pod informer of the
DCD controller sees the `PodScheduled=False/Unschedulable` condition, the DCD's conditions carry the
scheduler's words and the DGD's `Ready` message carries the DCD's.
"""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from testsupport.api import eventually
from testsupport.components import dcd_of
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

IMAGE = "registry.example/ai-dynamo/vllm-runtime:0.6.1"
MISSING_PVC = "model-cache-that-is-not-there"
TIMEOUT = 120.0


def graph(namespace: str, *, mount: bool) -> dict[str, Any]:
    """A frontend and a two-replica worker; with `mount`, the worker mounts a claim nobody created."""
    worker: dict[str, Any] = {
        "componentType": "worker",
        "replicas": 2,
        "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}},
    }
    spec: dict[str, Any] = {
        "backendFramework": "vllm",
        "services": {
            "Frontend": {
                "componentType": "frontend",
                "replicas": 1,
                "extraPodSpec": {"mainContainer": {"image": IMAGE}},
            },
            "Worker": worker,
        },
    }
    if mount:
        spec["pvcs"] = [{"name": MISSING_PVC, "create": False}]
        worker["volumeMounts"] = [{"name": MISSING_PVC, "mountPoint": "/models"}]
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "why", "namespace": namespace},
        "spec": spec,
    }


def condition(obj: dict[str, Any], ctype: str) -> dict[str, Any]:
    for cond in (obj.get("status") or {}).get("conditions") or ():
        if cond.get("type") == ctype:
            return dict(cond)
    return {}


async def test_unschedulable_pods_are_named_with_the_schedulers_reason(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The worker's pods cannot schedule (their claim does not exist): the DGD's Ready message and
    the DCD's Available condition say so with the scheduler's words, and the DGD's Ready reason is
    `insufficient_capacity`; once the mount is gone the reason goes and the graph becomes Ready."""
    await api.apply(kinds.DGD, graph(ns, mount=True), field_manager=TEST_FIELD_MANAGER)

    def explains(dgd: dict[str, Any]) -> bool:
        message = str(condition(dgd, "Ready").get("message") or "")
        return "Worker: 0/2 ready (2 pods unschedulable:" in message and MISSING_PVC in message

    def frontend_ready(dgd: dict[str, Any]) -> bool:
        return dgd["status"]["services"]["Frontend"].get("readyReplicas") == 1

    # The Frontend may still be starting when the Worker's reason first shows: wait for both.
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "why", namespace=ns),
        until=lambda d: explains(d) and frontend_ready(d),
        timeout=TIMEOUT,
        interval=0.25,
    )
    ready = condition(dgd, "Ready")
    # Pods that cannot be placed: the graph's reason says capacity, not plain not-ready.
    assert (ready["status"], ready["reason"]) == ("False", "insufficient_capacity")
    assert "Frontend" not in ready["message"]  # a ready service is not listed
    dcd = await dcd_of(api, ns, "why", "Worker")
    assert dcd is not None
    available = condition(dcd, "Available")
    assert (available["status"], available["reason"]) == ("False", "PodsUnschedulable")
    assert MISSING_PVC in available["message"]
    assert len(condition(dcd, "DynamoComponentReady")["message"]) <= 400

    await api.apply(kinds.DGD, copy.deepcopy(graph(ns, mount=False)), field_manager=TEST_FIELD_MANAGER)
    # `pvcs` has no v1beta1 field: stored in v1beta1 it lives in the nvidia.com/dgd-spec annotation,
    # where a v1alpha1 server-side apply that leaves it out does not remove it (the field has no
    # owner there). A merge patch that nulls it does.
    await api.patch(kinds.DGD, "why", {"spec": {"pvcs": None}}, namespace=ns)

    def ready_now(dgd: dict[str, Any]) -> bool:
        return condition(dgd, "Ready").get("status") == "True"

    dgd = await eventually(
        lambda: api.get(kinds.DGD, "why", namespace=ns), until=ready_now, timeout=TIMEOUT, interval=0.25
    )
    assert "unschedulable" not in condition(dgd, "Ready")["message"]
    # The mount change is a worker spec change: a new worker DCD replaced the one that never served.
    dcd = await eventually(lambda: dcd_of(api, ns, "why", "Worker"), timeout=30)
    assert condition(dcd, "Available")["status"] == "True"
