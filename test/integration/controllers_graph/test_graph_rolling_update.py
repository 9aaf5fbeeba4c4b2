"""The managed worker rolling update of a disaggregated graph, against the real API server: the
Deployment controller, scheduler and kwok run the pods, so "ready" is the real chain."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT, Resource
from testsupport.api import eventually, only_this_test_namespace_left, recording
from testsupport.components import COMPONENT_LABEL, of_service
from testsupport.graphs import IMAGE
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, record_writes, wait_quiet

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

WORKERS = ("Decode", "Prefill")
POLL_SECONDS = 0.2
MAX_POLLS = 1500  # bounds the serving check (~5 min at most)


def disagg(namespace: str, flavour: str) -> dict[str, Any]:
    """Frontend + one prefill + one decode worker; `flavour` is an env var of the prefill worker only
    (one worker's edit changes the worker hash, so every worker service rolls)."""
    main = {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "m"]}

    def worker(kind: str, env: list[dict[str, str]]) -> dict[str, Any]:
        return {
            "componentType": kind,
            "replicas": 1,
            "envs": env,
            "extraPodSpec": {"mainContainer": main},
        }

    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": namespace},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "extraPodSpec": {"mainContainer": {"image": IMAGE}},
                },
                "Prefill": worker("prefill", [{"name": "FLAVOUR", "value": flavour}]),
                "Decode": worker("decode", []),
            },
        },
    }


async def apply(api: Client, obj: dict[str, Any]) -> None:
    await api.apply(kinds.DGD, copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def ready_and_current(dgd: dict[str, Any]) -> bool:
    status = dgd.get("status") or {}
    return (
        status.get("state") == "successful"
        and status.get("observedGeneration") == dgd["metadata"]["generation"]
    )


def watching(
    api: Client, resource: Resource, namespace: str
) -> contextlib.AbstractAsyncContextManager[list[Any]]:
    """Every version of every `resource` object while the block runs; DELETED versions carry `_deleted`."""
    return recording(api, resource, namespace, keep=lambda t, o: {**o, "_deleted": t == "DELETED"})


async def serving_snapshot(api: Client, namespace: str) -> dict[str, int]:
    """Per worker service: ready replicas summed over its Deployments (old and new) right now."""
    out = {}
    for svc in WORKERS:
        deployments = await of_service(api, kinds.DEPLOYMENT, namespace, "g", svc)
        out[svc] = sum(int((d.get("status") or {}).get("readyReplicas") or 0) for d in deployments)
    return out


def phases(versions: list[dict[str, Any]]) -> list[str]:
    """The distinct `status.rollingUpdate.phase` values the graph went through, in order."""
    out: list[str] = []
    for dgd in versions:
        phase = ((dgd.get("status") or {}).get("rollingUpdate") or {}).get("phase")
        if phase and (not out or out[-1] != phase):
            out.append(phase)
    return out


def is_gone(version: dict[str, Any]) -> bool:
    """A recorded version that says its object was deleted or is being deleted."""
    return bool(version.get("_deleted") or version["metadata"].get("deletionTimestamp"))


def old_names(old: dict[str, list[str]]) -> list[str]:
    return [name for names in old.values() for name in names]


def first(versions: list[dict[str, Any]], name: str, test: Any) -> int:
    return next(i for i, v in enumerate(versions) if v["metadata"]["name"] == name and test(v))


async def test_worker_edit_rolls_prefill_and_decode_keeping_workers_serving(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A worker edit of a disagg graph: status.rollingUpdate goes Pending → InProgress → Completed with
    start/end times and both worker services updated; for each service the new DCD turns ready before
    its old DCD is scaled to zero, the old DCDs are deleted only after that, every observed instant has
    a ready Deployment for each worker service, one Started and one Completed Event, and the graph
    sends no write once it is done."""
    await apply(api, disagg(ns, "a"))
    before = await eventually(
        lambda: api.get(kinds.DGD, "g", namespace=ns), until=ready_and_current, timeout=120
    )
    old = {
        svc: [d["metadata"]["name"] for d in await of_service(api, kinds.DCD, ns, "g", svc)]
        for svc in WORKERS
    }
    assert all(len(names) == 1 for names in old.values()), old

    snapshots: list[dict[str, int]] = []
    async with watching(api, kinds.DGD, ns) as graph_versions, watching(api, kinds.DCD, ns) as dcd_versions:
        await apply(api, disagg(ns, "b"))

        async def done() -> bool:
            snapshots.append(await serving_snapshot(api, ns))
            dgd = await api.get(kinds.DGD, "g", namespace=ns)
            rolled = ((dgd.get("status") or {}).get("rollingUpdate") or {}).get("phase") == "Completed"
            return rolled and ready_and_current(dgd)

        for _ in range(MAX_POLLS):
            if await done():
                break
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise AssertionError(f"rollout did not complete; phases {phases(graph_versions)}")
        # The GET above can be ahead of the watches (seen once in a loaded `make test`: the recording
        # ended at InProgress): let them catch up before judging what they saw.
        await eventually(lambda: phases(graph_versions), until=lambda p: p[-1:] == ["Completed"], timeout=30)
        await eventually(
            lambda: all(
                any(v["metadata"]["name"] == n and is_gone(v) for v in dcd_versions) for n in old_names(old)
            ),
            timeout=60,
        )

    assert phases(graph_versions) == ["Pending", "InProgress", "Completed"]
    final = graph_versions[-1]["status"]["rollingUpdate"]
    assert final["startTime"] <= final["endTime"]
    assert final["updatedServices"] == sorted(WORKERS)
    assert all(s[svc] >= 1 for s in snapshots for svc in WORKERS), snapshots

    for svc in WORKERS:
        [old_name] = old[svc]
        [new_dcd] = await of_service(api, kinds.DCD, ns, "g", svc)
        new_name = new_dcd["metadata"]["name"]
        assert new_name != old_name
        new_ready = first(
            dcd_versions,
            new_name,
            lambda v: int(((v.get("status") or {}).get("service") or {}).get("readyReplicas") or 0) >= 1,
        )
        old_drained = first(dcd_versions, old_name, lambda v: (v.get("spec") or {}).get("replicas") == 0)
        old_deleted = first(dcd_versions, old_name, is_gone)
        assert new_ready < old_drained < old_deleted, svc

    current_hash = (
        final and graph_versions[-1]["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"]
    )
    assert current_hash != before["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"]
    events = await api.list(EVENT, namespace=ns)
    reasons = [e["reason"] for e in events if e["involvedObject"]["kind"] == "DynamoGraphDeployment"]
    assert (reasons.count("RollingUpdateStarted"), reasons.count("RollingUpdateCompleted")) == (1, 1)
    # Every worker label of the graph is the new one: no old Deployment left behind.
    for svc in WORKERS:
        deployments = await eventually(
            lambda svc=svc: of_service(api, kinds.DEPLOYMENT, ns, "g", svc),
            until=lambda ds: len(ds) == 1,
            timeout=60,
        )
        assert deployments[0]["metadata"]["labels"][COMPONENT_LABEL] == svc

    await only_this_test_namespace_left(api, ns)
    await wait_quiet(settle=3.0, timeout=90)
    with record_writes() as writes:
        await asyncio.sleep(10)
    assert [w for w in writes if f"/namespaces/{ns}/" in w[1]] == []
