"""The DGD and DCD controllers end to end, against the real API server, with the operator in-process.

kube-controller-manager runs Deployments and garbage collection, the scheduler places pods on kwok
nodes and kwok makes them Running/Ready, so "Ready" here is the real chain: DGD → DCDs → Deployments
→ ReplicaSets → pods → Deployment status → DCD `Available` → DGD `successful`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.flags import default_operator_version
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import EVENT, Resource
from testsupport.api import as_stored, eventually, only_this_test_namespace_left, recording
from testsupport.components import WORKER_HASH_LABEL, dcd_of, deployment_of, of_service
from testsupport.components import name as name_of
from testsupport.graphs import IMAGE, two_service_graph
from testsupport.operator import (
    TEST_FIELD_MANAGER,
    RunningOperator,
    record_writes,
    wait_quiet,
)
from testsupport.volumes import bind_volume, delete_volumes

SAMPLES = Path(__file__).resolve().parents[3] / "config" / "samples"

READY_TIMEOUT = 120.0
# Longer than the operator's shortest periodic re-check (10 s, a component not ready looking at its
# pods): a steady state that wrote on any schedule that short would show here.
QUIET_SECONDS = 15.0


def sample(name: str, namespace: str) -> dict[str, Any]:
    """config/samples/nvidia.com_v1alpha1_dynamographdeployment_<name>.yaml, placed in `namespace`."""
    doc = yaml.safe_load((SAMPLES / f"nvidia.com_v1alpha1_dynamographdeployment_{name}.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    return dict(doc)


def two_services(name: str, namespace: str, *, worker_env: str = "a") -> dict[str, Any]:
    """A small graph: a frontend and one worker, each one replica."""
    return two_service_graph(name, namespace, worker_env=worker_env)


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Apply a manifest as the test's own field manager (so edits never fight the operator's)."""
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def is_ready(dgd: dict[str, Any]) -> bool:
    """DGD `successful`, Ready=True, and the status describes the current generation."""
    status = dgd.get("status") or {}
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ()
    )
    return (
        status.get("state") == "successful"
        and ready
        and status.get("observedGeneration") == dgd["metadata"].get("generation")
    )


async def wait_ready(
    api: Client,
    namespace: str,
    name: str,
    *,
    timeout: float = READY_TIMEOUT,  # noqa: ASYNC109 - a polling bound
) -> dict[str, Any]:
    """The DGD once it is Ready for its current generation."""
    return await eventually(
        lambda: api.get(kinds.DGD, name, namespace=namespace), until=is_ready, timeout=timeout, interval=0.25
    )


async def get_or_none(api: Client, resource: Resource, name: str, namespace: str) -> dict[str, Any] | None:
    try:
        return await api.get(resource, name, namespace=namespace)
    except NotFound:
        return None


async def bind_volumes(api: Client, dgd: dict[str, Any], namespace: str) -> list[str]:
    """A PersistentVolume per PVC the graph names, so its claims bind (no provisioner here)."""
    return [
        await bind_volume(
            api,
            namespace,
            pvc["name"],
            storage=pvc.get("size") or "1Gi",
            access_modes=[pvc.get("volumeAccessMode") or "ReadWriteOnce"],
            storage_class=pvc.get("storageClass") or "standard",
            field_manager=TEST_FIELD_MANAGER,
        )
        for pvc in (dgd.get("spec") or {}).get("pvcs") or ()
    ]


def recording_versions(
    api: Client, resource: Resource, namespace: str, *, keep: Callable[[dict[str, Any]], Any] = lambda o: o
) -> contextlib.AbstractAsyncContextManager[list[Any]]:
    """Every listed or added/modified version of every `resource` object, mapped through `keep`."""
    return recording(api, resource, namespace, keep=lambda _t, o: keep(o), types=("ADDED", "MODIFIED"))


def restart_status(dgd: dict[str, Any]) -> Any:
    return (dgd.get("status") or {}).get("restart")


def recording_events(
    api: Client, resource: Resource, namespace: str
) -> contextlib.AbstractAsyncContextManager[list[Any]]:
    """(event type, name, rolled) of every `resource` event while the block runs; `rolled`: its
    controller saw its spec and reports it Available."""
    return recording(
        api,
        resource,
        namespace,
        keep=lambda t, o: (t, o["metadata"]["name"], _restart_view(o)[2]),
        listed=False,
    )


pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]


ORIGIN_VERSION = "nvidia.com/dynamo-operator-origin-version"
CURRENT_WORKER_HASH = "nvidia.com/current-worker-hash-v2"
WORKER_TYPES = ("worker", "prefill", "decode")


@pytest.mark.parametrize("sample_name", ["vllm_agg", "vllm_disagg", "scaling_adapter"])
async def test_sample_ready(api: Client, operator: RunningOperator, ns: str, sample_name: str) -> None:
    """Each single-node sample: one DCD per service (workers `<dgd>-<svc>-<worker hash>`), its
    Deployment and Service, pods Ready, every DCD Available, the DGD successful with `status.services`
    describing every service, stamped with the operator's version and the serving worker hash."""
    dgd = sample(sample_name, ns)
    graph = dgd["metadata"]["name"]
    volumes = await bind_volumes(api, dgd, ns)
    try:
        await apply(api, dgd)
        ready = await wait_ready(api, ns, graph)
        services = dgd["spec"]["services"]
        assert set(ready["status"]["services"]) == set(services)
        annotations = ready["metadata"]["annotations"]
        assert annotations[ORIGIN_VERSION] == default_operator_version()
        for svc, spec in services.items():
            dcd = await eventually(lambda svc=svc: dcd_of(api, ns, graph, svc), timeout=30)
            dcd_name = name_of(dcd)
            if spec.get("componentType") in WORKER_TYPES:
                worker_hash = dcd["metadata"]["labels"][WORKER_HASH_LABEL]
                assert (dcd_name, worker_hash) == (
                    f"{graph}-{svc.lower()}-{worker_hash}",
                    annotations[CURRENT_WORKER_HASH],
                )
            else:
                assert dcd_name == f"{graph}-{svc.lower()}"
            [owner] = dcd["metadata"]["ownerReferences"]
            assert (owner["uid"], owner["controller"]) == (ready["metadata"]["uid"], True)
            conds = {c["type"]: c["status"] for c in dcd["status"]["conditions"]}
            assert conds == {"Available": "True", "DynamoComponentReady": "True"}
            deployment = await api.get(kinds.DEPLOYMENT, dcd_name, namespace=ns)
            assert deployment["status"].get("readyReplicas", 0) == spec.get("replicas", 1)
            status = ready["status"]["services"][svc]
            assert (status["componentKind"], status["componentName"]) == ("Deployment", dcd_name)
            assert status["readyReplicas"] == status["replicas"] == spec.get("replicas", 1)
        ready_cond = next(c for c in ready["status"]["conditions"] if c["type"] == "Ready")
        assert ready_cond["reason"] == "all_resources_are_ready"
    finally:
        await delete_volumes(api, volumes)


