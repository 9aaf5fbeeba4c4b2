"""The init container that holds a vLLM Ray worker back until its replica's Ray head answers.

A Ray worker pod runs only `ray start --address=<head>:6379 --block`. Its pods start together with
the head's, and a worker that tries to join before the head's GCS port listens can end up never
joining until the pod is re-created (upstream issue 14108). So, as vLLM `mp` workers wait for their
leader's master port, Ray workers wait for the head's port in an init container; the head's own pod
is not delayed.

Unlike the `mp` wait (the graph's wait-for-leader ConfigMap, which waits without end), this wait is
written inline and bounded: a head that never answers shows as a failed init container with a log
line saying so (the kubelet then retries it with its backoff, and an orchestrator that recreates a
group on restarts does so), and it needs no ConfigMap, so a DCD without a graph gets it too.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.leader_wait import LEADER_WAIT_PROGRAM

INIT_CONTAINER_NAME = "wait-for-leader-ray"
# The head's pod may still be pulling a multi-GB engine image on another node when the worker's
# init container starts (the worker's own image is already there): half an hour covers a slow pull
# without leaving a worker waiting for a head that is gone for good.
WAIT_SECONDS = 1800
POLL_SECONDS = 5
LOG_EVERY_SECONDS = 30

# The program every leader wait runs (common/leader_wait.py), inline: `python3 -c`.
WAIT_PROGRAM = LEADER_WAIT_PROGRAM


def wait_environment(leader_host_shell: str) -> str:
    """The shell words exporting the program's parameters (`leader_host_shell`: `${VAR}` form, expanded
    by the init container's shell from the orchestrator's env)."""
    return (
        f'export LEADER_HOST="{leader_host_shell}" LEADER_PORT={c.VLLM_RAY_PORT} LEADER_NAME="ray head" '
        f"WAIT_SECONDS={WAIT_SECONDS} POLL_SECONDS={POLL_SECONDS} LOG_EVERY_SECONDS={LOG_EVERY_SECONDS}"
    )


def ray_head_wait_init_container(main: Mapping[str, Any], leader_host_shell: str) -> dict[str, Any]:
    """The worker pod's init container: the main container's image, waiting for the head's port."""
    return {
        "name": INIT_CONTAINER_NAME,
        "image": main.get("image", ""),
        "command": ["/bin/sh", "-c"],
        "args": [f"{wait_environment(leader_host_shell)}; exec python3 -c {shlex.quote(WAIT_PROGRAM)}"],
    }
