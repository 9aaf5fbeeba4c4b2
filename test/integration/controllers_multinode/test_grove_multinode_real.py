"""Multinode graphs through our Grove pathway, with Grove played by its stand-in and, when
GROVE_OPERATOR is set, by its real operator (the `grove` fixture, see conftest.py).

A vLLM, SGLang or TRT-LLM disaggregated multinode graph, applied as a user applies it (no Grove
opt-out), becomes one PodCliqueSet (our operator). Grove makes a PodCliqueScalingGroup per multinode
service (a one-pod leader clique `<svc>-ldr` and a worker clique `<svc>-wkr` per replica), a PodClique
per single-node service, their pods and a PodGang, and lifts the pods' scheduling gate;
kube-scheduler places them and kwok runs them. The graph's status is read back from what Grove
reports: nothing here writes a status the operator reads (the stand-in plays Grove's part only).

Every wait is bounded (READY_TIMEOUT) and a timed-out one says what Grove had made (`grove_state`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT, Resource
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.grove.podcliqueset import pod_clique_set_name
from integration.controllers_multinode.multinode_testlib import (
    PODGANG,
    SAMPLES,
    UPSTREAM,
    GroveBackend,
    apply,
    condition,
    deploy,
    eventually_on_grove,
    graph_of,
    grove_documents,
    is_ready,
    multinode_services,
    running_ready,
)
from testsupport.graphs import two_service_graph
from testsupport.operator import RunningOperator, wait_quiet
from testsupport.volumes import delete_volumes

pytestmark = [pytest.mark.cluster, pytest.mark.addons("grove")]

GRAPHS = {
    "vllm": UPSTREAM / "backends_vllm_disagg-multinode.yaml",
    "sglang": UPSTREAM / "backends_sglang_disagg-multinode.yaml",
    "trtllm": UPSTREAM / "backends_trtllm_disagg-multinode.yaml",
}
# One multinode worker service (SGLangWorker, two nodes per replica) beside a frontend.
SGLANG_SAMPLE = SAMPLES / "nvidia.com_v1alpha1_dynamographdeployment_sglang_multinode.yaml"
PCSG = kinds.POD_CLIQUE_SCALING_GROUP
PCLQ = kinds.POD_CLIQUE
NOT_READY_ANNOTATION = "kwok.dynamo.test/ready"  # kwok's stage keeps such a pod Running, not Ready
PHASE_ANNOTATION = "kwok.dynamo.test/phase"  # kwok's stage moves such a pod to this phase
CLIQUE_LABEL = "grove.io/podclique"
GROUP_LABEL = "grove.io/podcliquescalinggroup"
GROUP_INDEX_LABEL = "grove.io/podcliquescalinggroup-replica-index"
Obj = dict[str, Any]


async def live(api: Client, resource: Resource, ns: str, selector: str | None = None) -> list[Obj]:
    """The objects not being deleted, by name."""
    found = await api.list(resource, namespace=ns, label_selector=selector)
    return sorted(
        (o for o in found if not o["metadata"].get("deletionTimestamp")),
        key=lambda o: str(o["metadata"]["name"]),
    )


async def ready_graph(api: Client, grove: GroveBackend, ns: str, name: str) -> Obj:
    """The graph once Ready (for its current generation)."""
    dgd: Obj = await eventually_on_grove(
        api,
        ns,
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=is_ready,
        grove=grove,
        what=f"{name} Ready",
    )
    return dgd


def pod_placed_and_ready(pod: Obj) -> bool:
    """Running and Ready, placed by kube-scheduler on a node after Grove lifted its scheduling gate."""
    spec = pod["spec"]
    return (
        running_ready(pod)
        and not spec.get("schedulingGates")
        and spec.get("schedulerName", "default-scheduler") == "default-scheduler"
        and bool(spec.get("nodeName"))
    )


async def assert_service_groups_run(api: Client, ns: str, graph: str, service: str, spec: Obj) -> None:
    """The multinode service is one scaling group Grove reports fully available: per replica a
    leader clique of one pod and a worker clique of nodeCount-1, every pod placed, Running and Ready."""
    group_name = f"{graph}-0-{naming.normalised_service(service)}"
    base = naming.normalised_service(service)
    replicas, nodes = spec.get("replicas", 1), spec["multinode"]["nodeCount"]
    group = await api.get(PCSG, group_name, namespace=ns)
    assert group["spec"]["cliqueNames"] == [f"{base}-ldr", f"{base}-wkr"]
    assert (group["spec"]["replicas"], group["status"].get("availableReplicas")) == (replicas, replicas)
    pods = await live(api, kinds.POD, ns, f"{GROUP_LABEL}={group_name}")
    assert all(pod_placed_and_ready(p) for p in pods), [p["metadata"]["name"] for p in pods]
    per_clique = Counter(p["metadata"]["labels"][CLIQUE_LABEL] for p in pods)
    assert per_clique == {
        **{f"{group_name}-{i}-{base}-ldr": 1 for i in range(replicas)},
        **{f"{group_name}-{i}-{base}-wkr": nodes - 1 for i in range(replicas)},
    }


async def service_groups_run(api: Client, ns: str, graph: str, service: str, spec: Obj) -> bool:
    """`assert_service_groups_run` as a probe (an AssertionError means "not yet")."""
    await assert_service_groups_run(api, ns, graph, service, spec)
    return True


async def ready_sample(
    api: Client, grove: GroveBackend, ns: str, *, replicas: int = 1
) -> tuple[Obj, str, Obj]:
    """The SGLang multinode sample on Grove, Ready: the graph, its multinode service and its spec."""
    [dgd] = grove_documents(SGLANG_SAMPLE, ns)
    [(service, spec)] = multinode_services(dgd).items()
    spec["replicas"] = replicas
    await apply(api, dgd)
    await ready_graph(api, grove, ns, dgd["metadata"]["name"])
    return dgd, service, spec


async def warnings(api: Client, ns: str, name: str) -> list[Obj]:
    events = await api.list(EVENT, namespace=ns)
    return [
        e
        for e in events
        if e.get("type") == "Warning"
        and (e.get("involvedObject") or {}).get("kind") == "DynamoGraphDeployment"
        and (e.get("involvedObject") or {}).get("name") == name
    ]


@pytest.mark.parametrize("backend", sorted(GRAPHS))
async def test_multinode_graph_becomes_ready_through_grove(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str, backend: str
) -> None:
    """The graph is one PodCliqueSet (no DCD, no LeaderWorkerSet, no Deployment); every multinode
    service is a scaling group Grove reports available with whole leader + worker sets, every pod is
    placed by kube-scheduler after Grove lifted its gate and runs; the graph is Ready, its
    `status.services` read back from Grove's scaling groups and cliques."""
    assert operator.capabilities.grove
    ns = short_ns
    docs = grove_documents(GRAPHS[backend], ns)
    dgd = graph_of(docs)
    name = dgd["metadata"]["name"]
    services = multinode_services(dgd)
    assert services, "the example has multinode services"
    volumes = await deploy(api, docs)
    try:
        ready = await ready_graph(api, grove, ns, name)
        for service, spec in services.items():
            await eventually_on_grove(
                api,
                ns,
                lambda service=service, spec=spec: service_groups_run(api, ns, name, service, spec),
                grove=grove,
                what=f"{service}'s scaling group runs",
            )
            status = ready["status"]["services"][service]
            assert status["componentKind"] == "PodCliqueScalingGroup"
            assert status["componentName"] == f"{name}-0-{naming.normalised_service(service)}"
            assert status["availableReplicas"] == spec.get("replicas", 1)
        pods = await live(api, kinds.POD, ns)
        assert all(pod_placed_and_ready(p) for p in pods)
        cliques = await live(api, PCLQ, ns)
        assert len(pods) == sum(c["spec"]["replicas"] for c in cliques)
        assert await api.get(kinds.POD_CLIQUE_SET, name, namespace=ns)
        assert await live(api, PODGANG, ns)
        assert await api.list(kinds.DCD, namespace=ns) == []
        assert await api.list(kinds.LWS, namespace=ns) == []
        assert await api.list(kinds.DEPLOYMENT, namespace=ns) == []
    finally:
        await delete_volumes(api, volumes)


