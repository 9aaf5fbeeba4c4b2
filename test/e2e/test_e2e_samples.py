"""End to end as users run it: config/default deployed, `kubectl apply -k config/samples`, then the day-2
operations (update, scale, restart, delete) and what users read back (`kubectl describe`, /metrics).

The tests of this module share one namespace and run in file order: the samples applied first are
what later tests scale, describe and delete. Each sample's header says what it needs and what the
local control plane shows without it (`# Needs:`, `# Local control plane:`); the first test checks
that statement, the next provides what they need, playing the components this cluster lacks: the
storage admin (a PV for the disagg model cache), the profiler (DGDR output ConfigMap and the Job's pod
finishing), the serving pods' LoRA API (loopback HTTP servers on the simulated pod IPs, in 127.0.0.0/8).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio
import yaml
from aiohttp import web
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import (
    CONFIG_MAP,
    CUSTOM_RESOURCE_DEFINITION,
    DEPLOYMENT,
    JOB,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    SERVICE,
    Resource,
)
from e2e.conftest import Deployed
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.components import dcd_of, deployment_of
from testsupport.samples import SAMPLES, holds, sample_files, statement

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

GROUP = "nvidia.com"
DGD = Resource(GROUP, "v1alpha1", "dynamographdeployments", "DynamoGraphDeployment")
DCD = Resource(GROUP, "v1alpha1", "dynamocomponentdeployments", "DynamoComponentDeployment")
DGDR = Resource(GROUP, "v1alpha1", "dynamographdeploymentrequests", "DynamoGraphDeploymentRequest")
DGDSA = Resource(
    GROUP, "v1alpha1", "dynamographdeploymentscalingadapters", "DynamoGraphDeploymentScalingAdapter"
)
MODEL = Resource(GROUP, "v1alpha1", "dynamomodels", "DynamoModel")
PV = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)
STORAGE_CLASS = Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False)
TIMEOUT = 120.0
LORA_PORT = 9090
CONVERGING = ["vllm-agg", "vllm-autoscale", "vllm-disagg"]
MULTINODE = {"sglang-multinode": "SGLangWorker", "trtllm-multinode": "TRTLLMWorker"}


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return dict(cond)
    return {}


async def get_or_none(api: Client, resource: Resource, name: str, namespace: str) -> dict[str, Any] | None:
    """The object, or None while it does not exist (yet)."""
    try:
        return await api.get(resource, name, namespace=namespace)
    except NotFound:
        return None


def converged(dgd: dict[str, Any] | None) -> bool:
    if dgd is None:
        return False
    ready = condition(dgd, "Ready")
    return (
        (dgd.get("status") or {}).get("state") == "successful"
        and ready.get("status") == "True"
        and ready.get("observedGeneration") == dgd["metadata"]["generation"]
    )


async def wait_dgd(api: Client, ns: str, name: str, timeout: float = TIMEOUT) -> dict[str, Any]:  # noqa: ASYNC109
    return await eventually(
        lambda: get_or_none(api, DGD, name, ns), until=converged, timeout=timeout, interval=0.5
    )  # type: ignore[return-value]


@pytest.fixture(scope="module")
def samples_ns(kubectl: Kubectl) -> Iterator[str]:
    """One namespace for the whole module (the samples interact: models find the graphs' pods)."""
    name = f"e2e-samples-{secrets.token_hex(3)}"
    kubectl("create", "namespace", name)
    kubectl("label", "namespace", name, "dynamo-operator.test/namespace=true")
    kubectl("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=30s", timeout=40)
    yield name
    kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found", timeout=20, check=False)


# --- the test's stand-ins for components this cluster lacks ---------------------------------------


class LoraServers:
    """The serving pods' LoRA API (`POST /v1/loras`, `DELETE /v1/loras/<name>`) on each pod IP."""

    def __init__(self) -> None:
        self.loaded: dict[str, set[str]] = {}
        self._runners: dict[str, web.AppRunner] = {}

    def _app(self, ip: str) -> web.Application:
        async def load(request: web.Request) -> web.Response:
            body = await request.json()
            self.loaded.setdefault(ip, set()).add(str(body["lora_name"]))
            return web.json_response({"status": "success"})

        async def unload(request: web.Request) -> web.Response:
            self.loaded.setdefault(ip, set()).discard(request.match_info["name"])
            return web.json_response({"status": "success"})

        app = web.Application()
        app.router.add_post("/v1/loras", load)
        app.router.add_delete("/v1/loras/{name}", unload)
        return app

    async def serve(self, ip: str) -> None:
        assert ip.startswith("127."), f"pod IP {ip} is not loopback"
        if ip in self._runners:
            return
        runner = web.AppRunner(self._app(ip), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, ip, LORA_PORT).start()
        self._runners[ip] = runner

    async def close(self) -> None:
        for runner in self._runners.values():
            await runner.cleanup()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def lora_servers() -> AsyncIterator[LoraServers]:
    servers = LoraServers()
    try:
        yield servers
    finally:
        await servers.close()


async def provide_storage(api: Client, ns: str) -> None:
    """What the disagg sample's header asks for: a `standard` StorageClass (kind ships one; this cluster
    has none and no provisioner) and a PersistentVolume that its claim binds to."""
    with contextlib.suppress(Exception):
        await api.create(
            STORAGE_CLASS,
            {
                "apiVersion": "storage.k8s.io/v1",
                "kind": "StorageClass",
                "metadata": {"name": "standard"},
                "provisioner": "kubernetes.io/no-provisioner",
                "volumeBindingMode": "Immediate",
            },
        )
    await api.create(
        PV,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{ns}-model-cache"},
            "spec": {
                "capacity": {"storage": "100Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "standard",
                "persistentVolumeReclaimPolicy": "Delete",
                "hostPath": {"path": f"/tmp/{ns}-model-cache"},
                "claimRef": {"namespace": ns, "name": "vllm-disagg-model-cache"},
            },
        },
    )


RESOURCES = {r.kind: r for r in (DGD, DGDR, MODEL)}


async def lws_served(api: Client) -> bool:
    try:
        await api.get(CUSTOM_RESOURCE_DEFINITION, "leaderworkersets.leaderworkerset.x-k8s.io")
    except NotFound:
        return False
    return True


async def play_profiler(api: Client, kubectl: Kubectl, ns: str, dgdr: str) -> str:
    """Write the output ConfigMap as the profiler's sidecar would and finish the Job's pod."""
    generated = {
        "apiVersion": f"{GROUP}/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "llm-sla-generated"},
        "spec": {
            "backendFramework": "trtllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "extraPodSpec": {
                        "mainContainer": {"image": "registry.example/ai-dynamo/tensorrtllm-runtime:0.6.1"}
                    },
                },
                "TRTLLMWorker": {
                    "componentType": "worker",
                    "replicas": 1,
                    "extraPodSpec": {
                        "mainContainer": {
                            "image": "registry.example/ai-dynamo/tensorrtllm-runtime:0.6.1",
                            "command": ["python3"],
                            "args": ["-m", "dynamo.trtllm"],
                        }
                    },
                },
            },
        },
    }
    await eventually(lambda: get_or_none(api, JOB, f"profile-{dgdr}", ns), timeout=TIMEOUT)
    await api.create(
        CONFIG_MAP,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"dgdr-output-{dgdr}",
                "namespace": ns,
                "labels": {"dgdr.nvidia.com/name": dgdr},
            },
            "data": {
                "config_with_planner.yaml": yaml.safe_dump(generated),
                "mocker_config_with_planner.yaml": yaml.safe_dump(generated),
                "profiler_status.yaml": "status: success\n",
            },
        },
    )
    pods = await eventually(
        lambda: api.list(POD, namespace=ns, label_selector=f"batch.kubernetes.io/job-name=profile-{dgdr}"),
        until=lambda ps: any((p.get("status") or {}).get("phase") == "Running" for p in ps),
        timeout=TIMEOUT,
    )
    pod = next(p for p in pods if (p.get("status") or {}).get("phase") == "Running")["metadata"]["name"]
    kubectl("annotate", f"pod/{pod}", "-n", ns, "kwok.dynamo.test/phase=Succeeded")
    return str(generated["metadata"]["name"])


