"""vLLM Ray workers wait for their Ray head (upstream issue 14108): the generated worker pods of both
pathways (LeaderWorkerSet, Grove) and the wait program's behaviour against a loopback port."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.component.ray_head_wait import WAIT_PROGRAM
from dynamo_operator.internal.dynamo.graph.sideobjects import WAIT_LEADER_KEY, desired_wait_leader_config_map
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set
from unit.dynamo.dynamo_testlib import IMAGE, dgd, main_container, pod_template, service

Obj = dict[str, Any]
GROVE_CTX = GenContext(namespace="ns1", capabilities=Capabilities(grove=True))
LWS_RAY_JOIN = "ray start --address=$(LWS_LEADER_ADDRESS):6379 --block"


def _graph(executor: str = "ray", *, tp: int = 16) -> Obj:
    """A two-node vLLM worker with 8 GPUs a node; TP 16 spans both nodes."""
    spec = service(
        "worker",
        multinode={"nodeCount": 2},
        resources={"limits": {"gpu": "8"}},
        annotations={"nvidia.com/vllm-distributed-executor-backend": executor},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", str(tp)]}},
    )
    return dgd({"W": spec})


def _init_names(template: Obj) -> list[str]:
    return [x["name"] for x in template["spec"].get("initContainers", [])]


def _grove_pod_spec(suffix: str, graph: Obj | None = None) -> Obj:
    pcs = desired_pod_clique_set(graph or _graph(), GROVE_CTX)
    [clique] = [q for q in pcs["spec"]["template"]["cliques"] if q["name"].endswith(f"-{suffix}")]
    return clique["spec"]["podSpec"]  # type: ignore[no-any-return]


# --- LeaderWorkerSet ---------------------------------------------------------------------------------


def test_lws_ray_worker_waits_for_the_heads_port_before_joining() -> None:
    """The worker pod's one init container waits for the head at LWS's leader address, port 6379."""
    template = pod_template(_graph(), "W", role="worker")
    [init] = template["spec"]["initContainers"]
    assert init["name"] == "wait-for-leader-ray"
    assert init["image"] == IMAGE
    assert init["command"] == ["/bin/sh", "-c"]
    assert init["args"][0].startswith('export LEADER_HOST="${LWS_LEADER_ADDRESS}" LEADER_PORT=6379 ')
    assert "exec python3 -c " in init["args"][0]


def test_lws_ray_worker_still_joins_the_head_and_blocks() -> None:
    """The wait changes nothing in the worker's main container: it joins the head and blocks."""
    assert main_container(pod_template(_graph(), "W", role="worker"))["args"] == [LWS_RAY_JOIN]


def test_lws_ray_head_is_not_delayed() -> None:
    """The leader (the Ray head) has no init container: it starts at once."""
    template = pod_template(_graph(), "W", role="leader")
    assert "initContainers" not in template["spec"]
    assert main_container(template)["args"][0].startswith("ray start --head --port=6379 && ")


def test_lws_mp_worker_keeps_only_the_mp_wait() -> None:
    """Multiprocessing workers wait for the master port as before, without the Ray wait."""
    assert _init_names(pod_template(_graph("mp"), "W", role="worker")) == ["wait-for-leader-mp"]


def test_worker_within_one_node_runs_no_ray_and_no_wait() -> None:
    """A TP that fits one node needs no Ray cluster, hence no wait."""
    assert _init_names(pod_template(_graph(tp=8), "W", role="worker")) == []


def test_user_init_containers_run_after_the_wait() -> None:
    """The user's own init containers are kept, after the wait (nothing of theirs runs before the head)."""
    spec = _graph()["spec"]["services"]["W"]
    spec["extraPodSpec"]["initContainers"] = [{"name": "fetch-model", "image": "busybox"}]
    graph = dgd({"W": spec})
    assert _init_names(pod_template(graph, "W", role="worker")) == ["wait-for-leader-ray", "fetch-model"]


# --- Grove ------------------------------------------------------------------------------------------


def test_grove_ray_worker_waits_for_the_leader_clique_pod() -> None:
    """Under Grove the worker clique waits for the leader clique's pod of its own scaling-group replica."""
    [init] = _grove_pod_spec("wkr")["initContainers"]
    assert init["name"] == "wait-for-leader-ray"
    head = "${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-w-ldr-0.${GROVE_HEADLESS_SERVICE}"
    assert init["args"][0].startswith(f'export LEADER_HOST="{head}" LEADER_PORT=6379 ')


