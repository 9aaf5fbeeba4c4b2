"""Backend-specific mutations of the main container: compilation cache and multinode rewrites.

Multinode pods run under a LeaderWorkerSet or a Grove PodCliqueScalingGroup; `Addressing` says how a
pod of either finds its leader and its own rank. Both orchestrators publish these as env vars, which
the kubelet expands inside `$(...)` in command/args.
"""

from __future__ import annotations

import enum
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamo_operator.api.v1alpha1.enums import BackendFramework
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.component.ray_head_wait import ray_head_wait_init_container
from dynamo_operator.internal.dynamo.pod.merge import env, field_env, merge_env

LWS_LEADER_HOST = "$(LWS_LEADER_ADDRESS)"
LWS_WORKER_RANK = "$(LWS_WORKER_INDEX)"
# Grove's pods learn their scaling group, its index and the headless Service from env vars; a
# worker's rank is its index in the worker clique plus one (the leader is rank 0), which needs a shell.
GROVE_RANK = "$((GROVE_PCLQ_POD_INDEX + 1))"
_KUBELET_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")

_PYTHON_EXE = re.compile(r"^(?:.*/)?python[0-9.]*$")
_FRAMEWORK_MODULE = re.compile(
    r"python[0-9.]*\s+(?:[^|&;]*\s)?-m\s+dynamo\.(" + "|".join(BackendFramework) + r")\b"
)
_PYTHON_CMD_IN_SHELL = re.compile(r"python[0-9.]*\s+[^|&;]*")


class Role(enum.Enum):
    """Which pod of a component a template is for."""

    MAIN = "main"  # single node
    LEADER = "leader"
    WORKER = "worker"


@dataclass(frozen=True, slots=True)
class Addressing:
    """How the pods of one multinode replica address each other, as their orchestrator names them.

    `leader_host` and `rank` are written into command lines (kubelet-expanded `$(VAR)`, or shell
    arithmetic when `rank_needs_shell`); `hosts` lists every pod (leader first) as shell words for
    scripts; `dns_wait`: pod names resolve only once the pods exist, so scripts must wait for them.
    """

    leader_host: str
    rank: str
    rank_needs_shell: bool
    hosts: tuple[str, ...]
    dns_wait: bool

    @property
    def leader_host_shell(self) -> str:
        """The leader host for a shell script: `$(VAR)` written as `${VAR}` (expanded by the shell)."""
        return _KUBELET_VAR.sub(r"${\1}", self.leader_host)


def _arithmetic(rank: str) -> str:
    """A rank expression as an operand inside `$(( ... ))`: shell arithmetic loses its `$` and keeps
    its parentheses (so `a * (i + 1)` keeps its precedence); a kubelet `$(VAR)` stays as it is."""
    if rank.startswith("$((") and rank.endswith("))"):
        return rank[2:-1]
    return rank


def lws_addressing(node_count: int) -> Addressing:
    """A LeaderWorkerSet group: the leader's address and the worker index come from LWS's env; worker
    i's name is the leader's with `-i` appended to its first label."""
    workers = [f'$(echo "$LWS_LEADER_ADDRESS" | sed "s/\\./-{i}\\./")' for i in range(1, node_count)]
    return Addressing(
        leader_host=LWS_LEADER_HOST,
        rank=LWS_WORKER_RANK,
        rank_needs_shell=False,
        hosts=("$LWS_LEADER_ADDRESS", *workers),
        dns_wait=True,
    )


def grove_addressing(service: str, node_count: int) -> Addressing:
    """A Grove scaling group replica of `service`: pods are `<pcsg>-<index>-<clique>-<n>` under the
    set's headless Service; the leader clique holds one pod, the worker clique the rest."""
    base = f"$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-{service.lower()}"
    leader = f"{base}-{c.GROVE_ROLE_SUFFIX_LEADER}-0.$(GROVE_HEADLESS_SERVICE)"
    workers = [
        f"{base}-{c.GROVE_ROLE_SUFFIX_WORKER}-{j}.$(GROVE_HEADLESS_SERVICE)" for j in range(node_count - 1)
    ]
    return Addressing(
        leader_host=leader, rank=GROVE_RANK, rank_needs_shell=True, hosts=(leader, *workers), dns_wait=False
    )


@dataclass(frozen=True, slots=True)
class MultinodeInfo:
    """How one multinode replica is laid out."""

    node_count: int
    gpus_per_node: int
    # ConfigMap holding the wait-for-leader script (see sideobjects.py).
    wait_leader_config_map: str = ""
    # None: a LeaderWorkerSet group of `node_count` pods.
    addressing: Addressing | None = None

    @property
    def address(self) -> Addressing:
        return self.addressing or lws_addressing(self.node_count)


