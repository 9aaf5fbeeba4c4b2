"""Every default of the spec's "Operator Default Values Injection" chapter, per component type x
backend x single/multinode. One row per (default, type, backend, mode)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from unit.dynamo.dynamo_testlib import dgd, env_map, main_container, pod_template, service

Obj = dict[str, Any]
BACKENDS = ("vllm", "sglang", "trtllm")
TYPES = ("frontend", "worker", "prefill", "decode", "planner")
WORKERS = ("worker", "prefill", "decode")


def _template(ctype: str, backend: str, mode: str, role: str = "main") -> Obj:
    extra: dict[str, Any] = {}
    if mode == "multinode":
        extra = {"multinode": {"nodeCount": 2}, "resources": {"limits": {"gpu": "8"}}}
    graph = dgd({"Svc": service(ctype, backend, **extra)}, backend=backend)
    return pod_template(graph, "Svc", role=role if mode == "multinode" else "main")


def _cases(*, with_workers: bool = False) -> list[Any]:
    """(type, backend, mode, role) combinations a pod template exists for; multinode worker pods
    only when asked (their probes and command are rewritten per backend)."""
    out = []
    for ctype, backend in itertools.product(TYPES, BACKENDS):
        out.append((ctype, backend, "single", "main"))
        if ctype in WORKERS:
            out.append((ctype, backend, "multinode", "leader"))
            if with_workers:
                out.append((ctype, backend, "multinode", "worker"))
    return out


# --- defaults every component gets ----------------------------------------------------------------


def _grace(t: Obj) -> bool:
    return t["spec"]["terminationGracePeriodSeconds"] == 60


def _restart(t: Obj) -> bool:
    return t["spec"]["restartPolicy"] == "Always"


def _fs_group(t: Obj) -> bool:
    return t["spec"]["securityContext"] == {"fsGroup": 1000}


def _shm_volume(t: Obj) -> bool:
    return {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in t["spec"][
        "volumes"
    ]


def _shm_mount(t: Obj) -> bool:
    return {"name": "shared-memory", "mountPath": "/dev/shm"} in main_container(t)["volumeMounts"]


def _dyn_namespace(t: Obj) -> bool:
    return env_map(main_container(t))["DYN_NAMESPACE"] == "ns1-g"


def _parent_name(t: Obj) -> bool:
    return env_map(main_container(t))["DYN_PARENT_DGD_K8S_NAME"] == "g"


def _parent_namespace(t: Obj) -> bool:
    return env_map(main_container(t))["DYN_PARENT_DGD_K8S_NAMESPACE"] == "ns1"


def _main_name(t: Obj) -> bool:
    return t["spec"]["containers"][0]["name"] == "main"


COMMON: dict[str, Callable[[Obj], bool]] = {
    "grace-60": _grace,
    "restart-always": _restart,
    "fsgroup-1000": _fs_group,
    "shm-8gi-volume": _shm_volume,
    "shm-mount": _shm_mount,
    "env-dyn-namespace": _dyn_namespace,
    "env-parent-name": _parent_name,
    "env-parent-namespace": _parent_namespace,
    "container-main-first": _main_name,
}


@pytest.mark.parametrize(
    ("ctype", "backend", "mode", "role", "check"),
    [
        pytest.param(*case, check, id=f"{case[0]}-{case[1]}-{case[2]}-{case[3]}-{name}")
        for case in _cases(with_workers=True)
        for name, check in COMMON.items()
    ],
)
def test_every_component_gets_common_default(
    ctype: str, backend: str, mode: str, role: str, check: Callable[[Obj], bool]
) -> None:
    """Pod-level defaults (grace period, restart policy, fsGroup, /dev/shm, base env) apply to all."""
    assert check(_template(ctype, backend, mode, role))


# --- per component type ------------------------------------------------------------------------------

# Upstream 2a6da14c's probes (they replace seed 001's older 60/60/30/10 table and exec readiness).
FRONTEND_LIVENESS = {
    "httpGet": {"path": "/live", "port": "http"},
    "initialDelaySeconds": 15,
    "periodSeconds": 10,
    "timeoutSeconds": 1,
    "failureThreshold": 3,
}
FRONTEND_READINESS = {
    "httpGet": {"path": "/health", "port": "http"},
    "initialDelaySeconds": 10,
    "periodSeconds": 10,
    "timeoutSeconds": 3,
    "failureThreshold": 3,
}
WORKER_LIVENESS = {
    "httpGet": {"path": "/live", "port": "system"},
    "periodSeconds": 5,
    "timeoutSeconds": 4,
    "failureThreshold": 1,
}
WORKER_READINESS = {
    "httpGet": {"path": "/health", "port": "system"},
    "periodSeconds": 10,
    "timeoutSeconds": 4,
    "failureThreshold": 3,
}
WORKER_STARTUP = {
    "httpGet": {"path": "/live", "port": "system"},
    "periodSeconds": 10,
    "timeoutSeconds": 5,
    "failureThreshold": 720,
}


def _frontend_checks() -> dict[str, Callable[[Obj], bool]]:
    return {
        "liveness": lambda t: main_container(t)["livenessProbe"] == FRONTEND_LIVENESS,
        "readiness": lambda t: main_container(t)["readinessProbe"] == FRONTEND_READINESS,
        "no-startup": lambda t: "startupProbe" not in main_container(t),
        "port-http-8000": lambda t: (
            main_container(t)["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]
        ),
        "env-dynamo-port": lambda t: env_map(main_container(t))["DYNAMO_PORT"] == "8000",
        "env-dyn-http-port": lambda t: env_map(main_container(t))["DYN_HTTP_PORT"] == "8000",
        "command": lambda t: (
            main_container(t)["command"] == ["python3"]
            and main_container(t)["args"] == ["-m", "dynamo.frontend"]
        ),
        "no-system-env": lambda t: "DYN_SYSTEM_PORT" not in env_map(main_container(t)),
    }


def _worker_checks() -> dict[str, Callable[[Obj], bool]]:
    return {
        "liveness": lambda t: main_container(t)["livenessProbe"] == WORKER_LIVENESS,
        "readiness": lambda t: main_container(t)["readinessProbe"] == WORKER_READINESS,
        "startup-2h": lambda t: main_container(t)["startupProbe"] == WORKER_STARTUP,
        "port-system-9090": lambda t: (
            {"name": "system", "containerPort": 9090, "protocol": "TCP"} in main_container(t)["ports"]
        ),
        "env-system-port": lambda t: env_map(main_container(t))["DYN_SYSTEM_PORT"] == "9090",
        "env-health-status": lambda t: (
            env_map(main_container(t))["DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS"] == '["generate"]'
        ),
        "env-system-enabled": lambda t: env_map(main_container(t))["DYN_SYSTEM_ENABLED"] == "true",
        "env-forwardpass-metric-port": lambda t: (
            env_map(main_container(t))["DYN_FORWARDPASS_METRIC_PORT"] == "20380"
        ),
        "no-dynamo-port": lambda t: "DYNAMO_PORT" not in env_map(main_container(t)),
        "no-service-account-override": lambda t: (
            t["spec"].get("serviceAccountName") != "planner-serviceaccount"
        ),
    }


def _planner_checks() -> dict[str, Callable[[Obj], bool]]:
    return {
        "service-account": lambda t: t["spec"]["serviceAccountName"] == "planner-serviceaccount",
        "port-metrics-9085": lambda t: (
            {"name": "metrics", "containerPort": 9085, "protocol": "TCP"} in main_container(t)["ports"]
        ),
        "env-prometheus-port": lambda t: env_map(main_container(t))["PLANNER_PROMETHEUS_PORT"] == "9085",
        "liveness-system": lambda t: (
            main_container(t)["livenessProbe"]["httpGet"] == {"path": "/live", "port": "system"}
        ),
        "readiness-system": lambda t: (
            main_container(t)["readinessProbe"]["httpGet"] == {"path": "/health", "port": "system"}
        ),
        "startup-720": lambda t: main_container(t)["startupProbe"]["failureThreshold"] == 720,
    }


PER_TYPE = {"frontend": _frontend_checks(), "planner": _planner_checks()} | {
    w: _worker_checks() for w in WORKERS
}


@pytest.mark.parametrize(
    ("ctype", "backend", "mode", "role", "check"),
    [
        pytest.param(*case, check, id=f"{case[0]}-{case[1]}-{case[2]}-{name}")
        for case in _cases()
        for name, check in PER_TYPE[case[0]].items()
    ],
)
def test_component_type_default(
    ctype: str, backend: str, mode: str, role: str, check: Callable[[Obj], bool]
) -> None:
    """Probes, ports, env and service account per component type (multinode leaders keep them)."""
    assert check(_template(ctype, backend, mode, role))


# --- multinode worker pods --------------------------------------------------------------------------


def _worker_template(ctype: str, backend: str, **extra: Any) -> Obj:
    spec = service(ctype, backend, multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}}, **extra)
    return pod_template(dgd({"Svc": spec}, backend=backend), "Svc", role="worker")


@pytest.mark.parametrize("ctype", WORKERS)
@pytest.mark.parametrize(
    ("backend", "probe", "present"),
    [
        pytest.param("vllm", "livenessProbe", False, id="vllm-liveness-removed"),
        pytest.param("vllm", "readinessProbe", False, id="vllm-readiness-removed"),
        pytest.param("vllm", "startupProbe", False, id="vllm-startup-removed"),
        pytest.param("sglang", "livenessProbe", False, id="sglang-liveness-removed"),
        pytest.param("sglang", "readinessProbe", False, id="sglang-readiness-removed"),
        pytest.param("sglang", "startupProbe", False, id="sglang-startup-removed"),
        pytest.param("trtllm", "livenessProbe", False, id="trtllm-liveness-removed"),
        pytest.param("trtllm", "startupProbe", False, id="trtllm-startup-removed"),
        pytest.param("trtllm", "readinessProbe", True, id="trtllm-readiness-kept"),
    ],
)
def test_multinode_worker_probes(ctype: str, backend: str, probe: str, present: bool) -> None:
    """Worker pods of a multinode replica lose their probes as the spec says per backend."""
    assert (probe in main_container(_worker_template(ctype, backend))) is present


@pytest.mark.parametrize("ctype", WORKERS)
def test_trtllm_worker_readiness_is_ssh_tcp_check(ctype: str) -> None:
    """TRT-LLM workers are ready when sshd listens on 2222 (20 s delay/period, 5 s timeout, 10 failures)."""
    assert main_container(_worker_template(ctype, "trtllm"))["readinessProbe"] == {
        "tcpSocket": {"port": 2222},
        "initialDelaySeconds": 20,
        "periodSeconds": 20,
        "timeoutSeconds": 5,
        "failureThreshold": 10,
    }


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_trtllm_multinode_sets_openmpi_fqdn_env(role: str) -> None:
    """Both TRT-LLM roles get OMPI_MCA_orte_keep_fqdn_hostnames=1."""
    spec = service("worker", "trtllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}})
    t = pod_template(dgd({"W": spec}, backend="trtllm"), "W", role=role)
    assert env_map(main_container(t))["OMPI_MCA_orte_keep_fqdn_hostnames"] == "1"


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_trtllm_multinode_mounts_ssh_key(role: str) -> None:
    """Both TRT-LLM roles mount the MPI SSH key secret at /ssh-pk."""
    spec = service("worker", "trtllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}})
    t = pod_template(dgd({"W": spec}, backend="trtllm"), "W", role=role)
    assert {"name": "mpi-ssh-key", "mountPath": "/ssh-pk", "readOnly": True} in main_container(t)[
        "volumeMounts"
    ]
    assert any(v.get("secret") for v in t["spec"]["volumes"] if v["name"] == "mpi-ssh-key")


def test_trtllm_leader_runs_mpirun_over_ssh_port_2222() -> None:
    """The TRT-LLM leader wraps the command in mpirun with ssh on port 2222."""
    spec = service("worker", "trtllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "4"}})
    [script] = main_container(pod_template(dgd({"W": spec}, backend="trtllm"), "W", role="leader"))["args"]
    assert (
        "mpirun" in script and "-p 2222" in script and "-n 8" in script and "trtllm-llmapi-launch" in script
    )


def test_trtllm_worker_runs_sshd_on_2222() -> None:
    """TRT-LLM workers run sshd on port 2222."""
    [script] = main_container(_worker_template("worker", "trtllm"))["args"]
    assert "Port 2222" in script and "/usr/sbin/sshd -D" in script


def test_vllm_tensor_parallel_leader_starts_ray_head_on_6379() -> None:
    """TP across nodes (world > GPUs per node) uses Ray: the leader starts the head on 6379."""
    spec = service(
        "worker", "vllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", "16"]}},
    )  # fmt: skip
    [script] = main_container(pod_template(dgd({"W": spec}), "W", role="leader"))["args"]
    assert script.startswith("ray start --head --port=6379 && ")
    assert script.endswith("--distributed-executor-backend ray")


def test_vllm_tensor_parallel_worker_joins_ray_head() -> None:
    """Ray workers join the leader's head on 6379 and block."""
    spec = service(
        "worker", "vllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", "16"]}},
    )  # fmt: skip
    assert main_container(pod_template(dgd({"W": spec}), "W", role="worker"))["args"] == [
        "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"
    ]


