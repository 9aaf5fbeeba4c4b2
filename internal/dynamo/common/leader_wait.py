"""The one program a worker pod runs to wait for its leader's port before its engine starts. Pure data.

vLLM `mp` workers run it from the graph's wait-for-leader ConfigMap (graph/sideobjects.py), Ray
workers inline in an init container (component/ray_head_wait.py): the same wait, told apart by its
environment. It needs only Python, which every engine image has.

Environment: `LEADER_HOST`, `LEADER_PORT` (default 29500), `LEADER_NAME` (what the log lines call
it, default "leader"), `POLL_SECONDS` (default 5), `LOG_EVERY_SECONDS` (default 30) and
`WAIT_SECONDS` (unset: wait as long as it takes; set: exit 1 with a line saying so after that long).
"""

from __future__ import annotations

from typing import Final

LEADER_WAIT_PROGRAM: Final = '''\
"""Block until LEADER_HOST:LEADER_PORT accepts TCP connections (see the operator's leader_wait.py)."""
import os
import socket
import sys
import time

host, port = os.environ["LEADER_HOST"], int(os.environ.get("LEADER_PORT", "29500"))
what = os.environ.get("LEADER_NAME", "leader")
limit = float(os.environ["WAIT_SECONDS"]) if os.environ.get("WAIT_SECONDS") else None
poll = float(os.environ.get("POLL_SECONDS", "5"))
every = float(os.environ.get("LOG_EVERY_SECONDS", "30"))
started = time.monotonic()
logged = None
while True:
    waited = time.monotonic() - started
    try:
        socket.create_connection((host, port), timeout=3).close()
        print(f"{what} {host}:{port} answers after {waited:.0f}s: starting the worker", flush=True)
        sys.exit(0)
    except OSError as err:
        if limit is not None and waited >= limit:
            print(f"{what} {host}:{port} did not answer within {limit:.0f}s ({err}): giving up",
                  file=sys.stderr, flush=True)
            sys.exit(1)
        if logged is None or waited - logged >= every:
            bound = f" of {limit:.0f}s" if limit is not None else ""
            print(f"waiting for {what} {host}:{port} ({waited:.0f}s{bound}): {err}", flush=True)
            logged = waited
    time.sleep(poll)
'''