@pytest.mark.parametrize("name", ["sglang_multinode", "trtllm_multinode"])
async def test_multinode_lws(api: Client, operator: RunningOperator, ns: str, name: str) -> None:
    """With the LeaderWorkerSet API served, a multinode service becomes LeaderWorkerSets (no
    Deployment), and its DCD says truthfully that they are not ready (no LWS controller runs here)."""
    assert operator.capabilities.lws
    dgd = sample(name, ns)
    await apply(api, dgd)
    dgd_name = dgd["metadata"]["name"]
    multinode = [s for s, spec in dgd["spec"]["services"].items() if spec.get("multinode")]
    for svc in multinode:
        dcd_name = name_of(await eventually(lambda svc=svc: dcd_of(api, ns, dgd_name, svc), timeout=60))
        sets = await eventually(
            lambda dcd_name=dcd_name: api.list(kinds.LWS, namespace=ns),
            until=lambda xs, dcd_name=dcd_name: any(x["metadata"]["name"].startswith(dcd_name) for x in xs),
            timeout=60,
        )
        for lws in sets:
            [owner] = lws["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["name"]) == ("DynamoComponentDeployment", dcd_name)
        assert await get_or_none(api, kinds.DEPLOYMENT, dcd_name, ns) is None
        dcd = await eventually(
            lambda dcd_name=dcd_name: api.get(kinds.DCD, dcd_name, namespace=ns),
            until=lambda d: bool((d.get("status") or {}).get("conditions")),
            timeout=60,
        )
        available = next(c for c in dcd["status"]["conditions"] if c["type"] == "Available")
        assert (available["status"], available["reason"]) == ("False", "LeaderWorkerSetNotReady")
    dgd_live = await eventually(
        lambda: api.get(kinds.DGD, dgd_name, namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "pending",
        timeout=60,
    )
    ready = next(c for c in dgd_live["status"]["conditions"] if c["type"] == "Ready")
    assert all(svc in ready["message"] for svc in multinode)


# --- edits of a running graph ---------------------------------------------------------------------

RESTART_AT = "nvidia.com/restartAt"


async def workload_views(api: Client, ns: str) -> dict[str, tuple[int, str]]:
    """Deployment name → (generation, pod-template hash annotation)."""
    out = {}
    for d in await api.list(kinds.DEPLOYMENT, namespace=ns):
        meta = d["metadata"]
        out[meta["name"]] = (
            meta["generation"],
            (meta.get("annotations") or {}).get("nvidia.com/pod-template-hash", ""),
        )
    return out


async def test_worker_env_change_replaces_the_workers_after_the_new_ones_serve(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Changing a worker's env names a new worker DCD (new worker hash): its Deployment runs the new
    env, the old DCD is deleted only after the new one is Available, the graph's current-worker-hash
    follows, and the frontend keeps its generation and template."""
    await apply(api, two_services("g", ns, worker_env="a"))
    first = await wait_ready(api, ns, "g")
    before = await workload_views(api, ns)
    old = name_of(await dcd_of(api, ns, "g", "Worker"))
    async with recording_events(api, kinds.DCD, ns) as events:
        await apply(api, two_services("g", ns, worker_env="b"))
        ready = await wait_ready(api, ns, "g")
        new = name_of(await eventually(lambda: dcd_of(api, ns, "g", "Worker"), timeout=60))
        await eventually(
            lambda: events,
            until=lambda xs: ("DELETED", old, False) in xs or ("DELETED", old, True) in xs,
            timeout=30,
        )
    assert new != old
    became_ready = events.index(next(e for e in events if e[1] == new and e[2]))
    deleted = next(i for i, e in enumerate(events) if e[0] == "DELETED" and e[1] == old)
    assert became_ready < deleted, events
    await eventually(
        lambda: get_or_none(api, kinds.DEPLOYMENT, old, ns), until=lambda x: x is None, timeout=60
    )
    after = await workload_views(api, ns)
    assert after["g-frontend"] == before["g-frontend"]
    worker = await api.get(kinds.DEPLOYMENT, new, namespace=ns)
    [main] = [c for c in worker["spec"]["template"]["spec"]["containers"] if c["name"] == "main"]
    assert {"name": "WORKER_FLAVOUR", "value": "b"} in main["env"]
    new_hash = new.rsplit("-", 1)[1]
    assert {"name": "DYN_NAMESPACE_WORKER_SUFFIX", "value": new_hash} in main["env"]
    assert (
        ready["metadata"]["annotations"][CURRENT_WORKER_HASH]
        == new_hash
        != first["metadata"]["annotations"][CURRENT_WORKER_HASH]
    )
    assert ready["status"]["services"]["Worker"]["componentName"] == new
    assert ready["status"]["services"]["Worker"]["updatedReplicas"] == 1


async def test_a_graph_is_reported_as_stored_in_v1beta1(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The operator reads and writes graphs in their storage version: the status it writes, read
    without any conversion, holds v1beta1's `components` (each workload named in `componentNames`),
    and its status writes are recorded as v1beta1."""
    await apply(api, two_services("g", ns))
    await wait_ready(api, ns, "g")
    graph = await as_stored(api, kinds.DGD, "g", ns)  # no codec: the wire form
    status = graph["status"]
    assert graph["apiVersion"] == "nvidia.com/v1beta1"
    assert "services" not in status
    worker = name_of(await deployment_of(api, ns, "g", "Worker"))
    assert status["components"]["Worker"]["componentNames"] == [worker]
    assert status["components"]["Frontend"]["componentNames"] == ["g-frontend"]
    status_writes = [m for m in graph["metadata"]["managedFields"] if m.get("subresource") == "status"]
    assert {m["apiVersion"] for m in status_writes} == {"nvidia.com/v1beta1"}


async def test_scaling_a_service_changes_only_its_replicas(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Scaling one service changes its Deployment's replicas only; status reports the new count."""
    dgd = two_services("g", ns)
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
    worker_name = name_of(await deployment_of(api, ns, "g", "Worker"))
    before = await workload_views(api, ns)
    dgd["spec"]["services"]["Worker"]["replicas"] = 3
    await apply(api, dgd)
    ready = await wait_ready(api, ns, "g")
    after = await workload_views(api, ns)
    assert after["g-frontend"] == before["g-frontend"]
    assert after[worker_name][1] == before[worker_name][1]  # same name, no roll: same pod template
    worker = await api.get(kinds.DEPLOYMENT, worker_name, namespace=ns)
    assert (worker["spec"]["replicas"], worker["status"]["readyReplicas"]) == (3, 3)
    assert ready["status"]["services"]["Worker"]["replicas"] == 3


async def test_adding_and_removing_services_touches_only_them(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A removed service's DCD and children go away, an added one appears, the others stay as they were."""
    dgd = two_services("g", ns)
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
    frontend_dcd = await api.get(kinds.DCD, "g-frontend", namespace=ns)
    before = await workload_views(api, ns)
    dgd["spec"]["services"]["Prefill"] = copy.deepcopy(dgd["spec"]["services"].pop("Worker"))
    await apply(api, dgd)
    ready = await wait_ready(api, ns, "g")
    assert set(ready["status"]["services"]) == {"Frontend", "Prefill"}
    await eventually(
        lambda: of_service(api, kinds.DCD, ns, "g", "Worker"), until=lambda xs: xs == [], timeout=60
    )
    await eventually(
        lambda: of_service(api, kinds.DEPLOYMENT, ns, "g", "Worker"), until=lambda xs: xs == [], timeout=60
    )
    prefill = await eventually(lambda: deployment_of(api, ns, "g", "Prefill"), timeout=60)
    assert prefill is not None and prefill["status"]["readyReplicas"] == 1
    frontend_now = await api.get(kinds.DCD, "g-frontend", namespace=ns)
    assert frontend_now["metadata"]["uid"] == frontend_dcd["metadata"]["uid"]
    assert frontend_now["metadata"]["generation"] == frontend_dcd["metadata"]["generation"]
    assert (await workload_views(api, ns))["g-frontend"] == before["g-frontend"]


async def test_deleting_the_graph_collects_every_child(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Foreground deletion: GC removes DCDs, Deployments, Services; the operator recreates nothing."""
    await apply(api, two_services("g", ns))
    await wait_ready(api, ns, "g")
    await api.delete(kinds.DGD, "g", namespace=ns, propagation_policy="Foreground")

    async def leftovers() -> list[str]:
        names = []
        for resource in (kinds.DGD, kinds.DCD, kinds.DEPLOYMENT, kinds.SERVICE, kinds.SERVICE_ACCOUNT):
            names += [
                f"{resource.kind}/{o['metadata']['name']}"
                for o in await api.list(resource, namespace=ns)
                if o["metadata"]["name"] != "default"
            ]
        return names

    await eventually(leftovers, until=lambda xs: xs == [], timeout=90)


async def test_image_pull_secrets_are_discovered_and_opt_out_honoured(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A registry Secret created later is injected into the matching pods; a service that opts out
    (annotation) never gets it."""
    dgd = two_services("g", ns)
    dgd["spec"]["services"]["Worker"]["annotations"] = {
        "nvidia.com/disable-image-pull-secret-discovery": "true"
    }
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
    frontend = await api.get(kinds.DEPLOYMENT, "g-frontend", namespace=ns)
    assert not frontend["spec"]["template"]["spec"].get("imagePullSecrets")
    payload = base64.b64encode(
        json.dumps({"auths": {"registry.example": {"auth": "eDp5"}}}).encode()
    ).decode()
    await api.create(
        kinds.SECRET,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": "regcred", "namespace": ns},
            "data": {".dockerconfigjson": payload},
        },
    )
    frontend = await eventually(
        lambda: api.get(kinds.DEPLOYMENT, "g-frontend", namespace=ns),
        until=lambda d: d["spec"]["template"]["spec"].get("imagePullSecrets") == [{"name": "regcred"}],
        timeout=60,
    )
    worker = await deployment_of(api, ns, "g", "Worker")
    assert worker is not None and not worker["spec"]["template"]["spec"].get("imagePullSecrets")
    await wait_ready(api, ns, "g")


def _restart_view(dcd: dict[str, Any]) -> tuple[str, str | None, bool]:
    """(DCD name, restart id it carries, rolled) for one version of a DCD."""
    meta, status = dcd["metadata"], dcd.get("status") or {}
    rolled = status.get("observedGeneration") == meta.get("generation") and any(
        c.get("type") == "Available" and c.get("status") == "True" for c in status.get("conditions") or ()
    )
    return meta["name"], _restart_id(dcd), rolled


def _restart_id(dcd: dict[str, Any]) -> str | None:
    """The restart id of a DCD in the tests' v1alpha1 view (testsupport/dcd_view.py): its pod
    template's, else its spec's."""
    spec = dcd.get("spec") or {}
    template = (spec.get("extraPodMetadata") or {}).get("annotations") or {}
    return template.get(RESTART_AT) or (spec.get("annotations") or {}).get(RESTART_AT)


async def _restart_done(api: Client, ns: str, rid: str) -> dict[str, Any]:
    def done(d: dict[str, Any]) -> bool:
        restart = (d.get("status") or {}).get("restart") or {}
        return is_ready(d) and restart.get("observedID") == rid and restart.get("phase") == "Completed"

    return await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=done, timeout=READY_TIMEOUT)


async def _seen_completed(restarts: list[Any], rid: str) -> None:
    """The watch recorder lags the GET that saw completion by a moment: wait for it to catch up."""
    await eventually(
        lambda: restarts,
        until=lambda xs: any(r and r.get("observedID") == rid and r.get("phase") == "Completed" for r in xs),
        timeout=30,
    )


async def test_restart_sequential_follows_order(api: Client, operator: RunningOperator, ns: str) -> None:
    """Sequential restart: services restart in `order`, the next only once the previous has fully rolled;
    every pod template ends up carrying the restart id."""
    dgd = two_services("g", ns)
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
    worker = name_of(await dcd_of(api, ns, "g", "Worker"))  # a restart keeps names: not a spec change
    dgd["spec"]["restart"] = {"id": "r1", "strategy": {"type": "Sequential", "order": ["Worker", "Frontend"]}}
    async with (
        recording_versions(api, kinds.DCD, ns, keep=_restart_view) as dcds,
        recording_versions(api, kinds.DGD, ns, keep=restart_status) as restarts,
    ):
        await apply(api, dgd)
        await _restart_done(api, ns, "r1")
        await _seen_completed(restarts, "r1")
        await eventually(lambda: dcds, until=lambda xs: ("g-frontend", "r1", True) in xs, timeout=30)
    first_frontend = next(i for i, (n, rid, _) in enumerate(dcds) if n == "g-frontend" and rid == "r1")
    assert any(n == worker and rid == "r1" and rolled for n, rid, rolled in dcds[:first_frontend])
    progress = [tuple(r.get("inProgress") or ()) for r in restarts if r and r.get("observedID") == "r1"]
    assert [p for i, p in enumerate(progress) if i == 0 or p != progress[i - 1]] == [
        ("Worker",),
        ("Frontend",),
        (),
    ]
    for deployment_name in (worker, "g-frontend"):
        deployment = await api.get(kinds.DEPLOYMENT, deployment_name, namespace=ns)
        assert deployment["spec"]["template"]["metadata"]["annotations"][RESTART_AT] == "r1"


async def test_restart_parallel_restarts_all_at_once(api: Client, operator: RunningOperator, ns: str) -> None:
    """Parallel restart: every service carries the new id from the first step on."""
    dgd = two_services("g", ns)
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
    worker = name_of(await dcd_of(api, ns, "g", "Worker"))
    dgd["spec"]["restart"] = {"id": "p1", "strategy": {"type": "Parallel"}}
    async with recording_versions(api, kinds.DGD, ns, keep=restart_status) as restarts:
        await apply(api, dgd)
        await _restart_done(api, ns, "p1")
        await _seen_completed(restarts, "p1")
    steps = [r for r in restarts if r and r.get("observedID") == "p1"]
    assert steps[0] == {"observedID": "p1", "phase": "Restarting", "inProgress": ["Frontend", "Worker"]}
    assert steps[-1] == {"observedID": "p1", "phase": "Completed"}
    for deployment_name in (worker, "g-frontend"):
        deployment = await api.get(kinds.DEPLOYMENT, deployment_name, namespace=ns)
        assert deployment["spec"]["template"]["metadata"]["annotations"][RESTART_AT] == "p1"


async def test_users_pvc_is_never_deleted(api: Client, operator: RunningOperator, ns: str) -> None:
    """A PVC the user brought (`create: false`) is never owned nor deleted; one the graph created is
    owned by it and goes with it."""
    await api.create(
        kinds.PVC,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "users-data", "namespace": ns},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        },
    )
    dgd = two_services("g", ns)
    dgd["spec"]["pvcs"] = [
        {"name": "users-data", "create": False},
        {
            "name": "made",
            "create": True,
            "size": "1Gi",
            "storageClass": "standard",
            "volumeAccessMode": "ReadWriteOnce",
        },
    ]
    dgd["spec"]["services"]["Worker"]["volumeMounts"] = [{"name": "users-data", "mountPoint": "/data"}]
    dgd_live = await apply(api, dgd)
    made = await eventually(lambda: get_or_none(api, kinds.PVC, "made", ns), until=lambda x: x is not None)
    assert [(r["uid"], r["controller"]) for r in made["metadata"]["ownerReferences"]] == [
        (dgd_live["metadata"]["uid"], True)
    ]
    await eventually(lambda: deployment_of(api, ns, "g", "Worker"))
    # The user takes the claim out of the graph: still not ours to delete. (A mount change is a worker
    # spec change: a new worker replaces the one that mounted it.)
    dgd["spec"]["pvcs"] = dgd["spec"]["pvcs"][1:]
    del dgd["spec"]["services"]["Worker"]["volumeMounts"]
    await apply(api, dgd)
    await eventually(
        lambda: deployment_of(api, ns, "g", "Worker"),
        until=lambda d: (
            d is not None
            and not any(
                v.get("name") == "users-data" for v in d["spec"]["template"]["spec"].get("volumes") or ()
            )
        ),
        timeout=READY_TIMEOUT,
    )
    await api.delete(kinds.DGD, "g", namespace=ns, propagation_policy="Foreground")
    await eventually(lambda: get_or_none(api, kinds.DGD, "g", ns), until=lambda x: x is None, timeout=90)
    users = await api.get(kinds.PVC, "users-data", namespace=ns)
    assert not users["metadata"].get("deletionTimestamp")
    assert not users["metadata"].get("ownerReferences")
    made_now = await get_or_none(api, kinds.PVC, "made", ns)
    assert made_now is None or made_now["metadata"].get("deletionTimestamp")


def standalone_frontend(name: str, ns: str, **spec: Any) -> dict[str, Any]:
    """A vLLM frontend DCD applied on its own (no graph), written as v1alpha1, with `spec` added."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "backendFramework": "vllm",
            "componentType": "frontend",
            "extraPodSpec": {"mainContainer": {"image": IMAGE}},
            **spec,
        },
    }


async def test_a_graph_announces_its_creation_once_and_a_lone_component_its_own(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A new graph: one Normal "Created" Event on the graph naming its components; its components
    create their workloads without an Event each (they are the graph's). A component applied on its
    own is nobody's part: it announces the Deployment and Service it created."""
    await apply(api, two_services("g", ns))
    await apply(api, standalone_frontend("lone", ns, serviceName="Frontend"))
    await wait_ready(api, ns, "g")
    await eventually(lambda: get_or_none(api, kinds.DEPLOYMENT, "lone", ns))

    async def created_events() -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = {}
        for e in await api.list(EVENT, namespace=ns):
            if e.get("reason") == "Created":
                involved = e["involvedObject"]
                out.setdefault((involved["kind"], involved["name"]), []).append(e["message"])
        return out

    events = await eventually(created_events, until=lambda ev: ("DynamoComponentDeployment", "lone") in ev)
    graph_events = events.pop(("DynamoGraphDeployment", "g"))
    assert len(graph_events) == 1 and "DynamoComponentDeployment/g-frontend" in graph_events[0], graph_events
    lone_events = events.pop(("DynamoComponentDeployment", "lone"))
    assert lone_events == ["created: Deployment/lone, Service/lone"], lone_events
    assert events == {}, events  # none on the graph's components


async def test_an_edit_of_a_field_only_v1alpha1_holds_reaches_the_components_workload(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """`spec.ingress` has no v1beta1 field: the DCD as stored keeps it in its reserved annotation, so
    editing it bumps no generation and leaves the stored spec alone. The Ingress follows all the same."""
    ingress = {"enabled": True, "host": "first", "ingressControllerClassName": "nginx"}
    frontend = standalone_frontend("edge", ns, ingress=ingress)

    async def hosts() -> list[str]:
        return [r["host"] for i in await api.list(kinds.INGRESS, namespace=ns) for r in i["spec"]["rules"]]

    await apply(api, frontend)
    await eventually(hosts, until=lambda h: bool(h) and h[0].startswith("first."))
    await wait_quiet(settle=3.0, timeout=90)  # nothing else is on its way to the component
    generation = (await api.get(kinds.DCD, "edge", namespace=ns))["metadata"]["generation"]
    frontend["spec"]["ingress"]["host"] = "second"
    await apply(api, frontend)
    await eventually(hosts, until=lambda h: bool(h) and h[0].startswith("second."))
    assert (await api.get(kinds.DCD, "edge", namespace=ns))["metadata"]["generation"] == generation


async def test_quiet_after_convergence(api: Client, operator: RunningOperator, ns: str) -> None:
    """Once every graph is Ready and nothing changes, the operator sends no write for them."""
    await apply(api, two_services("g", ns))
    agg = sample("vllm_agg", ns)
    await apply(api, agg)
    await wait_ready(api, ns, "g")
    await wait_ready(api, ns, agg["metadata"]["name"])
    await only_this_test_namespace_left(api, ns)
    await wait_quiet(settle=3.0, timeout=90)
    with record_writes() as writes:
        await asyncio.sleep(QUIET_SECONDS)
    # Judge this test's graphs: anything else still settling in the shared cluster is not "no change".
    mine = [w for w in writes if f"/namespaces/{ns}/" in w[1]]
    assert mine == [], writes


async def test_semantic_error_is_reported_and_nothing_applied(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """What the schema lets through but cannot be generated (an unparsable PVC size) fails the graph
    with a condition naming the field and a Warning Event, creates no child, and recovers once fixed."""
    dgd = two_services("g", ns)
    bad = {
        "name": "p",
        "create": True,
        "size": "lots",
        "storageClass": "standard",
        "volumeAccessMode": "ReadWriteOnce",
    }
    dgd["spec"]["pvcs"] = [bad]
    await apply(api, dgd)
    failed = await eventually(
        lambda: api.get(kinds.DGD, "g", namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "failed",
        timeout=60,
    )
    ready = next(c for c in failed["status"]["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidSpec")
    assert "spec.pvcs[0].size" in ready["message"]
    assert await api.list(kinds.DCD, namespace=ns) == []
    assert await api.list(kinds.PVC, namespace=ns) == []
    warnings = await eventually(
        lambda: api.list(EVENT, namespace=ns, field_selector="involvedObject.name=g,type=Warning"),
        until=lambda xs: any(e.get("reason") == "InvalidSpec" for e in xs),
        timeout=30,
    )
    assert len([e for e in warnings if e.get("reason") == "InvalidSpec"]) == 1
    dgd["spec"]["pvcs"] = [{**bad, "size": "1Gi"}]
    await apply(api, dgd)
    await wait_ready(api, ns, "g")