# --- the tests -----------------------------------------------------------------------------------


async def test_operator_serves_readyz_healthz_and_metrics(deployed: Deployed) -> None:
    """The probes answer ok and /metrics carries the controller, workqueue and REST client families."""
    assert deployed.health("/readyz")[0] == 200
    assert deployed.health("/healthz")[0] == 200
    text = deployed.metrics()
    for family in (
        "controller_runtime_reconcile_total",
        "controller_runtime_active_workers",
        "workqueue_depth",
        "rest_client_requests_total",
        "process_resident_memory_bytes",
    ):
        assert family in text, family


async def test_every_sample_is_ready_or_as_its_header_says_without_prerequisites(
    api: Client, kubectl: Kubectl, samples_ns: str
) -> None:
    """`kubectl apply -k config/samples` into an empty namespace: each object reaches exactly the
    condition or state its header's `Local control plane:` line states (on kind, only that they apply)."""
    kubectl("apply", "--server-side", "-n", samples_ns, "-k", str(SAMPLES))
    if os.environ.get("DYNAMO_E2E_MODE") != "local":
        return
    for path in sample_files():
        [doc] = [d for d in yaml.safe_load_all(path.read_text()) if d]
        stated = statement(path)
        assert stated, path.name
        resource, name = RESOURCES[doc["kind"]], doc["metadata"]["name"]
        await eventually(
            lambda r=resource, n=name: get_or_none(api, r, n, samples_ns),
            until=lambda obj, st=stated: holds(obj, st),
            timeout=TIMEOUT,
            interval=0.5,
        )