def test_grove_ray_head_is_not_delayed() -> None:
    """The leader clique's pod has no init container."""
    assert "initContainers" not in _grove_pod_spec("ldr")


# --- the wait program, run against a loopback port ------------------------------------------------


@pytest.fixture
def reserved_port() -> Iterator[socket.socket]:
    """A loopback port bound but not listening: connections to it are refused until `listen()`."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock
    finally:
        sock.close()


def _start(port: int, *, wait_seconds: float | None, name: str = "ray head") -> subprocess.Popen[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "WAIT_SECONDS"},
        "LEADER_HOST": "127.0.0.1",
        "LEADER_PORT": str(port),
        "LEADER_NAME": name,
        "POLL_SECONDS": "0.05",
        "LOG_EVERY_SECONDS": "30",
        **({"WAIT_SECONDS": str(wait_seconds)} if wait_seconds is not None else {}),
    }
    return subprocess.Popen(
        [sys.executable, "-c", WAIT_PROGRAM],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_wait_ends_at_once_when_the_head_answers(reserved_port: socket.socket) -> None:
    """A head already listening: exit 0, one line saying the head answers."""
    reserved_port.listen()
    proc = _start(reserved_port.getsockname()[1], wait_seconds=60)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    [line] = out.splitlines()
    assert line.startswith(f"ray head 127.0.0.1:{reserved_port.getsockname()[1]} answers after ")
    assert line.endswith(": starting the worker")


def test_wait_holds_until_a_late_head_answers(reserved_port: socket.socket) -> None:
    """A head that starts late: the wait logs that it waits, then ends with 0 once the head listens."""
    proc = _start(reserved_port.getsockname()[1], wait_seconds=60)
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()  # printed after the first refused attempt
        assert first.startswith(f"waiting for ray head 127.0.0.1:{reserved_port.getsockname()[1]} (")
        reserved_port.listen()
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()  # a no-op once it has ended; a failed assertion leaves no waiting process behind
    assert proc.returncode == 0
    assert rest.splitlines()[-1].endswith(": starting the worker")


def test_wait_gives_up_with_a_clear_line_after_its_bound(reserved_port: socket.socket) -> None:
    """A head that never answers: exit 1 once the bound is spent, saying so on stderr."""
    proc = _start(reserved_port.getsockname()[1], wait_seconds=0)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    [line] = err.splitlines()
    assert line.startswith(f"ray head 127.0.0.1:{reserved_port.getsockname()[1]} did not answer within 0s")
    assert line.endswith(": giving up")


def test_the_generated_shell_line_runs_the_wait(reserved_port: socket.socket) -> None:
    """The LWS worker's init container line, as generated, under /bin/sh with LWS's env: its quoting
    holds and it ends at once against a listening head (only the port is moved off 6379)."""
    reserved_port.listen()
    port = reserved_port.getsockname()[1]
    [init] = pod_template(_graph(), "W", role="worker")["spec"]["initContainers"]
    line = init["args"][0].replace("LEADER_PORT=6379", f"LEADER_PORT={port}")
    path = f"{os.path.dirname(sys.executable)}{os.pathsep}{os.environ.get('PATH', '')}"
    env = {**os.environ, "PATH": path, "LWS_LEADER_ADDRESS": "127.0.0.1"}
    done = subprocess.run(
        [*init["command"], line], check=False, env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0
    [line_out] = done.stdout.splitlines()
    assert line_out.startswith(f"ray head 127.0.0.1:{port} answers after ")
    assert line_out.endswith(": starting the worker")


def test_mp_workers_run_the_same_wait_from_the_graphs_config_map() -> None:
    """One wait program: the `mp` path's ConfigMap carries what the Ray init container runs inline."""
    graph = {"metadata": {"name": "g", "namespace": "ns", "uid": "u"}, "spec": {}}
    config_map = desired_wait_leader_config_map(graph, GenContext(namespace="ns"))
    assert config_map["data"][WAIT_LEADER_KEY] == WAIT_PROGRAM


def test_without_a_bound_the_wait_holds_until_the_leader_answers(reserved_port: socket.socket) -> None:
    """The `mp` ConfigMap sets no WAIT_SECONDS: the wait only ends when the leader listens."""
    proc = _start(reserved_port.getsockname()[1], wait_seconds=None, name="leader")
    assert proc.stdout is not None
    try:
        first = proc.stdout.readline()
        assert first.startswith(f"waiting for leader 127.0.0.1:{reserved_port.getsockname()[1]} (0s)")
        reserved_port.listen()
        rest, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert rest.splitlines()[-1].startswith("leader 127.0.0.1:")