@pytest.mark.parametrize(("role", "rank"), [("leader", "0"), ("worker", "$(( 8 * $(LWS_WORKER_INDEX) ))")])
def test_vllm_data_parallel_uses_rpc_port_13445(role: str, rank: str) -> None:
    """Data parallel across nodes: hybrid LB flags with RPC port 13445 and per-node start rank."""
    spec = service(
        "worker", "vllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--data-parallel-size", "16"]}},
    )  # fmt: skip
    c = main_container(pod_template(dgd({"W": spec}), "W", role=role))
    line = " ".join([*c["command"], *c["args"]])
    assert "--data-parallel-rpc-port 13445" in line
    assert f"--data-parallel-start-rank {rank}" in line
    assert "--data-parallel-address $(LWS_LEADER_ADDRESS)" in line


def test_vllm_mp_executor_when_annotated() -> None:
    """The executor annotation selects multiprocessing: --nnodes/--node-rank, worker --headless."""
    spec = service(
        "worker", "vllm", multinode={"nodeCount": 2}, resources={"limits": {"gpu": "8"}},
        annotations={"nvidia.com/vllm-distributed-executor-backend": "mp"},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", "16"]}},
    )  # fmt: skip
    worker = main_container(pod_template(dgd({"W": spec}), "W", role="worker"))
    assert worker["args"][-3:] == ["--node-rank", "$(LWS_WORKER_INDEX)", "--headless"]
    assert "--master-port" in worker["args"] and "29500" in worker["args"]