async def test_kubectl_get_dgd_shows_state_and_reason(kubectl: Kubectl, samples_ns: str) -> None:
    """The columns a user reads first: READY, STATE, REASON."""
    out = kubectl("get", "dgd", "-n", samples_ns)
    assert out.split()[:4] == ["NAME", "READY", "STATE", "REASON"], out
    [line] = [ln for ln in out.splitlines() if ln.startswith("sglang-multinode ")]
    assert "NoOrchestratorAvailable" in line, out


async def test_local_cluster_controllers_add_no_warnings_of_their_own(
    kubectl: Kubectl, samples_ns: str
) -> None:
    """`kubectl get events` shows the samples' real problems, not the local cluster's: no Endpoints or
    EndpointSlice controller failing on the loopback pod IPs every few seconds."""
    if os.environ.get("DYNAMO_E2E_MODE") != "local":
        pytest.skip("about the project's local control plane")
    events = kubectl.json("get", "events", "-n", samples_ns, "--field-selector", "type=Warning")["items"]
    noisy = {
        e["reason"]
        for e in events
        if (e.get("reportingComponent") or (e.get("source") or {}).get("component", ""))
        in ("endpoint-controller", "endpoint-slice-controller", "endpointslice-mirroring-controller")
    }
    assert not noisy, noisy