# How a leader pod fails, as kwok's stages play it: readiness failing with the container running, or
# the pod Failed (exit code 1). Grove (v0.1.0-alpha.6) replaces neither by itself: it counts a Failed
# pod as its clique's replica, so the set stays short until the pod is deleted.
LEADER_FAILURES = {
    "not-ready": {NOT_READY_ANNOTATION: "false"},
    "failed": {PHASE_ANNOTATION: "Failed", "kwok.dynamo.test/message": "NCCL error"},
}


@pytest.mark.parametrize("failure", sorted(LEADER_FAILURES))
async def test_a_failing_leader_marks_the_service_not_ready_with_the_reason(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str, failure: str
) -> None:
    """A leader pod that stops being ready or fails takes its leader + worker set out of available
    in Grove's own status: the graph is not Ready, its message names the scaling group, the leader
    clique and the counts; once the pod is deleted Grove makes a new one and the graph is Ready."""
    ns = short_ns
    dgd, service, _ = await ready_sample(api, grove, ns)
    name = dgd["metadata"]["name"]
    group = f"{name}-0-{naming.normalised_service(service)}"
    leader_clique = f"{group}-0-{naming.normalised_service(service)}-ldr"
    [leader] = await live(api, kinds.POD, ns, f"{CLIQUE_LABEL}={leader_clique}")
    await api.patch(
        kinds.POD,
        leader["metadata"]["name"],
        {"metadata": {"annotations": LEADER_FAILURES[failure]}},
        namespace=ns,
    )
    not_ready = await eventually_on_grove(
        api,
        ns,
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: condition(d, "Ready").get("status") == "False",
        grove=grove,
        what=f"{name} not Ready",
    )
    ready_condition = condition(not_ready, "Ready")
    # Placed but not ready: the pods' fault, not capacity's, and no rollout runs.
    assert ready_condition["reason"] == "pods_not_ready"
    # Grove's counts, then (once the pod's state reaches the watch cache) what the pod says.
    assert ready_condition["message"].startswith(
        f"pcsg/{group}: scheduled but available=0/1 (podclique/{leader_clique}: ready=0/1)"
    )
    assert not_ready["status"]["services"][service]["scheduledReplicas"] == 1
    assert not_ready["status"]["state"] == "pending"
    assert not_ready["status"]["services"][service]["availableReplicas"] == 0
    # Not replaced (alpha.6): the clique still has that one pod, now failed or not ready.
    still = await live(api, kinds.POD, ns, f"{CLIQUE_LABEL}={leader_clique}")
    assert [p["metadata"]["uid"] for p in still] == [leader["metadata"]["uid"]]
    # Recovery is Grove's: the pod deleted, its clique makes a new one and the set is whole again.
    await api.delete(kinds.POD, leader["metadata"]["name"], namespace=ns)
    await ready_graph(api, grove, ns, name)
    [new_leader] = await live(api, kinds.POD, ns, f"{CLIQUE_LABEL}={leader_clique}")
    assert new_leader["metadata"]["uid"] != leader["metadata"]["uid"]
    assert pod_placed_and_ready(new_leader)


