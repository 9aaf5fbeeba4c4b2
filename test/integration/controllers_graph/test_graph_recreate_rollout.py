"""The Recreate worker rollout (`nvidia.com/deployment-strategy: Recreate` on the worker service) against
the real API server: the Deployment controller, scheduler and kwok run the pods, so a pod is present
until the API server has removed it. Old and new worker pods never run together, the rollout completes,
and a revert in the middle never deletes the DCD that is to serve again."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from testsupport.api import eventually, recording
from testsupport.components import COMPONENT_LABEL, of_service, selector
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(400)]

Obj = dict[str, Any]
WORKER = "Worker"
REPLICAS = 2
POLL_SECONDS = 0.2
MAX_POLLS = 1500  # bounds each sampling loop below (~5 min at most)
HOLD = "dynamo-operator.test/hold"  # a finalizer of the test's own: keeps a deleted pod present


def graph(ns: str, flavour: str) -> Obj:
    """Frontend + a 2-replica worker rolled the Recreate way; `flavour` changes the worker hash."""
    dgd = two_service_graph("g", ns, worker_env=flavour, worker_replicas=REPLICAS)
    dgd["spec"]["services"][WORKER]["annotations"] = {consts.ANNOTATION_DEPLOYMENT_STRATEGY: "Recreate"}
    return dgd


async def apply(api: Client, obj: Obj) -> None:
    await api.apply(kinds.DGD, copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def rollout_phase(dgd: Obj) -> str | None:
    return ((dgd.get("status") or {}).get("rollingUpdate") or {}).get("phase")


def settled(dgd: Obj) -> bool:
    """Ready for the current spec, no rollout under way."""
    status = dgd.get("status") or {}
    return (
        status.get("state") == "successful"
        and status.get("observedGeneration") == dgd["metadata"]["generation"]
        and rollout_phase(dgd) not in ("Pending", "InProgress")
    )


def ready_message(dgd: Obj) -> str:
    for cond in (dgd.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return str(cond.get("message") or "")
    return ""


def names(objs: list[Obj]) -> set[str]:
    return {o["metadata"]["name"] for o in objs}


def running(pod: Obj) -> bool:
    """A pod that still holds its resources: not finished, whether or not it is being deleted."""
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


async def worker_pods_by_dcd(api: Client, ns: str) -> dict[str, int]:
    """Running worker pods right now (being deleted included), counted by the DCD they belong to."""
    out: dict[str, int] = {}
    for p in await api.list(kinds.POD, namespace=ns, label_selector=selector("g", WORKER)):
        if running(p):
            owner = p["metadata"]["labels"].get(consts.LABEL_SELECTOR, "")
            out[owner] = out.get(owner, 0) + 1
    return out


def replay(events: list[tuple[str, Obj]]) -> list[dict[str, int]]:
    """Every state of the running worker pods the watch saw, counted by DCD, one per event."""
    present: dict[str, str] = {}  # pod name -> its DCD, while running
    states = []
    for kind, p in events:
        if (p["metadata"].get("labels") or {}).get(COMPONENT_LABEL) != WORKER:
            continue  # the frontend's pods
        name = p["metadata"]["name"]
        if kind == "DELETED" or not running(p):
            present.pop(name, None)
        else:
            present[name] = p["metadata"]["labels"].get(consts.LABEL_SELECTOR, "")
        counts: dict[str, int] = {}
        for owner in present.values():
            counts[owner] = counts.get(owner, 0) + 1
        states.append(counts)
    return states


def worker_pod_events(ns: str, api: Client) -> contextlib.AbstractAsyncContextManager[list[Any]]:
    keep = lambda t, o: (t, o)  # noqa: E731
    return recording(api, kinds.POD, ns, keep=keep)


def dcd_events(ns: str, api: Client) -> contextlib.AbstractAsyncContextManager[list[Any]]:
    return recording(api, kinds.DCD, ns, keep=lambda t, o: {**o, "_deleted": t == "DELETED"})


def gone(version: Obj) -> bool:
    return bool(version["_deleted"] or version["metadata"].get("deletionTimestamp"))


async def test_recreate_rollout_never_runs_old_and_new_worker_pods_together(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A worker edit under Recreate: at no sample (polled, and every state the pod watch saw) do old
    and new worker pods both run; the rollout completes on the new DCD with all its replicas; the old
    generation's DCD is deleted."""
    await apply(api, graph(ns, "a"))
    await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=settled, timeout=180)
    [old] = names(await of_service(api, kinds.DCD, ns, "g", WORKER))

    samples: list[dict[str, int]] = []
    async with worker_pod_events(ns, api) as pod_events, dcd_events(ns, api) as dcd_versions:
        await apply(api, graph(ns, "b"))
        for _ in range(MAX_POLLS):
            samples.append(await worker_pods_by_dcd(api, ns))
            dgd = await api.get(kinds.DGD, "g", namespace=ns)
            dcds = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
            if settled(dgd) and rollout_phase(dgd) == "Completed" and old not in dcds:
                break
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise AssertionError(f"the Recreate rollout did not complete; last samples {samples[-5:]}")
        [new] = dcds
        await eventually(lambda: any(v["metadata"]["name"] == old and v["_deleted"] for v in dcd_versions))
        samples.append(await worker_pods_by_dcd(api, ns))

    both = [s for s in samples + replay(pod_events) if s.get(old) and s.get(new)]
    assert both == [], both[:5]
    assert samples[-1] == {new: REPLICAS}, samples[-1]
    assert any(s == {} for s in replay(pod_events)), "the old pods were never all gone before the new"
    with pytest.raises(NotFound):
        await api.get(kinds.DCD, old, namespace=ns)
    dgd = await api.get(kinds.DGD, "g", namespace=ns)
    assert dgd["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] == new.rsplit("-", 1)[1]


@contextlib.asynccontextmanager
async def held(api: Client, ns: str, pods: set[str]) -> AsyncIterator[None]:
    """The `pods` keep a finalizer of the test's while the block runs: deleted, they stay present
    (and Running) until it is removed, as a pod slow to terminate would."""
    for name in sorted(pods):
        await api.patch(kinds.POD, name, {"metadata": {"finalizers": [HOLD]}}, namespace=ns)
    try:
        yield
    finally:
        for name in sorted(pods):
            with contextlib.suppress(NotFound):
                await api.patch(kinds.POD, name, {"metadata": {"finalizers": None}}, namespace=ns)


async def test_recreate_revert_while_old_pods_terminate_never_deletes_the_serving_dcd(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A -> B while A's pods are slow to terminate (held by a finalizer): the graph says it waits for
    them and B gets no pod; then back to A: A's DCD is never deleted, B's is, no B pod ever runs, and
    the graph settles on A with all its replicas."""
    await apply(api, graph(ns, "a"))
    await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=settled, timeout=180)
    [a_dcd] = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
    a_pods = names(
        [
            p
            for p in await api.list(kinds.POD, namespace=ns, label_selector=selector("g", WORKER))
            if running(p)
        ]
    )
    assert len(a_pods) == REPLICAS

    async with (
        held(api, ns, a_pods),
        worker_pod_events(ns, api) as pod_events,
        dcd_events(ns, api) as dcd_versions,
    ):
        await apply(api, graph(ns, "b"))
        waiting = f"waiting for {REPLICAS} old {WORKER} pod(s) to terminate"
        stalled = await eventually(
            lambda: api.get(kinds.DGD, "g", namespace=ns),
            until=lambda d: waiting in ready_message(d),
            timeout=120,
        )
        [b_dcd] = names(await of_service(api, kinds.DCD, ns, "g", WORKER)) - {a_dcd}
        assert "Recreate:" in ready_message(stalled)

        await apply(api, graph(ns, "a"))  # the revert
        for _ in range(MAX_POLLS):
            dgd = await api.get(kinds.DGD, "g", namespace=ns)
            dcds = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
            pods = await worker_pods_by_dcd(api, ns)  # A's held pods, being deleted, and its new ones
            if settled(dgd) and dcds == {a_dcd}:
                break
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise AssertionError(f"the graph did not settle back on A; pods {pods}, DCDs {dcds}")
        await eventually(lambda: any(v["metadata"]["name"] == b_dcd and v["_deleted"] for v in dcd_versions))

    a_versions = [v for v in dcd_versions if v["metadata"]["name"] == a_dcd]
    assert not any(gone(v) for v in a_versions)
    assert not any(s.get(b_dcd) for s in replay(pod_events))
    final = await api.get(kinds.DGD, "g", namespace=ns)
    assert final["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] == a_dcd.rsplit("-", 1)[1]