@dataclass(slots=True)
class PodExtras:
    """Pod-level additions a backend rewrite needs next to the main container."""

    init_containers: list[dict[str, Any]] = field(default_factory=list)
    volumes: list[dict[str, Any]] = field(default_factory=list)


WAIT_LEADER_VOLUME = "wait-leader-script"


def _wait_for_leader(container: Mapping[str, Any], info: MultinodeInfo) -> PodExtras:
    """Init container holding a vLLM mp worker back until the leader's master port answers."""
    init = {
        "name": "wait-for-leader-mp",
        "image": container.get("image", ""),
        "command": ["/bin/sh", "-c"],
        "args": [
            f'export LEADER_HOST="{info.address.leader_host_shell}" LEADER_PORT={c.VLLM_MP_MASTER_PORT}; '
            "exec python3 /scripts/wait-for-leader.py"
        ],
        "volumeMounts": [{"name": WAIT_LEADER_VOLUME, "mountPath": "/scripts", "readOnly": True}],
    }
    volume = {"name": WAIT_LEADER_VOLUME, "configMap": {"name": info.wait_leader_config_map}}
    return PodExtras(init_containers=[init], volumes=[volume])


def detect_backend(component_type: str, explicit: str | None, container: Mapping[str, Any]) -> str:
    """The backend a component runs: detected from its command line, else the explicit one, else ""."""
    if component_type not in c.WORKER_COMPONENT_TYPES:
        return ""
    line = " ".join([*container.get("command", []), *container.get("args", [])])
    found = sorted(set(_FRAMEWORK_MODULE.findall(line)))
    if len(found) > 1:
        raise GenerationError("extraPodSpec.mainContainer", f"command runs several backends: {found}")
    if found and explicit and found[0] != explicit:
        raise GenerationError(
            "backendFramework", f"{explicit!r} contradicts the command line, which runs dynamo.{found[0]}"
        )
    return found[0] if found else (explicit or "")


def compilation_cache_env(backend: str, mount_point: str | None) -> list[dict[str, Any]]:
    """Env pointing the backend at its compilation cache (set whether the mount point was defaulted
    or given — upstream only set it for explicit mount points)."""
    if backend == BackendFramework.VLLM and mount_point:
        return [env(c.ENV_VLLM_CACHE_ROOT, mount_point)]
    return []


def default_cache_mount_point(backend: str) -> str | None:
    """Where a compilation-cache volume goes when the user names none; None when the backend has none."""
    return c.DEFAULT_VLLM_CACHE_MOUNT_POINT if backend == BackendFramework.VLLM else None


def quote(token: str) -> str:
    """Shell-quote one token only when it needs it, so generated scripts stay readable."""
    return shlex.quote(token) if token else "''"


def _inject_flags(container: dict[str, Any], flags: list[str], *, needs_shell: bool) -> None:
    command: list[str] = list(container.get("command") or [])
    args: list[str] = list(container.get("args") or [])
    if command and _PYTHON_EXE.match(command[0]):
        if not needs_shell:
            container["args"] = [*args, *flags]
            return
        line = " ".join(quote(t) for t in [*command, *args])
        container["command"] = ["/bin/sh", "-c"]
        container["args"] = [f"exec {line} {' '.join(flags)}"]
        return
    for i, arg in enumerate(args):
        match = _PYTHON_CMD_IN_SHELL.search(arg)
        if match:
            end = match.end()
            while end > match.start() and arg[end - 1].isspace():
                end -= 1
            args[i] = f"{arg[:end]} {' '.join(flags)}{arg[end:]}"
            container["args"] = args
            return
    raise GenerationError(
        "extraPodSpec.mainContainer.command", "multinode needs a python command line to inject flags into"
    )


def _strip_probes(container: dict[str, Any], *names: str) -> None:
    for name in names:
        container.pop(name, None)


def _arg_value(args: list[str], flag: str, default: int) -> int:
    tokens = [t for a in args for t in a.split()]
    for i, token in enumerate(tokens):
        if token == flag and i + 1 < len(tokens):
            try:
                return int(tokens[i + 1])
            except ValueError:
                return default
        if token.startswith(flag + "="):
            try:
                return int(token.split("=", 1)[1])
            except ValueError:
                return default
    return default


def _semver_at_least_1(version: str | None) -> bool:
    if not version:
        return False
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?", version.strip())
    return bool(m) and int(m.group(1)) >= 1  # type: ignore[union-attr]


def vllm_executor(annotations: Mapping[str, str]) -> str:
    """`mp` or `ray`: the annotation wins; else mp for graphs first created by operator ≥ 1.0.0."""
    explicit = annotations.get(c.ANNOTATION_VLLM_EXECUTOR_BACKEND, "").lower()
    if explicit in ("mp", "ray"):
        return explicit
    return "mp" if _semver_at_least_1(annotations.get(c.ANNOTATION_ORIGIN_VERSION)) else "ray"


