"""The operator's console script as a child process, the way a user starts it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DYNAMO_OPERATOR = Path(sys.executable).with_name("dynamo-operator")


def start_operator(*args: str, log: Path) -> subprocess.Popen[bytes]:
    """`dynamo-operator args...`, its output to `log`.

    The conversion webhook is off unless `args` name an address: its default, `:9443` on every
    interface, would take the port from the session operator's webhook on 127.x.y.z:9443 (a wildcard
    bind conflicts with every specific one), and `make test` runs three sessions side by side.
    PYTHONSAFEPATH keeps the checkout's operator/ from shadowing the standard library's module."""
    if not any(a.startswith("--webhook-bind-address") for a in args):
        args = (*args, "--webhook-bind-address=0")
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    with log.open("wb") as out:
        return subprocess.Popen([str(DYNAMO_OPERATOR), *args], stdout=out, stderr=subprocess.STDOUT, env=env)