async def test_scaling_a_multinode_service_adds_a_whole_leader_and_worker_set(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str
) -> None:
    """replicas 1 -> 2 on a multinode service reaches its scaling group through the `scale`
    subresource (the operator's field manager owns `spec.replicas` there); Grove adds replica 1 of
    the group, a leader clique and a worker clique with their pods, all running; the graph is Ready
    again with 2 available replicas."""
    ns = short_ns
    dgd, service, spec = await ready_sample(api, grove, ns)
    name = dgd["metadata"]["name"]
    group_name = f"{name}-0-{naming.normalised_service(service)}"
    spec["replicas"] = 2
    await apply(api, dgd)
    await eventually_on_grove(
        api,
        ns,
        lambda: service_groups_run(api, ns, name, service, spec),
        grove=grove,
        what=f"{group_name} runs 2 whole sets",
    )
    ready = await ready_graph(api, grove, ns, name)
    status = ready["status"]["services"][service]
    assert (status["replicas"], status["availableReplicas"]) == (2, 2)
    group = await api.get(PCSG, group_name, namespace=ns)
    scaled_by = [
        (m.get("manager"), m.get("subresource"))
        for m in group["metadata"].get("managedFields") or ()
        if "f:replicas" in ((m.get("fieldsV1") or {}).get("f:spec") or {})
    ]
    assert ("dynamo-operator", "scale") in scaled_by, scaled_by


