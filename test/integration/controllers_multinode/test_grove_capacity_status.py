"""What a Grove-pathway graph says when Grove cannot place a service's pods (the `grove` fixture:
its stand-in, and its real operator when GROVE_OPERATOR is set; see conftest.py).

A worker asks for more GPUs than any node has: the real kube-scheduler leaves its pod unscheduled,
Grove reports the PodClique short of scheduled pods, and the graph's `Ready` reason says
`insufficient_capacity` (add nodes), not that pods are merely not ready; each service's status
carries the replicas Grove scheduled, read back in both API versions. No status here is written by
a test."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from integration.controllers_multinode.multinode_testlib import GroveBackend, apply
from testsupport.api import as_stored, eventually
from testsupport.graphs import two_service_graph
from testsupport.objects import condition
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.addons("grove")]

TIMEOUT = 180.0
# Far above any node of the local cluster (64 each, hack/localcluster.py) or of a real one.
UNPLACEABLE_GPUS = "100000"


def _waits_for_capacity_alone(dgd: dict[str, Any]) -> bool:
    """Not Ready for capacity, with the frontend placed and ready: the worker is the only cause."""
    frontend = ((dgd.get("status") or {}).get("services") or {}).get("Frontend") or {}
    return (
        condition(dgd, "Ready").get("reason") == "insufficient_capacity"
        and frontend.get("readyReplicas") == 1
        and frontend.get("scheduledReplicas") == 1
    )


async def test_a_service_grove_cannot_place_makes_the_graph_wait_for_capacity(
    api: Client,
    operator: RunningOperator,
    grove: GroveBackend,
    short_ns: str,
) -> None:
    ns = short_ns
    graph = two_service_graph("c", ns)
    graph["spec"]["services"]["Worker"]["resources"] = {"limits": {"gpu": UNPLACEABLE_GPUS}}
    await apply(api, graph)
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "c", namespace=ns), until=_waits_for_capacity_alone, timeout=TIMEOUT
    )
    ready = condition(dgd, "Ready")
    assert (ready["status"], dgd["status"]["state"]) == ("False", "pending")
    assert ready["message"].startswith("podclique/c-0-worker: ")
    assert "frontend" not in ready["message"]
    worker = dgd["status"]["services"]["Worker"]
    assert (worker["scheduledReplicas"], worker["readyReplicas"]) == (0, 0)
    # The stored (v1beta1) form carries the same counts under `components`.
    stored = await as_stored(api, kinds.DGD, "c", ns)
    components = stored["status"]["components"]
    assert {name: c.get("scheduledReplicas") for name, c in components.items()} == {
        "Frontend": 1,
        "Worker": 0,
    }
    assert "placement" not in stored["status"]  # Grove reports no placement score


MISSING_CLAIM = "weights-nobody-made"


async def test_a_grove_graph_says_what_its_pods_say(
    api: Client,
    operator: RunningOperator,
    grove: GroveBackend,
    short_ns: str,
) -> None:
    """Grove counts pods; the pods say why: a worker mounting a claim nobody created is named, with
    the scheduler's words, in the graph's Ready message (the pods are listed by Grove's clique label)."""
    ns = short_ns
    graph = two_service_graph("m", ns)
    worker = graph["spec"]["services"]["Worker"]
    worker.setdefault("extraPodSpec", {})["volumes"] = [
        {"name": "weights", "persistentVolumeClaim": {"claimName": MISSING_CLAIM}}
    ]
    worker["extraPodSpec"].setdefault("mainContainer", {})["volumeMounts"] = [
        {"name": "weights", "mountPath": "/weights"}
    ]
    await apply(api, graph)
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "m", namespace=ns),
        until=lambda d: MISSING_CLAIM in condition(d, "Ready").get("message", ""),
        timeout=TIMEOUT,
    )
    message = condition(dgd, "Ready")["message"]
    assert message.startswith("podclique/m-0-worker: ")
    assert "unschedulable" in message
