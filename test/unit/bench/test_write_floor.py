"""The write floor's plan (which objects, how many) and its writer pool, without a cluster."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from bench import write_floor as wf
from dynamo_operator.internal import kinds
from dynamo_operator.internal.dynamo.common.context import GenContext

NS = "floor"
CTX = GenContext(namespace=NS)
IMAGE = "registry.example/vllm-runtime:1"


def graph(services: int, *, frontend: bool = True) -> dict[str, Any]:
    """A vLLM graph with an optional frontend and `services` - 1 (or `services`) workers."""
    specs: dict[str, Any] = {}
    if frontend:
        specs["Frontend"] = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": IMAGE}}}
    for i in range(services - len(specs)):
        specs[f"Worker{i}"] = {
            "componentType": "worker",
            "subComponentType": "decode" if i % 2 == 0 else "prefill",
            "extraPodSpec": {"mainContainer": {"image": IMAGE, "command": ["python3"]}},
        }
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS},
        "spec": {"backendFramework": "vllm", "services": specs},
    }


SIZES = [
    pytest.param(1, True, id="frontend-only"),
    pytest.param(1, False, id="one-worker"),
    pytest.param(2, True, id="frontend-and-worker"),
    pytest.param(3, True, id="frontend-decode-prefill"),
    pytest.param(5, True, id="five-services"),
]


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_one_component_deployment_and_deployment_per_service(services: int, frontend: bool) -> None:
    counts = wf.graph_writes(graph(services, frontend=frontend), CTX)
    assert counts["DynamoComponentDeployment"] == services
    assert counts["Deployment"] == services


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_one_event_per_graph_whatever_its_size(services: int, frontend: bool) -> None:
    """The graph's sync folds its creations into one Event; its components' workloads are created
    without one (the operator's graph-owned DCDs do not announce their first creation)."""
    assert wf.graph_writes(graph(services, frontend=frontend), CTX)["Event"] == 1


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_one_status_write_per_graph_and_component(services: int, frontend: bool) -> None:
    counts = wf.graph_writes(graph(services, frontend=frontend), CTX)
    assert counts["DynamoGraphDeployment/status"] == 1
    assert counts["DynamoComponentDeployment/status"] == services


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_the_graph_itself_and_its_discovery_rbac_once(services: int, frontend: bool) -> None:
    counts = wf.graph_writes(graph(services, frontend=frontend), CTX)
    assert [counts[k] for k in ("DynamoGraphDeployment", "ServiceAccount", "Role", "RoleBinding")] == [1] * 4


def test_three_service_graph_costs_the_benchmarks_nineteen_writes() -> None:
    """bench_scale's graph: the user's create plus the 18 writes the operator makes for it."""
    assert sum(wf.graph_writes(graph(3), CTX).values()) == 19


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_one_annotation_patch_per_graph(services: int, frontend: bool) -> None:
    """Origin version and serving worker hash, written together at the graph's first look."""
    assert wf.graph_writes(graph(services, frontend=frontend), CTX)["DynamoGraphDeployment/annotations"] == 1


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_every_planned_object_is_one_the_client_can_write(services: int, frontend: bool) -> None:
    """`kinds.resource_of` knows each kind (it raises KeyError otherwise)."""
    dgd = graph(services, frontend=frontend)
    dgd["metadata"]["uid"] = "u-1"
    children = wf.plan_graph_children(dgd, CTX)
    for dcd in (c for c in children if wf.is_component(c)):
        dcd["metadata"]["uid"] = "u-2"
        children += wf.plan_component_children(dcd, CTX)
    assert all(kinds.resource_of(obj) for obj in children)


def test_created_event_names_each_child_and_the_owner_uid() -> None:
    owner = {**graph(2), "metadata": {"name": "g", "namespace": NS, "uid": "u-1"}}
    children = wf.plan_graph_children(owner, CTX)
    event = wf.created_event(owner, children)
    assert event["involvedObject"]["uid"] == "u-1"
    for child in children:
        assert f"{child['kind']}/{child['metadata']['name']}" in event["message"]


def test_ready_status_observes_the_objects_generation() -> None:
    obj = {"metadata": {"name": "g", "generation": 4}}
    status = wf.ready_status(obj)["status"]
    assert status["observedGeneration"] == 4
    assert [c["observedGeneration"] for c in status["conditions"]] == [4]


@pytest.mark.parametrize(
    ("kind", "before"),
    [
        pytest.param("Deployment", "DynamoComponentDeployment", id="deployment-before-its-enablers"),
        pytest.param("DynamoComponentDeployment", "DynamoGraphDeployment", id="dcd-before-new-graphs"),
        pytest.param("ServiceAccount", "DynamoGraphDeployment", id="service-account-before-new-graphs"),
        pytest.param("DynamoGraphDeployment", "Service", id="graph-before-services"),
        pytest.param("DynamoGraphDeployment", "Role", id="graph-before-roles"),
        pytest.param("RoleBinding", "Event", id="anything-before-events"),
    ],
)
def test_writes_on_the_way_to_a_deployment_go_first(kind: str, before: str) -> None:
    assert wf.priority_of({"kind": kind}) < wf.priority_of({"kind": before})


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_every_deployment_has_an_enabler_to_wait_for(services: int, frontend: bool) -> None:
    """The pods' ServiceAccount and each Deployment's owner are among the graph's enablers."""
    dgd = graph(services, frontend=frontend)
    dgd["metadata"]["uid"] = "u-1"
    children = wf.plan_graph_children(dgd, CTX)
    enablers = {(c["kind"], c["metadata"]["name"]) for c in children if c["kind"] in wf.ENABLERS}
    for dcd in (c for c in children if wf.is_component(c)):
        dcd["metadata"]["uid"] = "u-2"
        for dep in (o for o in wf.plan_component_children(dcd, CTX) if o["kind"] == "Deployment"):
            sa = dep["spec"]["template"]["spec"].get("serviceAccountName")
            assert sa is None or ("ServiceAccount", sa) in enablers
            [owner] = dep["metadata"]["ownerReferences"]
            assert ("DynamoComponentDeployment", owner["name"]) in enablers


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_a_role_binding_is_written_only_after_every_other_child(services: int, frontend: bool) -> None:
    """The operator's ServiceAccount may not `bind`: the API server checks its RoleBinding against
    the Role it names and answers 404 until that Role exists, so the floor keeps the operator's
    waves and its RoleBindings come last."""
    dgd = graph(services, frontend=frontend)
    dgd["metadata"]["uid"] = "u-1"
    children = wf.plan_graph_children(dgd, CTX)
    first, last = wf.graph_waves(children)
    assert {c["kind"] for c in last} == {"RoleBinding"}
    assert "RoleBinding" not in {c["kind"] for c in first}
    assert {r["roleRef"]["name"] for r in last} <= {
        c["metadata"]["name"] for c in first if c["kind"] == "Role"
    }


@pytest.mark.parametrize(("services", "frontend"), SIZES)
def test_the_waves_hold_every_child_once_in_order(services: int, frontend: bool) -> None:
    dgd = graph(services, frontend=frontend)
    dgd["metadata"]["uid"] = "u-1"
    children = wf.plan_graph_children(dgd, CTX)
    waved = [c for wave in wf.graph_waves(children) for c in wave]
    assert sorted(map(id, waved)) == sorted(map(id, children))
    assert [c for c in waved if c["kind"] != "RoleBinding"] == [
        c for c in children if c["kind"] != "RoleBinding"
    ]


def test_children_without_a_role_binding_are_one_wave() -> None:
    children = [{"kind": "ServiceAccount"}, {"kind": "DynamoComponentDeployment"}]
    assert wf.graph_waves(children) == [children]


# -- the pool -----------------------------------------------------------------------------------------


async def test_pool_never_runs_more_jobs_at_once_than_its_concurrency() -> None:
    pool = wf.WritePool(3)
    running = peak = 0

    async def job() -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        running -= 1

    for _ in range(20):
        pool.submit(0, job)
    await pool.run()
    assert peak == 3


async def test_pool_runs_lower_priority_numbers_first() -> None:
    pool = wf.WritePool(1)
    order: list[str] = []

    def job(name: str) -> wf.Job:
        async def run() -> None:
            order.append(name)

        return run

    pool.submit(wf.Priority.GRAPH, job("graph"))
    pool.submit(wf.Priority.STATUS, job("status"))
    pool.submit(wf.Priority.DEPLOYMENT, job("deployment-1"))
    pool.submit(wf.Priority.DEPLOYMENT, job("deployment-2"))
    await pool.run()
    assert order == ["status", "deployment-1", "deployment-2", "graph"]


async def test_pool_returns_once_jobs_submitted_by_jobs_are_done() -> None:
    pool = wf.WritePool(2)
    ran: list[int] = []

    def chain(depth: int) -> wf.Job:
        async def run() -> None:
            ran.append(depth)
            if depth < 5:
                pool.submit(0, chain(depth + 1))

        return run

    pool.submit(0, chain(0))
    await pool.run()
    assert ran == [0, 1, 2, 3, 4, 5]


async def test_pool_waits_for_a_hold_to_be_released() -> None:
    pool = wf.WritePool(1)
    ran: list[str] = []
    pool.hold()

    async def late() -> None:
        await asyncio.sleep(0)
        pool.submit(0, lambda: _append(ran, "late"))
        pool.release()

    async with asyncio.TaskGroup() as group:
        group.create_task(late())
        await pool.run()
    assert ran == ["late"]


async def test_pool_raises_the_first_failure() -> None:
    pool = wf.WritePool(2)

    async def boom() -> None:
        raise RuntimeError("refused")

    pool.submit(0, boom)
    with pytest.raises(ExceptionGroup) as caught:
        await pool.run()
    assert caught.group_contains(RuntimeError, match="refused")


def test_pool_refuses_zero_writers() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        wf.WritePool(0)


async def _append(out: list[str], value: str) -> None:
    out.append(value)
