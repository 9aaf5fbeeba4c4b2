"""`failover`: the engine (`containers[0]`, already rewritten for the GPU Memory Service) cloned into
an active and a standby container, `engine-0` and `engine-1`, that share the GPUs; the standby takes
the lock file when the active one dies. Other containers (the frontend sidecar, the user's) follow.

Engines share the pod's network namespace, so everything that listens is staggered per engine: the
system port (9090 + i, port name `system-<i>`, which the HTTP probes are retargeted to) and, for vLLM,
the NIXL side channel, the KV event port and torch.distributed's master port.
"""

from __future__ import annotations

import re

from dynamo_operator.api.v1alpha1.enums import BackendFramework
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import ServiceSpec
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.component.gpu_memory_service import SHARED_MOUNT_PATH, gms_enabled
from dynamo_operator.internal.dynamo.pod.defaults import (
    ENV_DYN_FORWARDPASS_METRIC_PORT,
    FORWARDPASS_METRIC_BASE_PORT,
)
from dynamo_operator.internal.dynamo.pod.merge import env
from dynamo_operator.internal.jsontree import copy_tree

ENGINES = 2
LOCK_PATH = f"{SHARED_MOUNT_PATH}/failover.lock"
# Env of the cloned main container that each engine gets its own value for (or none at all).
_REPLACED_ENV = frozenset(
    {
        c.ENV_DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS,
        c.ENV_DYN_SYSTEM_PORT,
        c.ENV_DYN_SYSTEM_ENABLED,
        c.ENV_DYN_HEALTH_CHECK_ENABLED,
        c.ENV_CONTAINER_NAME,
        ENV_DYN_FORWARDPASS_METRIC_PORT,
    }
)
_PROBES = ("startupProbe", "livenessProbe", "readinessProbe")

# vLLM: per-engine ports, as offsets from the first engine's.
_NIXL_SIDE_CHANNEL_PORT = 5600
_KV_EVENT_PORT = 20080
_MASTER_PORT = 29500
_MASTER_PORT_STRIDE = 100
_MASTER_PORT_FLAG = "--master-port"


def failover_enabled(spec: ServiceSpec) -> bool:
    """Whether the component runs an active and a standby engine."""
    return bool(spec.get("failover", {}).get("enabled"))


def check_failover(spec: ServiceSpec, field: str) -> None:
    """Failover's standby engine takes over the active one's GPU memory through the GPU memory
    service: without it there is nothing to take over (v1alpha1's CRD states this; v1beta1's,
    upstream's, leaves it to upstream's webhook)."""
    if failover_enabled(spec) and not gms_enabled(spec):
        raise GenerationError(f"{field}failover", "failover needs gpuMemoryService on the same component")


def engine_container(main: Obj, index: int) -> Obj:
    """Engine `index`: a copy of the main container with its own name, system port, probes and env."""
    engine = copy_tree(main)
    name = f"engine-{index}"
    port_name = f"{c.SYSTEM_PORT_NAME}-{index}"
    port = c.SYSTEM_PORT + index
    engine["name"] = name
    engine["ports"] = [{"name": port_name, "containerPort": port, "protocol": "TCP"}]
    kept = [e for e in engine.get("env") or [] if e.get("name") not in _REPLACED_ENV]
    engine["env"] = [
        *kept,
        env("ENGINE_ID", str(index)),
        env(c.ENV_CONTAINER_NAME, name),
        env("FAILOVER_LOCK_PATH", LOCK_PATH),
        env("DYN_SYSTEM_STARTING_HEALTH_STATUS", "notready"),
        env(c.ENV_DYN_SYSTEM_PORT, str(port)),
        env(c.ENV_DYN_SYSTEM_ENABLED, "true"),
        # Engines share the pod's network: each binds its own forward-pass metrics port.
        env(ENV_DYN_FORWARDPASS_METRIC_PORT, str(FORWARDPASS_METRIC_BASE_PORT + index)),
    ]
    for probe in _PROBES:
        http = (engine.get(probe) or {}).get("httpGet")
        if http is not None:
            http["port"] = port_name
    return engine


def _shift_flag(args: list[str], flag: str, offset: int) -> bool:
    """Add `offset` to the number after `flag` (its own argument, or inside a shell line); False when
    no such number was found."""
    for i, arg in enumerate(args[:-1]):
        if arg == flag and args[i + 1].isdigit():
            args[i + 1] = str(int(args[i + 1]) + offset)
            return True
    pattern = re.compile(rf"{re.escape(flag)} (\d+)")
    for i, arg in enumerate(args):
        found = pattern.search(arg)
        if found:
            args[i] = arg[: found.start(1)] + str(int(found.group(1)) + offset) + arg[found.end(1) :]
            return True
    return False


def _mentions_flag(container: Obj, flag: str) -> bool:
    args = container.get("args") or []
    command = container.get("command") or []
    return any(a == flag or f"{flag} " in a for a in args) or any(f"{flag} " in x for x in command)


def _vllm_engine(engine: Obj, index: int, node_count: int) -> None:
    engine["env"] = [
        *engine["env"],
        env("DYN_VLLM_GMS_SHADOW_MODE", "true"),
        env("VLLM_NIXL_SIDE_CHANNEL_PORT", str(_NIXL_SIDE_CHANNEL_PORT + index)),
        env("DYN_VLLM_KV_EVENT_PORT", str(_KV_EVENT_PORT + index)),
    ]
    if index > 0:
        # Each engine's tensor-parallel group needs its own torch.distributed store.
        offset = index * _MASTER_PORT_STRIDE
        if _mentions_flag(engine, _MASTER_PORT_FLAG):
            args = list(engine.get("args") or [])
            command = list(engine.get("command") or [])
            if _shift_flag(args, _MASTER_PORT_FLAG, offset):
                engine["args"] = args
            elif _shift_flag(command, _MASTER_PORT_FLAG, offset):
                engine["command"] = command
        else:
            engine["args"] = [*(engine.get("args") or []), _MASTER_PORT_FLAG, str(_MASTER_PORT + offset)]
    if node_count > 1:
        engine["env"] = [*engine["env"], env("NNODES", str(node_count))]


def apply_failover(pod: Obj, *, backend: str, node_count: int) -> None:
    """Replace `containers[0]` of a pod spec (in place) with the two engines; vLLM only."""
    if backend != BackendFramework.VLLM:
        raise GenerationError(
            "failover.enabled",
            f"failover is supported only for the vLLM backend (detected: {backend or 'none'})",
        )
    main, *others = pod["containers"]
    engines = [engine_container(main, i) for i in range(ENGINES)]
    for i, engine in enumerate(engines):
        _vllm_engine(engine, i, node_count)
    pod["containers"] = [*engines, *others]