async def test_scaling_a_multinode_service_down_removes_its_last_leader_and_worker_set(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str
) -> None:
    """replicas 2 -> 1: Grove removes replica 1 of the scaling group (its leader and worker cliques
    and their pods); replica 0 keeps running, and the graph is Ready with 1 available replica."""
    ns = short_ns
    dgd, service, spec = await ready_sample(api, grove, ns, replicas=2)
    name = dgd["metadata"]["name"]
    group_name = f"{name}-0-{naming.normalised_service(service)}"
    before = {p["metadata"]["uid"] for p in await live(api, kinds.POD, ns, f"{GROUP_INDEX_LABEL}=0")}
    spec["replicas"] = 1
    await apply(api, dgd)
    await eventually_on_grove(
        api,
        ns,
        lambda: live(api, kinds.POD, ns, f"{GROUP_LABEL}={group_name},{GROUP_INDEX_LABEL}=1"),
        until=lambda pods: pods == [],
        grove=grove,
        what=f"{group_name} replica 1 gone",
    )
    await eventually_on_grove(
        api,
        ns,
        lambda: service_groups_run(api, ns, name, service, spec),
        grove=grove,
        what=f"{group_name} runs 1 whole set",
    )
    ready = await ready_graph(api, grove, ns, name)
    status = ready["status"]["services"][service]
    assert (status["replicas"], status["availableReplicas"]) == (1, 1)
    after = {p["metadata"]["uid"] for p in await live(api, kinds.POD, ns, f"{GROUP_INDEX_LABEL}=0")}
    assert after == before, "replica 0's pods were left alone"


async def test_trtllm_pods_mount_the_mpi_ssh_key_secret_made_in_their_namespace(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str
) -> None:
    """The TRT-LLM multinode graph on Grove: the namespace has the MPI SSH key Secret (made by the
    operator) and every leader and worker pod mounts it into its main container."""
    ns = short_ns
    docs = grove_documents(GRAPHS["trtllm"], ns)
    dgd = graph_of(docs)
    name = dgd["metadata"]["name"]
    volumes = await deploy(api, docs)
    try:
        await ready_graph(api, grove, ns, name)
        secret = await api.get(kinds.SECRET, consts.DEFAULT_MPI_SSH_SECRET_NAME, namespace=ns)
        assert secret["data"], "the key pair is in the Secret"
        for service in multinode_services(dgd):
            group = f"{name}-0-{naming.normalised_service(service)}"
            pods = await live(api, kinds.POD, ns, f"{GROUP_LABEL}={group}")
            assert pods
            for pod in pods:
                assert_mounts_secret(pod, consts.DEFAULT_MPI_SSH_SECRET_NAME)
    finally:
        await delete_volumes(api, volumes)


def assert_mounts_secret(pod: Obj, secret: str) -> None:
    [volume] = [
        v["name"]
        for v in pod["spec"].get("volumes") or ()
        if (v.get("secret") or {}).get("secretName") == secret
    ]
    [main] = pod["spec"]["containers"][:1]
    assert volume in {m["name"] for m in main.get("volumeMounts") or ()}, (
        pod["metadata"]["name"],
        main.get("volumeMounts"),
    )
    assert running_ready(pod)


# Per service, a service name too long for Grove even beside the shortest set name (8 characters: a
# long graph name is shortened instead, as upstream 2a6da14c does), and the sum it reaches.
OVER_BUDGET = {
    "Frontend": ("F" * 38, 46),  # set 8 + PodClique 38
    "SGLangWorker": ("W" * 19, 50),  # set 8 + scaling group 19 + leader clique 23
}