async def test_every_sample_reaches_ready_given_what_its_header_asks_for(
    api: Client, kubectl: Kubectl, samples_ns: str, lora_servers: LoraServers
) -> None:
    """With the prerequisites provided (storage; the profiler; the pods' LoRA API) the single-node graphs
    converge, the DGDR profiles and deploys its graph, the base model finds its endpoints and the LoRA
    is loaded on every serving pod; multinode graphs say why they cannot run without LeaderWorkerSet."""
    ns = samples_ns
    await provide_storage(api, ns)
    for name in CONVERGING:
        dgd = await wait_dgd(api, ns, name)
        assert set(dgd["status"]["services"]) == set(dgd["spec"]["services"]), name

    if await lws_served(api):
        for name in MULTINODE:
            await wait_dgd(api, ns, name, timeout=240)
    else:
        # Without LeaderWorkerSet a multinode service cannot run: the graph says so in its Ready
        # condition (and, where a DCD was made, the DCD's Available condition says MissingAPI).
        for name, service in MULTINODE.items():
            dgd = await eventually(
                lambda name=name: get_or_none(api, DGD, name, ns),
                until=lambda d: "LeaderWorkerSet" in condition(d, "Ready").get("message", ""),
                timeout=TIMEOUT,
            )
            assert condition(dgd, "Ready")["status"] == "False"
            dcd = await dcd_of(api, ns, name, service)
            if dcd is not None and condition(dcd, "Available"):
                assert condition(dcd, "Available")["status"] == "False"

    generated = await play_profiler(api, kubectl, ns, "example-llm-sla")
    await wait_dgd(api, ns, generated)
    dgdr = await eventually(
        lambda: get_or_none(api, DGDR, "example-llm-sla", ns),
        until=lambda d: ((d or {}).get("status") or {}).get("state") == "Ready",
        timeout=TIMEOUT,
    )
    assert dgdr["status"]["generatedDeployment"]["metadata"]["name"] == generated

    # The model samples attach to the vllm-agg sample's worker (its modelRef names the base model).
    base = await eventually(
        lambda: get_or_none(api, MODEL, "qwen3-0-6b", ns),
        until=lambda m: condition(m, "EndpointsReady").get("status") == "True",
        timeout=TIMEOUT,
    )
    ips = [e["address"].removeprefix("http://").rsplit(":", 1)[0] for e in base["status"]["endpoints"]]
    assert ips, base["status"]
    for ip in ips:
        await lora_servers.serve(ip)
    lora = await eventually(
        lambda: get_or_none(api, MODEL, "qwen3-0-6b-sql-lora", ns),
        until=lambda m: condition(m, "EndpointsReady").get("status") == "True",
        timeout=TIMEOUT,
    )
    assert lora["status"]["readyEndpoints"] == len(ips)
    assert all("example-org/qwen3-0.6b-sql-lora" in lora_servers.loaded.get(ip, set()) for ip in ips)


async def test_events_and_conditions_readable_with_kubectl_describe(
    kubectl: Kubectl, samples_ns: str
) -> None:
    """What a user reads: conditions and the operator's Events in `kubectl describe`."""
    ns = samples_ns
    text = kubectl("describe", "dgd", "vllm-disagg", "-n", ns)
    assert "Conditions:" in text and "All resources are ready" in text, text
    assert "Events:" in text and "Created" in text, text
    multinode = kubectl("describe", "dgd", "sglang-multinode", "-n", ns)
    assert "Ready" in multinode and "LeaderWorkerSet" in multinode, multinode
    model = kubectl("describe", "dynamomodel", "qwen3-0-6b-sql-lora", "-n", ns)
    assert "EndpointsReady" in model and "Events:" in model, model


async def test_model_lora_unloaded_when_the_model_is_deleted(
    api: Client, kubectl: Kubectl, samples_ns: str, lora_servers: LoraServers
) -> None:
    """Deleting the LoRA model unloads it from every pod (finalizer) and the object goes away."""
    ns = samples_ns
    kubectl("delete", "dynamomodel", "qwen3-0-6b-sql-lora", "-n", ns, "--wait=false")

    async def gone() -> bool:
        try:
            await api.get(MODEL, "qwen3-0-6b-sql-lora", namespace=ns)
        except NotFound:
            return True
        return False

    assert lora_servers.loaded, "the adapter was loaded somewhere before"
    await eventually(gone, until=bool, timeout=TIMEOUT)
    assert all("example-org/qwen3-0.6b-sql-lora" not in names for names in lora_servers.loaded.values())


async def test_scaling_adapter_scales_its_service(api: Client, kubectl: Kubectl, samples_ns: str) -> None:
    """`kubectl scale dgdsa` on the scaling-adapter sample: the worker Deployment follows and the graph
    is Ready again with two replicas."""
    ns = samples_ns
    kubectl("scale", "dgdsa", "vllm-autoscale-vllmdecodeworker", "-n", ns, "--replicas=2")
    await eventually(
        lambda: deployment_of(api, ns, "vllm-autoscale", "VllmDecodeWorker"),
        until=lambda d: ((d or {}).get("status") or {}).get("readyReplicas") == 2,
        timeout=TIMEOUT,
    )
    dgd = await wait_dgd(api, ns, "vllm-autoscale")
    assert dgd["spec"]["services"]["VllmDecodeWorker"]["replicas"] == 2