def _vllm_multinode(
    container: dict[str, Any], role: Role, info: MultinodeInfo, annotations: Mapping[str, str]
) -> PodExtras:
    args = [*container.get("command", []), *container.get("args", [])]
    world = _arg_value(args, "--tensor-parallel-size", 1) * _arg_value(args, "--pipeline-parallel-size", 1)
    dp = _arg_value(args, "--data-parallel-size", 1)
    gpus = info.gpus_per_node
    leader = role is Role.LEADER
    addr = info.address
    extras = PodExtras()
    if world > gpus:
        if vllm_executor(annotations) == "mp":
            rank = "0" if leader else addr.rank
            flags = [
                "--distributed-executor-backend", "mp",
                "--nnodes", str(info.node_count),
                "--master-addr", addr.leader_host,
                "--master-port", str(c.VLLM_MP_MASTER_PORT),
                "--node-rank", rank,
            ]  # fmt: skip
            if not leader:
                flags.append("--headless")
            _inject_flags(container, flags, needs_shell=not leader and addr.rank_needs_shell)
            container["env"] = merge_env(
                container.get("env", []), [field_env(c.ENV_VLLM_NIXL_SIDE_CHANNEL_HOST, "status.podIP")]
            )
            if not leader and info.wait_leader_config_map:
                extras = _wait_for_leader(container, info)
        elif leader:
            line = " ".join(quote(t) for t in [*container.get("command", []), *container.get("args", [])])
            container["command"] = ["/bin/sh", "-c"]
            container["args"] = [
                f"ray start --head --port={c.VLLM_RAY_PORT} && {line} --distributed-executor-backend ray"
            ]
        else:
            # The init container is built from the container as the user gave it (its image).
            extras = PodExtras(
                init_containers=[ray_head_wait_init_container(container, addr.leader_host_shell)]
            )
            container["command"] = ["/bin/sh", "-c"]
            container["args"] = [f"ray start --address={addr.leader_host}:{c.VLLM_RAY_PORT} --block"]
    elif world * dp > gpus:
        local = max(gpus // world, 1)
        total = dp if dp > 1 else local * info.node_count
        flags = ["--data-parallel-hybrid-lb"]
        if _arg_value(args, "--data-parallel-size", 0) == 0:
            flags += ["--data-parallel-size", str(total)]
        start = "0" if leader else f"$(( {local} * {_arithmetic(addr.rank)} ))"
        flags += [
            "--data-parallel-size-local", str(local),
            "--data-parallel-start-rank", start,
            "--data-parallel-address", addr.leader_host,
            "--data-parallel-rpc-port", str(c.VLLM_DP_RPC_PORT),
        ]  # fmt: skip
        _inject_flags(container, flags, needs_shell=not leader)
    if not leader:
        _strip_probes(container, "livenessProbe", "readinessProbe", "startupProbe")
    return extras


def _sglang_multinode(container: dict[str, Any], role: Role, info: MultinodeInfo) -> None:
    addr = info.address
    worker = role is Role.WORKER
    rank = addr.rank if worker else "0"
    flags = [
        "--dist-init-addr", f"{addr.leader_host}:{c.SGLANG_DIST_INIT_PORT}",
        "--nnodes", str(info.node_count),
        "--node-rank", rank,
    ]  # fmt: skip
    _inject_flags(container, flags, needs_shell=worker and addr.rank_needs_shell)
    if role is Role.WORKER:
        _strip_probes(container, "livenessProbe", "readinessProbe", "startupProbe")


TRTLLM_FORWARDED_ENV = (
    "CPATH", "TRITON_PTXAS_PATH",  # 2a6da14c: Triton's compiler needs both on every rank
    "CUDA_VISIBLE_DEVICES", "MODEL_PATH", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_ENDPOINT",
    "TOKENIZERS_PARALLELISM", "NCCL_DEBUG", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE",
    "TENSORRT_LLM_CACHE_DIR", "HF_HOME", "TRANSFORMERS_CACHE", "HF_DATASETS_CACHE", "PATH",
    "LD_LIBRARY_PATH", "PYTHONPATH", "HOME", "USER", "TRTLLM_USE_UCX_KVCACHE",
)  # fmt: skip

_SSH_SETUP = (
    'mkdir -p "$HOME/.ssh" && cp /ssh-pk/private.key "$HOME/.ssh/id_rsa" && '
    'cp /ssh-pk/private.key.pub "$HOME/.ssh/id_rsa.pub" && '
    'cp /ssh-pk/private.key.pub "$HOME/.ssh/authorized_keys" && '
    'chmod 600 "$HOME/.ssh/id_rsa" "$HOME/.ssh/authorized_keys" && '
    f'printf "Host *\\n  Port {c.MPI_SSH_PORT}\\n  StrictHostKeyChecking no\\n" > "$HOME/.ssh/config"'
)


def _trtllm_multinode(container: dict[str, Any], role: Role, info: MultinodeInfo) -> None:
    container["env"] = merge_env(container.get("env", []), [env(c.ENV_OMPI_KEEP_FQDN_HOSTNAMES, "1")])
    mounts = [m for m in container.get("volumeMounts", []) if m.get("mountPath") != c.SSH_KEY_MOUNT_PATH]
    mounts.append({"name": "mpi-ssh-key", "mountPath": c.SSH_KEY_MOUNT_PATH, "readOnly": True})
    container["volumeMounts"] = mounts
    if role is Role.WORKER:
        _strip_probes(container, "livenessProbe", "startupProbe")
        container["readinessProbe"] = {
            "tcpSocket": {"port": c.MPI_SSH_PORT},
            "initialDelaySeconds": 20,
            "periodSeconds": 20,
            "timeoutSeconds": 5,
            "failureThreshold": 10,
        }
        container["command"] = ["/bin/sh", "-c"]
        container["args"] = [
            f"{_SSH_SETUP} && mkdir -p $HOME/.ssh/host_keys && "
            "{ [ -f $HOME/.ssh/host_keys/ssh_host_rsa_key ] || "
            "ssh-keygen -q -t rsa -N '' -f $HOME/.ssh/host_keys/ssh_host_rsa_key; } && "
            f'printf "Port {c.MPI_SSH_PORT}\\nHostKey $HOME/.ssh/host_keys/ssh_host_rsa_key\\n'
            "StrictModes no\\nPermitRootLogin yes\\nPasswordAuthentication no\\n"
            'PubkeyAuthentication yes\\nAuthorizedKeysFile $HOME/.ssh/authorized_keys\\n" '
            "> $HOME/.ssh/sshd_config && exec /usr/sbin/sshd -D -f $HOME/.ssh/sshd_config"
        ]
        return
    if role is not Role.LEADER:
        return
    original = " ".join(quote(t) for t in [*container.get("command", []), *container.get("args", [])])
    env_names = sorted({str(e["name"]) for e in container.get("env", [])} | set(TRTLLM_FORWARDED_ENV))
    hosts = list(info.address.hosts)
    wait = " ".join(
        f'n=0; until getent hosts "{h}" >/dev/null; do n=$((n+2)); [ $n -gt 300 ] && exit 1; sleep 2; done;'
        for h in hosts[1:]
        if info.address.dns_wait
    )
    slots = info.node_count * max(info.gpus_per_node, 1)
    run_as_root = '$( [ "$(id -u)" = 0 ] && echo --allow-run-as-root )'
    mpirun = (
        f"mpirun {run_as_root} --oversubscribe -n {slots} -H {','.join(hosts)} --mca pml ob1 "
        f'--mca plm_rsh_args "-p {c.MPI_SSH_PORT} -o StrictHostKeyChecking=no -i $HOME/.ssh/id_rsa" '
        + " ".join(f"-x {name}" for name in env_names)
        + f" bash -c {shlex.quote('trtllm-llmapi-launch ' + original)}"
    )
    container["command"] = ["/bin/sh", "-c"]
    # set -e: a failed key copy must stop the pod instead of launching mpirun without keys.
    container["args"] = [f"set -e; {_SSH_SETUP}; {wait} exec {mpirun}"]


def apply_multinode(
    container: dict[str, Any],
    *,
    backend: str,
    role: Role,
    info: MultinodeInfo,
    annotations: Mapping[str, str],
) -> PodExtras:
    """Rewrite the main container (in place) for one role of a multinode replica; return what the
    pod needs besides (init containers, volumes)."""
    if role is Role.MAIN:
        return PodExtras()
    if backend == BackendFramework.VLLM:
        return _vllm_multinode(container, role, info, annotations)
    if backend == BackendFramework.SGLANG:
        _sglang_multinode(container, role, info)
    elif backend == BackendFramework.TRTLLM:
        _trtllm_multinode(container, role, info)
    return PodExtras()


def multinode_pod_volumes(backend: str, ssh_secret_name: str) -> list[dict[str, Any]]:
    """Pod volumes a multinode backend needs (TRT-LLM: the MPI SSH key secret)."""
    if backend != BackendFramework.TRTLLM:
        return []
    return [{"name": "mpi-ssh-key", "secret": {"secretName": ssh_secret_name, "defaultMode": 0o644}}]