@pytest.mark.parametrize("service", sorted(OVER_BUDGET))
async def test_a_graph_over_groves_name_budget_says_so_and_writes_nothing(
    api: Client, operator: RunningOperator, grove: GroveBackend, short_ns: str, service: str
) -> None:
    """Grove names pods from the set, scaling group and clique names and its webhook refuses a
    PodCliqueSet whose names add up to more than 45 characters. A graph whose service is over that
    budget even with the set name cut to 8, single-node or multinode, gets Ready=False
    `GroveNameTooLong` naming the service, the names and their lengths, and one Warning Event;
    nothing is written for it, and it stays quiet."""
    ns = short_ns
    graph_name = "over-budget"
    long_service, total = OVER_BUDGET[service]
    if service == "SGLangWorker":
        [dgd] = grove_documents(SGLANG_SAMPLE, ns)
    else:
        dgd = two_service_graph(graph_name, ns)
    dgd["metadata"]["name"] = graph_name
    services = dgd["spec"]["services"]
    services[long_service] = services.pop(service)
    await apply(api, dgd)
    failed = await eventually_on_grove(
        api,
        ns,
        lambda: api.get(kinds.DGD, graph_name, namespace=ns),
        until=lambda d: condition(d, "Ready").get("reason") == "GroveNameTooLong",
        grove=grove,
        what=f"{graph_name} GroveNameTooLong",
    )
    message = condition(failed, "Ready")["message"]
    assert f"{long_service}: Grove names its pods from PodCliqueSet 'ove-" in message  # cut to 8
    assert f"= {total} characters, more than the 45 Grove allows" in message
    assert failed["status"]["state"] == "failed"
    await wait_quiet()
    assert len(await warnings(api, ns, graph_name)) == 1
    assert await api.list(kinds.POD_CLIQUE_SET, namespace=ns) == []
    for resource in (kinds.SERVICE, kinds.SERVICE_ACCOUNT, kinds.ROLE, kinds.ROLE_BINDING, kinds.POD):
        mine = [
            o["metadata"]["name"]
            for o in await api.list(resource, namespace=ns)
            if graph_name in o["metadata"]["name"]
        ]
        assert mine == [], (resource.kind, mine)


async def test_a_graph_named_over_groves_budget_runs_on_a_shortened_pod_clique_set(
    api: Client, operator: RunningOperator, grove: GroveBackend, ns: str
) -> None:
    """A graph whose name leaves its Grove names over 45 characters runs Ready on Grove instead of
    being refused: its PodCliqueSet is the name cut to the budget with a 4-hex-digit hash, as
    upstream 2a6da14c names it, labelled with the graph's name, and both pods are placed and Ready."""
    name = "a-graph-named-well-past-groves-budget-x"  # 39 + len("frontend") = 47 > 45
    graph = two_service_graph(name, ns)
    set_name = pod_clique_set_name(graph)
    assert set_name != name and len(set_name) == 45 - len("frontend")  # the widest service
    await apply(api, graph)
    await ready_graph(api, grove, ns, name)
    [pcs] = await live(api, kinds.POD_CLIQUE_SET, ns)
    assert pcs["metadata"]["name"] == set_name
    assert pcs["metadata"]["labels"][consts.LABEL_GRAPH_DEPLOYMENT_NAME] == name
    pods = await live(api, kinds.POD, ns)
    assert len(pods) == 2 and all(pod_placed_and_ready(p) for p in pods)
    assert all(p["metadata"]["name"].startswith(f"{set_name}-0-") for p in pods)


async def test_a_dynamo_namespace_longer_than_a_label_runs_on_grove_with_the_label_shortened(
    api: Client, operator: RunningOperator, grove: GroveBackend, ns: str
) -> None:
    """`<namespace>-<graph>` (the Dynamo namespace) over 63 characters: the pods' env carries it
    whole, their `nvidia.com/dynamo-namespace` label carries it shortened by the repo's digest rule
    (the same value on every pod of the graph), and the graph runs Ready on Grove."""
    name = "grove-long-dynamo-namespace"  # 27 + len("frontend") = 35: within Grove's budget
    dynamo_namespace = f"{ns}-{name}"
    assert len(dynamo_namespace) > naming.LABEL_VALUE_MAX
    await apply(api, two_service_graph(name, ns))
    await ready_graph(api, grove, ns, name)
    pods = await live(api, kinds.POD, ns)
    assert len(pods) == 2 and all(pod_placed_and_ready(p) for p in pods)
    for pod in pods:
        assert pod["metadata"]["labels"][consts.LABEL_DYNAMO_NAMESPACE] == naming.label_value(
            dynamo_namespace
        )
        env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env") or ()}
        assert env["DYN_NAMESPACE"] == dynamo_namespace
