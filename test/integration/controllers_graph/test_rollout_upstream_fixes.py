"""Two worker-rollout bugs upstream's users hit, replayed against the real API server (the Deployment
controller, scheduler and kwok run the pods, so "ready" is the real chain):

- upstream issue 13620: a spec reverted (A -> B -> A) while the rollout to B is under way deleted B's
  serving DCDs before A's were back to strength;
- upstream issue 13495: a DGD replaced whole (`kubectl replace`, `helm upgrade --force`) loses its
  worker-hash annotations, and the previous worker generation was then never rolled or removed.

This operator derives old generations from the graph's live worker DCDs, not from annotations, and
prunes an old DCD only once its service is fully served by the current one (rollingupdate.py).

The operator runs restricted to the test's namespace on a control plane of this module's own
(testsupport/private.py), so no conversion webhook is in the write path: the test's own writes land
when it sends them, which the half-way revert relies on."""

# The fixtures imported from testsupport.private are parameter names all over this module.
# ruff: noqa: F811

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import NODE
from dynamo_operator.storage_version import stored_version_codecs
from testsupport.api import eventually, recording
from testsupport.components import of_service
from testsupport.dcd_view import alpha_view
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, install_crds, running_operator
from testsupport.private import api, cluster, kubectl  # noqa: F401  (this module's own control plane)

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(400)]

Obj = dict[str, Any]
WORKER = "Worker"
REPLICAS = 4
POLL_SECONDS = 0.1
MAX_POLLS = 3000  # bounds each wait below (~5 min at most)
STALL_LABEL = "rollout-test/stall"


def graph(ns: str, flavour: str) -> Obj:
    """Frontend + a 4-replica worker rolled one pod at a time (surge 1, none unavailable): the rollout
    takes several steps, so it can be caught half way."""
    dgd = two_service_graph("g", ns, worker_env=flavour, worker_replicas=REPLICAS)
    dgd["spec"]["services"][WORKER]["annotations"] = {
        consts.ANNOTATION_MAX_SURGE: "1",
        consts.ANNOTATION_MAX_UNAVAILABLE: "0",
    }
    return dgd


