"""What frontendSidecar, gpuMemoryService and failover generate when the cluster can run them.

Upstream made no worker Deployment for its GMS/failover examples (its cluster had no DRA API), so the
facts here are upstream's generation code and its tests (internal/gms, internal/dra,
internal/dynamo/failover*.go at df888f68), one behaviour per test.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal.dynamo import Capabilities, GenContext, GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.component.failover import apply_failover
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects, missing_apis
from dynamo_operator.internal.dynamo.grove.podcliqueset import uses_grove
from unit.dynamo.dynamo_testlib import IMAGE, NS, dgd, kind, objects_of, service

Obj = dict[str, Any]
DRA = GenContext(namespace=NS, capabilities=Capabilities(lws=True, dra=True))
NO_DRA = GenContext(namespace=NS, capabilities=Capabilities(lws=True))
CONTAINER_MODE = {"nvidia.com/dynamo-kube-discovery-mode": "container"}
GMS = {"enabled": True, "mode": "intraPod", "deviceClassName": "gpu.nvidia.com"}
FAILOVER = {"enabled": True, "mode": "intraPod", "numShadows": 1}


def worker(**extra: Any) -> Obj:
    """A vLLM worker with 2 GPUs (and 4 CPUs); `extra` fields merge as in `service`."""
    return service("worker", **{"resources": {"limits": {"gpu": "2"}, "requests": {"cpu": "4"}}, **extra})


def objs(spec: Obj, ctx: GenContext = DRA, **graph: Any) -> list[Obj]:
    annotations = graph.pop("annotations", None)
    g = dgd({"W": spec}, **graph)
    if annotations:
        g["metadata"]["annotations"] = annotations
    return objects_of(g, "W", ctx)


def pod(objects: list[Obj]) -> Obj:
    [dep] = kind(objects, "Deployment")
    spec: Obj = dep["spec"]["template"]["spec"]
    return spec


def by_name(items: list[Obj]) -> dict[str, Obj]:
    return {i["name"]: i for i in items}


def env_of(container: Obj) -> dict[str, str]:
    return {e["name"]: e.get("value", "") for e in container.get("env") or []}


# --- gpuMemoryService: the claim template --------------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "count"),
    [
        pytest.param({"limits": {"gpu": "2"}}, 2, id="limits"),
        pytest.param({"requests": {"gpu": "1"}}, 1, id="requests-when-no-limit"),
        pytest.param({"limits": {"gpu": "4"}, "requests": {"gpu": "1"}}, 4, id="limits-win"),
    ],
)
def test_claim_template_asks_for_exactly_the_components_gpus(resources: Obj, count: int) -> None:
    """ResourceClaimTemplate `<graph>-<lower(service)>-gpu`: one request `gpus`, ExactCount of the
    GPU count (limits.gpu, else requests.gpu), of the configured DeviceClass."""
    [rct] = kind(objs(worker(resources=resources, gpuMemoryService=GMS)), "ResourceClaimTemplate")
    assert rct["apiVersion"] == "resource.k8s.io/v1"
    assert rct["metadata"]["name"] == "g-w-gpu"
    assert rct["spec"] == {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpus",
                        "exactly": {
                            "deviceClassName": "gpu.nvidia.com",
                            "allocationMode": "ExactCount",
                            "count": count,
                        },
                    }
                ]
            }
        }
    }


def test_claim_template_uses_the_configured_device_class() -> None:
    spec = worker(gpuMemoryService={**GMS, "deviceClassName": "gpu.example.com"})
    [rct] = kind(objs(spec), "ResourceClaimTemplate")
    assert rct["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.example.com"


def test_claim_template_is_owned_by_the_dcd_and_written_before_the_deployment() -> None:
    """The pods name the template: it comes first, and goes with its DCD."""
    objects = objs(worker(gpuMemoryService=GMS))
    assert [o["kind"] for o in objects][:2] == ["ResourceClaimTemplate", "Deployment"]
    [ref] = objects[0]["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["controller"]) == ("DynamoComponentDeployment", True)


@pytest.mark.parametrize(
    "gms",
    [pytest.param(None, id="absent"), pytest.param({**GMS, "enabled": False}, id="disabled")],
)
def test_no_claim_template_without_gms(gms: Obj | None) -> None:
    spec = worker() if gms is None else worker(gpuMemoryService=gms)
    objects = objs(spec)
    assert kind(objects, "ResourceClaimTemplate") == []
    assert "resourceClaims" not in pod(objects)


# --- gpuMemoryService: the pod -------------------------------------------------------------------------


def test_gms_swaps_the_device_plugin_gpus_for_the_shared_claim() -> None:
    """The main container loses nvidia.com/gpu (limits and requests), keeps everything else, and
    uses claim `intrapod-shared-gpu`, which the pod takes from the template."""
    p = pod(objs(worker(gpuMemoryService=GMS)))
    main = p["containers"][0]
    assert main["resources"] == {"requests": {"cpu": "4"}, "claims": [{"name": "intrapod-shared-gpu"}]}
    assert p["resourceClaims"] == [{"name": "intrapod-shared-gpu", "resourceClaimTemplateName": "g-w-gpu"}]


def test_gms_tolerates_the_gpu_taint() -> None:
    """DRA bypasses the device plugin's toleration, so the pod gets it explicitly (after the user's)."""
    user = {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}
    p = pod(objs(worker(gpuMemoryService=GMS, extraPodSpec={"tolerations": [user]})))
    assert p["tolerations"] == [user, {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def test_gms_shares_a_socket_directory_with_the_main_container() -> None:
    """emptyDir `gms-intrapod-control` at /gms-intrapod-control, and GMS_SOCKET_DIR pointing there."""
    p = pod(objs(worker(gpuMemoryService=GMS)))
    main = p["containers"][0]
    assert by_name(p["volumes"])["gms-intrapod-control"] == {"name": "gms-intrapod-control", "emptyDir": {}}
    assert {"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"} in main["volumeMounts"]
    assert env_of(main)["GMS_SOCKET_DIR"] == "/gms-intrapod-control"


def test_gms_server_runs_as_a_restartable_init_sidecar_without_a_startup_probe() -> None:
    """`gms-server`: the engine's image, `python3 -m gpu_memory_service.cli.server`, the claim and
    the socket directory, restartPolicy Always, and no startupProbe (upstream 2a6da14c's sidecar:
    started once its process runs)."""
    p = pod(objs(worker(gpuMemoryService=GMS)))
    assert by_name(p["initContainers"])["gms-server"] == {
        "name": "gms-server",
        "image": IMAGE,
        "command": ["python3", "-m", "gpu_memory_service.cli.server"],
        "env": [{"name": "GMS_SOCKET_DIR", "value": "/gms-intrapod-control"}],
        "volumeMounts": [{"name": "gms-intrapod-control", "mountPath": "/gms-intrapod-control"}],
        "resources": {"claims": [{"name": "intrapod-shared-gpu"}]},
        "restartPolicy": "Always",
    }


def test_gms_without_the_dra_api_generates_nothing() -> None:
    """No resource.k8s.io/v1: MissingAPIError naming the field and the API (the DCD's condition)."""
    with pytest.raises(MissingAPIError) as err:
        objs(worker(gpuMemoryService=GMS), NO_DRA)
    assert err.value.field == "gpuMemoryService.enabled"
    assert err.value.api == "resource.k8s.io/v1 ResourceClaimTemplate"


@pytest.mark.parametrize(
    ("caps", "annotations", "fails"),
    [
        pytest.param(Capabilities(grove=True), {}, True, id="grove-fails-the-graph"),
        pytest.param(
            Capabilities(grove=True), {"nvidia.com/enable-grove": "False"}, True, id="grove-opt-out"
        ),
        pytest.param(Capabilities(), {}, True, id="dcd-pathway-fails-the-graph"),
        pytest.param(Capabilities(grove=True, dra=True), {}, False, id="grove-with-dra"),
        pytest.param(Capabilities(dra=True), {}, False, id="dcd-pathway-with-dra"),
    ],
)
def test_missing_dra_fails_the_whole_graph_on_either_pathway(
    caps: Capabilities, annotations: dict[str, str], fails: bool
) -> None:
    """Upstream 2a6da14c creates no workload for a graph whose GMS has no DRA (df888f68 let the
    DCD pathway run the other services and only that DCD wait)."""
    g = dgd({"W": worker(gpuMemoryService=GMS)})
    g["metadata"]["annotations"] = annotations
    ctx = GenContext(namespace=NS, capabilities=caps)
    found = missing_apis(g, ctx, grove=uses_grove(g, ctx))
    assert [e.field for e in found] == (["spec.services.W.gpuMemoryService.enabled"] if fails else [])


# --- failover ------------------------------------------------------------------------------------------


def failover_pod(**extra: Any) -> Obj:
    spec = worker(gpuMemoryService=GMS, failover=FAILOVER, **extra)
    return pod(objs(spec, annotations=CONTAINER_MODE))


def test_failover_clones_the_engine_into_two_containers_ahead_of_the_others() -> None:
    """engine-0 (active), engine-1 (standby), then the other containers (sidecar last)."""
    p = failover_pod(
        frontendSidecar={"image": "fe:1"}, extraPodSpec={"containers": [{"name": "x", "image": "x"}]}
    )
    assert [c["name"] for c in p["containers"]] == ["engine-0", "engine-1", "x", "sidecar-frontend"]


@pytest.mark.parametrize("index", [0, 1])
def test_each_engine_has_its_own_system_port_and_probes_on_it(index: int) -> None:
    """Port `system-<i>` 9090+i replaces the main container's ports; HTTP probes point at it."""
    engine = failover_pod()["containers"][index]
    assert engine["ports"] == [{"name": f"system-{index}", "containerPort": 9090 + index, "protocol": "TCP"}]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert engine[probe]["httpGet"]["port"] == f"system-{index}"


@pytest.mark.parametrize("index", [0, 1])
def test_each_engine_has_upstreams_failover_env(index: int) -> None:
    env = env_of(failover_pod()["containers"][index])
    assert {k: env.get(k) for k in FAILOVER_ENV} == {
        "ENGINE_ID": str(index),
        "CONTAINER_NAME": f"engine-{index}",
        "FAILOVER_LOCK_PATH": "/gms-intrapod-control/failover.lock",
        "DYN_SYSTEM_STARTING_HEALTH_STATUS": "notready",
        "DYN_SYSTEM_PORT": str(9090 + index),
        "DYN_SYSTEM_ENABLED": "true",
        "DYN_VLLM_GMS_SHADOW_MODE": "true",
        "VLLM_NIXL_SIDE_CHANNEL_PORT": str(5600 + index),
        "DYN_VLLM_KV_EVENT_PORT": str(20080 + index),
        "GMS_SOCKET_DIR": "/gms-intrapod-control",
    }
    assert "DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS" not in env
    assert "DYN_HEALTH_CHECK_ENABLED" not in env


FAILOVER_ENV = (
    "ENGINE_ID",
    "CONTAINER_NAME",
    "FAILOVER_LOCK_PATH",
    "DYN_SYSTEM_STARTING_HEALTH_STATUS",
    "DYN_SYSTEM_PORT",
    "DYN_SYSTEM_ENABLED",
    "DYN_VLLM_GMS_SHADOW_MODE",
    "VLLM_NIXL_SIDE_CHANNEL_PORT",
    "DYN_VLLM_KV_EVENT_PORT",
    "GMS_SOCKET_DIR",
)


def test_both_engines_keep_the_shared_claim() -> None:
    p = failover_pod()
    for engine in p["containers"][:2]:
        assert engine["resources"]["claims"] == [{"name": "intrapod-shared-gpu"}]


@pytest.mark.parametrize(
    ("command", "args", "engine1_command", "engine1_args"),
    [
        pytest.param(
            ["python3", "-m", "dynamo.vllm"],
            ["--model", "m"],
            ["python3", "-m", "dynamo.vllm"],
            ["--model", "m", "--master-port", "29600"],
            id="appended-when-absent",
        ),
        pytest.param(
            ["python3", "-m", "dynamo.vllm"],
            ["--master-port", "30000"],
            ["python3", "-m", "dynamo.vllm"],
            ["--master-port", "30100"],
            id="own-argument-shifted",
        ),
        pytest.param(
            ["/bin/sh", "-c"],
            ["python3 -m dynamo.vllm --master-port 30000 --model m"],
            ["/bin/sh", "-c"],
            ["python3 -m dynamo.vllm --master-port 30100 --model m"],
            id="shell-line-shifted",
        ),
        pytest.param(
            ["sh", "-c", "python3 -m dynamo.vllm --master-port 31000"],
            [],
            ["sh", "-c", "python3 -m dynamo.vllm --master-port 31100"],
            None,
            id="in-the-command",
        ),
    ],
)
def test_standby_engine_gets_its_own_master_port(
    command: list[str], args: list[str], engine1_command: list[str], engine1_args: list[str] | None
) -> None:
    """torch.distributed needs one store per engine: engine-1's master port is 100 higher."""
    main = {"name": "main", "image": IMAGE, "command": command, "env": []}
    if args:
        main["args"] = args
    p = {"containers": [main]}
    apply_failover(p, backend="vllm", node_count=1)
    engine0, engine1 = p["containers"]
    assert (engine0["command"], engine0.get("args")) == (command, args or None)
    assert (engine1["command"], engine1.get("args")) == (engine1_command, engine1_args)


def test_multinode_engines_know_the_group_size() -> None:
    p = {"containers": [{"name": "main", "image": IMAGE, "env": []}]}
    apply_failover(p, backend="vllm", node_count=3)
    assert all(env_of(e)["NNODES"] == "3" for e in p["containers"])


@pytest.mark.parametrize("backend", ["sglang", "trtllm", ""])
def test_failover_is_refused_for_other_backends(backend: str) -> None:
    p = {"containers": [{"name": "main", "image": IMAGE}]}
    with pytest.raises(GenerationError, match="only for the vLLM backend"):
        apply_failover(copy.deepcopy(p), backend=backend, node_count=1)


@pytest.mark.parametrize(
    ("annotations", "ok"),
    [
        pytest.param(CONTAINER_MODE, True, id="container-mode"),
        pytest.param({}, False, id="no-annotation"),
        pytest.param({"nvidia.com/dynamo-kube-discovery-mode": "pod"}, False, id="pod-mode"),
    ],
)
def test_failover_needs_per_container_discovery(annotations: dict[str, str], ok: bool) -> None:
    """Upstream's webhook rule (CEL cannot read annotations): a condition names the annotation."""
    g = dgd({"W": worker(gpuMemoryService=GMS, failover=FAILOVER)})
    g["metadata"]["annotations"] = annotations
    if ok:
        desired_graph_objects(g, DRA)
        return
    with pytest.raises(GenerationError) as err:
        desired_graph_objects(g, DRA)
    assert err.value.field == "metadata.annotations[nvidia.com/dynamo-kube-discovery-mode]"
    assert "spec.services.W.failover" in err.value.message


# --- frontendSidecar -----------------------------------------------------------------------------------


def sidecar_of(objects: list[Obj]) -> Obj:
    return by_name(pod(objects)["containers"])["sidecar-frontend"]


def test_sidecar_defaults_are_a_frontends() -> None:
    """No args given: the frontend's command and args, its http port 8000 and its probes."""
    side = sidecar_of(objs(worker(frontendSidecar={"image": "fe:1"})))
    assert (side["image"], side["command"], side["args"]) == ("fe:1", ["python3"], ["-m", "dynamo.frontend"])
    assert side["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
    assert side["livenessProbe"]["httpGet"]["port"] == "http"
    assert "resources" not in side


def test_sidecar_args_replace_the_default_whole() -> None:
    args = ["-m", "dynamo.frontend", "--router-mode", "direct"]
    assert sidecar_of(objs(worker(frontendSidecar={"image": "fe:1", "args": args})))["args"] == args


def test_sidecar_env_is_a_frontends_of_the_graph_with_the_users_on_top() -> None:
    """Frontend env of the parent graph (no worker suffix), user envs win, envFromSecret added."""
    sidecar = {
        "image": "fe:1",
        "envFromSecret": "hf",
        "envs": [{"name": "DYN_HTTP_PORT", "value": "9000"}, {"name": "X", "value": "1"}],
    }
    side = sidecar_of(objs(worker(frontendSidecar=sidecar)))
    env = env_of(side)
    assert env["DYN_COMPONENT"] == "frontend"
    assert env["DYN_NAMESPACE"] == env["DYN_NAMESPACE_PREFIX"] == f"{NS}-g"
    assert (env["DYN_HTTP_PORT"], env["X"], env["DYNAMO_PORT"]) == ("9000", "1", "8000")
    assert "DYN_NAMESPACE_WORKER_SUFFIX" not in env
    assert side["envFrom"] == [{"secretRef": {"name": "hf"}}]


def test_sidecar_registers_under_its_own_container_name_in_container_discovery_mode() -> None:
    side = sidecar_of(objs(worker(frontendSidecar={"image": "fe:1"}), annotations=CONTAINER_MODE))
    assert env_of(side)["CONTAINER_NAME"] == "sidecar-frontend"


def test_sidecar_image_gets_its_registrys_pull_secret() -> None:
    ctx = GenContext(namespace=NS, docker_secrets={"registry.example": ["regcred"]})
    objects = objs(worker(frontendSidecar={"image": "registry.example/fe:1"}), ctx)
    assert {"name": "regcred"} in pod(objects)["imagePullSecrets"]


# --- checked at reconcile time (CEL would exceed its cost budget) --------------------------------------


@pytest.mark.parametrize(
    "resources",
    [
        pytest.param({"limits": {"gpu": "0"}}, id="zero"),
        pytest.param({"limits": {"gpu": "two"}}, id="not-a-number"),
        pytest.param({"requests": {"gpu": "1.5"}}, id="not-whole"),
    ],
)
def test_gms_gpu_count_must_be_a_whole_number(resources: Obj) -> None:
    """The graph reports InvalidSpec naming the service's resources; the DCD alone says the same."""
    g = dgd({"W": worker(resources=resources, gpuMemoryService=GMS)})
    with pytest.raises(GenerationError) as err:
        desired_graph_objects(g, DRA)
    assert err.value.field == "spec.services.W.resources"


def test_a_user_container_may_not_take_the_sidecars_name() -> None:
    spec = worker(
        frontendSidecar={"image": "fe:1"},
        extraPodSpec={"containers": [{"name": "sidecar-frontend", "image": "x"}]},
    )
    with pytest.raises(GenerationError) as err:
        desired_graph_objects(dgd({"W": spec}), DRA)
    assert err.value.field == "spec.services.W.extraPodSpec.containers[name=sidecar-frontend]"
