"""Multinode graphs through the real LeaderWorkerSet controller (sigs.k8s.io/lws, the cluster's `lws`
add-on): DGD -> DCD -> one LeaderWorkerSet per multinode service, scaled by LWS (made by our
operator) -> leader and worker StatefulSets (made by LWS) -> pods (kcm, kube-scheduler, kwok) -> LWS
status -> DCD `Available` -> DGD `successful`.

Nothing here writes a status the operator reads: every readiness comes from the real controllers.
LWS's own defaulting and validating webhooks are off (only its Pod webhooks run), so every
LeaderWorkerSet the operator applies must be complete on its own.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from integration.controllers_multinode.multinode_testlib import (
    SAMPLES,
    STATEFUL_SET,
    UPSTREAM,
    apply,
    condition,
    deploy,
    documents,
    graph_of,
    groups_of,
    is_leader,
    multinode_services,
    owner_kind,
    pods_of,
    running_ready,
    sets_of,
    wait_graph,
)
from testsupport.api import eventually
from testsupport.components import dcd_of
from testsupport.components import name as name_of
from testsupport.operator import RunningOperator
from testsupport.volumes import delete_volumes

pytestmark = [pytest.mark.cluster, pytest.mark.addons("lws")]

# One graph per backend; each multinode service spans two nodes per replica. vLLM and SGLang are
# upstream's own disaggregated multinode examples as a user applies them; TRT-LLM is upstream's too
# (it mounts a claim the user makes, which `deploy` binds).
GRAPHS = {
    "vllm": UPSTREAM / "backends_vllm_disagg-multinode.yaml",
    "sglang": UPSTREAM / "backends_sglang_disagg-multinode.yaml",
    "trtllm": UPSTREAM / "backends_trtllm_disagg-multinode.yaml",
}
SGLANG_SAMPLE = SAMPLES / "nvidia.com_v1alpha1_dynamographdeployment_sglang_multinode.yaml"
NOT_READY_ANNOTATION = "kwok.dynamo.test/ready"
PHASE_ANNOTATION = "kwok.dynamo.test/phase"
TIMEOUT = 180.0


async def assert_groups_run(api: Client, ns: str, graph: str, service: str, spec: dict[str, Any]) -> None:
    """One LeaderWorkerSet `<dcd>-0` carrying the service's replicas, Available, each of its groups
    Running and Ready: a leader (from LWS's leader StatefulSet) and nodeCount-1 workers (from the
    group's worker StatefulSet, which that group's leader pod owns)."""
    [lws] = await sets_of(api, ns, graph, service)
    name = lws["metadata"]["name"]
    nodes, replicas = spec["multinode"]["nodeCount"], spec.get("replicas", 1)
    assert name.endswith("-0") and lws["spec"]["replicas"] == replicas
    assert condition(lws, "Available").get("status") == "True", lws.get("status")
    assert (lws.get("status") or {}).get("readyReplicas", 0) == replicas, lws.get("status")
    groups = groups_of(await pods_of(api, ns, name))
    assert sorted(groups) == [str(i) for i in range(replicas)]
    # LWS's ownership chain: LWS -> leader StatefulSet -> leader pods -> each group's worker StatefulSet.
    assert owner_kind(await api.get(STATEFUL_SET, name, namespace=ns)) == ("LeaderWorkerSet", name)
    for index, pods in groups.items():
        assert len(pods) == nodes and all(running_ready(p) for p in pods)
        [leader] = [p for p in pods if is_leader(p)]
        assert owner_kind(leader) == ("StatefulSet", name)
        group_sts = f"{name}-{index}"
        assert Counter(owner_kind(p) for p in pods if not is_leader(p)) == {
            ("StatefulSet", group_sts): nodes - 1
        }
        worker_sts = await api.get(STATEFUL_SET, group_sts, namespace=ns)
        assert owner_kind(worker_sts) == ("Pod", leader["metadata"]["name"])


async def groups_run(api: Client, ns: str, graph: str, service: str, spec: dict[str, Any]) -> bool:
    """`assert_groups_run` as a probe for `eventually` (an AssertionError means "not yet")."""
    await assert_groups_run(api, ns, graph, service, spec)
    return True


@pytest.mark.parametrize("backend", sorted(GRAPHS))
async def test_multinode_graph_becomes_ready_through_leaderworkersets(
    api: Client, operator: RunningOperator, ns: str, backend: str
) -> None:
    """Every multinode service of a vLLM, SGLang or TRT-LLM graph runs as real LWS groups, its DCD is
    Available because LWS says so, and the graph is Ready."""
    assert operator.capabilities.lws
    docs = documents(GRAPHS[backend], ns)
    dgd = graph_of(docs)
    graph = dgd["metadata"]["name"]
    services = multinode_services(dgd)
    assert services, "the example has multinode services"
    volumes = await deploy(api, docs)
    try:
        ready = await wait_graph(api, ns, graph)
        for svc, spec in services.items():
            await assert_groups_run(api, ns, graph, svc, spec)
            dcd = await dcd_of(api, ns, graph, svc)
            assert condition(dcd, "Available")["reason"] == "LeaderWorkerSetReady"
            status = ready["status"]["services"][svc]
            assert status["componentKind"] == "LeaderWorkerSet"
            assert status["readyReplicas"] == spec.get("replicas", 1)
            assert (
                await api.list(
                    kinds.DEPLOYMENT, namespace=ns, label_selector=f"nvidia.com/dynamo-component={svc}"
                )
                == []
            )
    finally:
        await delete_volumes(api, volumes)


async def ready_sample(
    api: Client, ns: str, *, replicas: int = 1
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """The SGLang multinode sample (one multinode worker service, two nodes per replica), Ready."""
    [dgd] = documents(SGLANG_SAMPLE, ns)
    [(svc, spec)] = multinode_services(dgd).items()
    spec["replicas"] = replicas
    await apply(api, dgd)
    await wait_graph(api, ns, dgd["metadata"]["name"])
    return dgd, svc, spec


@pytest.mark.parametrize(("start", "end"), [(1, 3), (3, 1), (1, 0)])
async def test_scaling_a_multinode_service_scales_its_one_leaderworkerset(
    api: Client, operator: RunningOperator, ns: str, start: int, end: int
) -> None:
    """replicas up or down (to zero too) -> the same LeaderWorkerSet (same UID) with as many groups,
    each a full running group; the groups no longer wanted go with their pods, and the graph is
    Ready again."""
    dgd, svc, spec = await ready_sample(api, ns, replicas=start)
    graph = dgd["metadata"]["name"]
    [before] = await sets_of(api, ns, graph, svc)
    spec["replicas"] = end
    await apply(api, dgd)
    await eventually(lambda: groups_run(api, ns, graph, svc, spec), timeout=TIMEOUT)
    ready = await wait_graph(api, ns, graph)
    [after] = await sets_of(api, ns, graph, svc)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    status = ready["status"]["services"][svc]
    assert (status["componentKind"], status["componentNames"]) == (
        "LeaderWorkerSet",
        [after["metadata"]["name"]],
    )
    assert status["replicas"] == end


async def test_scaling_through_the_adapters_scale_subresource_scales_the_one_leaderworkerset(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A multinode service with a scaling adapter: a write to the adapter's `/scale` (what HPA and
    KEDA send) reaches the graph, the DCD and the one LeaderWorkerSet, which runs that many groups."""
    [dgd] = documents(SGLANG_SAMPLE, ns)
    [(svc, spec)] = multinode_services(dgd).items()
    spec["scalingAdapter"] = {"enabled": True}
    await apply(api, dgd)
    graph = dgd["metadata"]["name"]
    await wait_graph(api, ns, graph)
    adapter = f"{graph}-{svc.lower()}"
    await eventually(lambda: api.get(kinds.DGDSA, adapter, namespace=ns), timeout=TIMEOUT)
    await api.patch(kinds.DGDSA, adapter, {"spec": {"replicas": 2}}, namespace=ns, subresource="scale")
    spec["replicas"] = 2
    await eventually(lambda: groups_run(api, ns, graph, svc, spec), timeout=TIMEOUT)
    ready = await wait_graph(api, ns, graph)
    assert ready["status"]["services"][svc]["readyReplicas"] == 2