def stalling(ns: str, node: str) -> Obj:
    """B: a worker change whose pods fit only one at a time on one node (required anti-affinity
    between them), so its rollout stops with one B pod serving beside three of A's, however fast
    or slow the API server is."""
    dgd = graph(ns, "b")
    worker = dgd["spec"]["services"][WORKER]
    worker["extraPodMetadata"] = {"labels": {STALL_LABEL: "b"}}
    worker["extraPodSpec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    worker["extraPodSpec"]["affinity"] = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {STALL_LABEL: "b"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    return dgd


async def apply(api: Client, obj: Obj) -> None:
    await api.apply(kinds.DGD, copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def settled(dgd: Obj) -> bool:
    """Ready for the current spec, no rollout under way."""
    status = dgd.get("status") or {}
    phase = (status.get("rollingUpdate") or {}).get("phase")
    return (
        status.get("state") == "successful"
        and status.get("observedGeneration") == dgd["metadata"]["generation"]
        and phase not in ("Pending", "InProgress")
    )


async def wait_settled(api: Client, ns: str) -> Obj:
    return await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=settled, timeout=180)


def ready(obj: Obj) -> int:
    status = obj.get("status") or {}
    return int((status.get("service") or {}).get("readyReplicas") or status.get("readyReplicas") or 0)


async def serving(api: Client, ns: str) -> int:
    """Ready worker pods right now, over every worker Deployment (old and new)."""
    return sum(ready(d) for d in await of_service(api, kinds.DEPLOYMENT, ns, "g", WORKER))


def names(dcds: list[Obj]) -> set[str]:
    return {d["metadata"]["name"] for d in dcds}


def deleted_while_scaled_up(versions: list[Obj]) -> list[str]:
    """DCDs whose deletion was seen before any version of them asked for 0 replicas."""
    out = []
    for name in {v["metadata"]["name"] for v in versions}:
        mine = [v for v in versions if v["metadata"]["name"] == name]
        gone = next(
            (i for i, v in enumerate(mine) if v["_deleted"] or v["metadata"].get("deletionTimestamp")), None
        )
        if gone is not None and not any((v.get("spec") or {}).get("replicas") == 0 for v in mine[:gone]):
            out.append(name)
    return sorted(out)


async def test_a_revert_during_a_rollout_never_deletes_serving_workers(
    api: Client,
    cluster: Any,
    ns: str,
) -> None:
    """A -> B, B stalled with one pod serving beside three of A's, then back to A: A's DCD is never
    deleted, B's is drained to 0 before it goes, three or more worker pods serve at every instant,
    and the graph settles on A's DCD alone."""
    await install_crds(api)
    api.speak({**await stored_version_codecs(api), **alpha_view()})  # v1alpha1 written in the stored version
    async with running_operator(cluster, ns):
        await _revert_half_way(api, ns)


async def _revert_half_way(api: Client, ns: str) -> None:
    await apply(api, graph(ns, "a"))
    await wait_settled(api, ns)
    [a_dcd] = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
    nodes = await api.list(NODE)
    node = sorted(n["metadata"]["name"] for n in nodes if not n["spec"].get("unschedulable"))[0]
    snapshots: list[int] = []
    keep = lambda t, o: {**o, "_deleted": t == "DELETED"}  # noqa: E731
    async with recording(api, kinds.DCD, ns, keep=keep) as versions:
        await apply(api, stalling(ns, node))
        for _ in range(MAX_POLLS):
            snapshots.append(await serving(api, ns))
            dcds = await of_service(api, kinds.DCD, ns, "g", WORKER)
            a = [d for d in dcds if d["metadata"]["name"] == a_dcd]
            b = [d for d in dcds if d["metadata"]["name"] != a_dcd]
            if a and (a[0].get("spec") or {}).get("replicas") == REPLICAS - 1 and b and ready(b[0]) == 1:
                break  # stalled half way: both generations serve
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise AssertionError("the rollout to B never reached its stall")
        [b_dcd] = names(b)
        await apply(api, graph(ns, "a"))  # the revert
        for _ in range(MAX_POLLS):
            snapshots.append(await serving(api, ns))
            dgd = await api.get(kinds.DGD, "g", namespace=ns)
            if settled(dgd) and names(await of_service(api, kinds.DCD, ns, "g", WORKER)) == {a_dcd}:
                break
            await asyncio.sleep(POLL_SECONDS)
        else:
            raise AssertionError("the graph did not settle back on A")
        await eventually(
            lambda: any(v["metadata"]["name"] == b_dcd and v["_deleted"] for v in versions), timeout=60
        )

    a_versions = [v for v in versions if v["metadata"]["name"] == a_dcd]
    timeline = [
        (
            v["metadata"]["name"][-8:],
            (v.get("spec") or {}).get("replicas"),
            ready(v),
            v["_deleted"],
            bool(v["metadata"].get("deletionTimestamp")),
        )
        for v in versions
    ]
    assert not any(v["_deleted"] or v["metadata"].get("deletionTimestamp") for v in a_versions), "\n".join(
        map(str, timeline)
    )
    assert deleted_while_scaled_up(list(versions)) == []
    assert min(snapshots) >= REPLICAS - 1, snapshots
    assert dgd["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] == a_dcd.rsplit("-", 1)[1]


async def test_a_replaced_graph_leaves_no_old_worker_generation(
    api: Client,
    cluster: Any,
    ns: str,
) -> None:
    """The graph PUT whole with a new worker spec and none of its annotations (what `helm upgrade
    --force` sends): the old worker DCD is rolled away, one worker DCD of the new spec is left, and
    the graph records its hash again."""
    await install_crds(api)
    api.speak({**await stored_version_codecs(api), **alpha_view()})  # v1alpha1 written in the stored version
    async with running_operator(cluster, ns):
        await _replace_whole(api, ns)


async def _replace_whole(api: Client, ns: str) -> None:
    await apply(api, graph(ns, "a"))
    await wait_settled(api, ns)
    [old] = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
    live = await api.get(kinds.DGD, "g", namespace=ns)
    replacement = graph(ns, "b")
    replacement["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
    replaced = await api.replace(kinds.DGD, replacement)
    assert not any(
        k.startswith("nvidia.com/current-worker-hash") for k in replaced["metadata"].get("annotations") or {}
    )

    async def one_new_worker_set() -> bool:
        dgd = await api.get(kinds.DGD, "g", namespace=ns)
        dcds = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
        return settled(dgd) and len(dcds) == 1 and old not in dcds

    await eventually(one_new_worker_set, timeout=180, interval=0.5)
    [new] = names(await of_service(api, kinds.DCD, ns, "g", WORKER))
    deployments = await eventually(
        lambda: of_service(api, kinds.DEPLOYMENT, ns, "g", WORKER), until=lambda ds: len(ds) == 1, timeout=60
    )
    assert deployments[0]["metadata"]["name"] == new
    dgd = await api.get(kinds.DGD, "g", namespace=ns)
    assert dgd["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"] == new.rsplit("-", 1)[1]