@pytest.mark.parametrize(("role", "rank"), [("leader", "0"), ("worker", "$(LWS_WORKER_INDEX)")])
def test_sglang_multinode_dist_init_on_29500(role: str, rank: str) -> None:
    """SGLang gets --dist-init-addr <leader>:29500, --nnodes and its node rank."""
    spec = service("worker", "sglang", multinode={"nodeCount": 3}, resources={"limits": {"gpu": "8"}})
    args = main_container(pod_template(dgd({"W": spec}, backend="sglang"), "W", role=role))["args"]
    assert args[-6:] == [
        "--dist-init-addr",
        "$(LWS_LEADER_ADDRESS):29500",
        "--nnodes",
        "3",
        "--node-rank",
        rank,
    ]


# --- backend extras ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mount", "root"),
    [
        pytest.param(
            {"name": "cache", "mountPoint": "/cache/vllm", "useAsCompilationCache": True},
            "/cache/vllm",
            id="explicit",
        ),
        pytest.param(
            {"name": "cache", "useAsCompilationCache": True}, "/root/.cache/vllm", id="default-mount-point"
        ),
    ],
)
def test_vllm_compilation_cache_sets_cache_root(mount: Obj, root: str) -> None:
    """A compilation-cache mount sets VLLM_CACHE_ROOT to its mount point (also the default one)."""
    graph = dgd({"W": service("worker", "vllm", volumeMounts=[mount])}, pvcs=[{"name": "cache"}])
    c = main_container(pod_template(graph, "W"))
    assert env_map(c)["VLLM_CACHE_ROOT"] == root
    assert {"name": "cache", "mountPath": root} in c["volumeMounts"]


def test_image_pull_secret_annotation_key() -> None:
    """The opt-out annotation key is the one the spec documents."""
    from dynamo_operator.internal import consts

    assert (
        consts.ANNOTATION_DISABLE_IMAGE_PULL_SECRET_DISCOVERY
        == "nvidia.com/disable-image-pull-secret-discovery"
    )