async def test_update_scale_restart_and_delete_a_graph(
    api: Client, kubectl: Kubectl, samples_ns: str
) -> None:
    """On the vllm-agg sample: an env change replaces exactly that (worker) service's Deployment by one
    named with the new worker hash; a replica change scales it; a restart id replaces every pod;
    deleting the graph removes all it created."""
    ns = samples_ns
    frontend = await api.get(DEPLOYMENT, "vllm-agg-frontend", namespace=ns)
    worker = await deployment_of(api, ns, "vllm-agg", "VllmDecodeWorker")
    assert worker is not None
    worker_patch = {
        "spec": {"services": {"VllmDecodeWorker": {"envs": [{"name": "E2E_FLAG", "value": "1"}]}}}
    }
    kubectl("patch", "dgd", "vllm-agg", "-n", ns, "--type=merge", "-p", json.dumps(worker_patch))
    await wait_dgd(api, ns, "vllm-agg")
    replaced = await eventually(
        lambda: deployment_of(api, ns, "vllm-agg", "VllmDecodeWorker"),
        until=lambda d: d is not None and d["metadata"]["name"] != worker["metadata"]["name"],
        timeout=TIMEOUT,
    )
    assert replaced is not None
    after = await api.get(DEPLOYMENT, "vllm-agg-frontend", namespace=ns)
    assert after["metadata"]["generation"] == frontend["metadata"]["generation"]

    scale = {"spec": {"services": {"VllmDecodeWorker": {"replicas": 3}}}}
    kubectl("patch", "dgd", "vllm-agg", "-n", ns, "--type=merge", "-p", json.dumps(scale))
    await eventually(
        lambda: get_or_none(api, DEPLOYMENT, replaced["metadata"]["name"], ns),
        until=lambda d: (
            ((d or {}).get("status") or {}).get("readyReplicas") == 3 and d["spec"]["replicas"] == 3
        ),
        timeout=TIMEOUT,
    )
    await wait_dgd(api, ns, "vllm-agg")

    selector = "nvidia.com/dynamo-graph-deployment-name=vllm-agg"
    before = {p["metadata"]["name"] for p in await api.list(POD, namespace=ns, label_selector=selector)}
    assert before, "no pods carry the graph label"
    restart = {"spec": {"restart": {"id": "e2e-1", "strategy": {"type": "Parallel"}}}}
    kubectl("patch", "dgd", "vllm-agg", "-n", ns, "--type=merge", "-p", json.dumps(restart))
    dgd = await eventually(
        lambda: get_or_none(api, DGD, "vllm-agg", ns),
        until=lambda d: (
            (((d or {}).get("status") or {}).get("restart") or {}).get("phase") == "Completed"
            and converged(d)
        ),
        timeout=TIMEOUT * 2,
    )
    assert dgd["status"]["restart"]["observedID"] == "e2e-1"
    live = await api.list(POD, namespace=ns, label_selector=selector)
    current = {p["metadata"]["name"] for p in live if not p["metadata"].get("deletionTimestamp")}
    assert not (current & before), "every pod was replaced"

    uid = dgd["metadata"]["uid"]
    kubectl("delete", "dgd", "vllm-agg", "-n", ns, "--wait=true", timeout=TIMEOUT)

    async def leftovers() -> list[str]:
        out = []
        for resource in (DCD, DEPLOYMENT, SERVICE, PERSISTENT_VOLUME_CLAIM):
            for obj in await api.list(resource, namespace=ns):
                if any(r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or ()):
                    out.append(f"{resource.kind}/{obj['metadata']['name']}")
        for obj in await api.list(DEPLOYMENT, namespace=ns):
            if obj["metadata"]["name"].startswith("vllm-agg-"):
                out.append(f"Deployment/{obj['metadata']['name']}")
        return out

    await eventually(leftovers, until=lambda left: not left, timeout=TIMEOUT)