async def test_a_leader_that_stops_being_ready_marks_the_service_not_ready_with_the_reason(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A leader pod whose readiness fails (containers running, not ready) takes its group out of
    ready in LWS's own status: the DCD says so with the count of ready groups and what the set's pods
    say (found by LWS's label: they carry no selector label of ours), the graph is not Ready and names
    the service; once LWS has replaced the pod it is Ready again."""
    dgd, svc, _ = await ready_sample(api, ns, replicas=2)
    graph = dgd["metadata"]["name"]
    [lws] = await sets_of(api, ns, graph, svc)
    [leader, _] = [p for p in await pods_of(api, ns, lws["metadata"]["name"]) if is_leader(p)]
    await api.patch(
        kinds.POD,
        leader["metadata"]["name"],
        {"metadata": {"annotations": {NOT_READY_ANNOTATION: "false"}}},
        namespace=ns,
    )
    dcd_name = name_of(await dcd_of(api, ns, graph, svc))
    dcd = await eventually(
        lambda: api.get(kinds.DCD, dcd_name, namespace=ns),
        until=lambda d: condition(d, "Available").get("status") == "False",
        timeout=TIMEOUT,
    )
    available = condition(dcd, "Available")
    assert available["reason"] in ("LeaderWorkerSetNotReady", "PodsNotReady")
    assert available["message"].startswith("LeaderWorkerSet is not ready: 1/2 groups ready")
    not_ready = await wait_graph(api, ns, graph, ready=False)
    assert f"{svc}: 1/2 groups ready" in condition(not_ready, "Ready")["message"]
    # Recovery is LWS's: the pod deleted, its group comes back whole and ready.
    await api.delete(kinds.POD, leader["metadata"]["name"], namespace=ns)
    await wait_graph(api, ns, graph)


async def test_a_failed_leader_is_replaced_by_lws_and_the_service_serves_again(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A leader pod that fails (phase Failed, exit code 1) is replaced by the real controllers (a new
    leader pod), its group runs whole again and the graph returns to Ready."""
    dgd, svc, spec = await ready_sample(api, ns)
    graph = dgd["metadata"]["name"]
    [lws] = await sets_of(api, ns, graph, svc)
    name = lws["metadata"]["name"]
    [leader] = [p for p in await pods_of(api, ns, name) if is_leader(p)]
    await api.patch(
        kinds.POD,
        leader["metadata"]["name"],
        {"metadata": {"annotations": {PHASE_ANNOTATION: "Failed", "kwok.dynamo.test/message": "NCCL error"}}},
        namespace=ns,
    )

    async def new_leader_ready() -> bool:
        pods = await pods_of(api, ns, name)
        leaders = [p for p in pods if is_leader(p)]
        return (
            bool(leaders)
            and leaders[0]["metadata"]["uid"] != leader["metadata"]["uid"]
            and all(running_ready(p) for p in pods)
        )

    await eventually(new_leader_ready, timeout=TIMEOUT)
    # The graph was Ready before the failure too: wait for LWS to report the group whole again.
    await eventually(lambda: groups_run(api, ns, graph, svc, spec), timeout=TIMEOUT)
    await wait_graph(api, ns, graph)


async def test_deleting_a_multinode_graph_removes_its_groups_and_pods(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The graph's LeaderWorkerSet, LWS's StatefulSets and every pod of the groups go with the graph
    (owner references all the way down; kcm's garbage collector does the deleting)."""
    dgd, svc, _ = await ready_sample(api, ns, replicas=2)
    graph = dgd["metadata"]["name"]
    names = [s["metadata"]["name"] for s in await sets_of(api, ns, graph, svc)]
    assert all([await pods_of(api, ns, n) for n in names])
    await api.delete(kinds.DGD, graph, namespace=ns)
    await eventually(lambda: sets_of(api, ns, graph, svc), until=lambda xs: xs == [], timeout=TIMEOUT)
    for lws in names:
        await eventually(lambda lws=lws: pods_of(api, ns, lws), until=lambda ps: ps == [], timeout=TIMEOUT)
    await eventually(lambda: api.list(STATEFUL_SET, namespace=ns), until=lambda xs: xs == [], timeout=TIMEOUT)
