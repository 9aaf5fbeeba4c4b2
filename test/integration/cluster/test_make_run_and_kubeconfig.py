"""`make run` and `make kubeconfig` against a real local control plane: the host operator keeps its
metrics off :8080 (kubectl's fallback server when no kubeconfig is found) and says where they are;
`eval $(make kubeconfig)` points a shell at the local cluster."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

import pytest
from testsupport.cluster import Cluster

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
METRICS_LINE = re.compile(r"metrics: http://127\.0\.0\.1:(\d+)/metrics")


class Lines:
    """stderr of a process, read line by line on a thread (a pipe is never left to fill up)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line)

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if m := pattern.search(line):
                    return m
            time.sleep(0.2)
        raise AssertionError(
            f"no line matching {pattern.pattern} within {timeout:g} s:\n{''.join(self.lines)}"
        )


def test_make_run_serves_metrics_off_kubectls_fallback_port(cluster: Cluster, ns: str) -> None:
    """hack/run-local.sh (what `make run` runs) prints its metrics URL, which is not :8080 and answers;
    the operator logs for a console, not JSON. Restricted to a fresh namespace to leave others alone."""
    env = {**os.environ, "KUBECONFIG": cluster.kubeconfig, "PYTHONSAFEPATH": "1"}
    proc = subprocess.Popen(
        [str(REPO / "hack" / "run-local.sh"), f"--namespace={ns}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = Lines(proc)
    try:
        port = lines.wait_for(METRICS_LINE, timeout=120).group(1)
        assert int(port) != 8080
        body = ""
        for _ in range(120):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                    body = resp.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert "controller_runtime_reconcile_total" in body
        started = lines.wait_for(re.compile(r".*Starting workers.*"), timeout=60).group(0)
        assert not started.lstrip().startswith("{"), started
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0


def make_kubeconfig(state_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["DYNAMO_CLUSTER_STATE_DIR"] = str(state_dir)
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "kubeconfig"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_make_kubeconfig_prints_an_export_line_for_eval(cluster: Cluster) -> None:
    if cluster.local is None:
        pytest.skip("needs the local control plane")
    done = make_kubeconfig(cluster.local.state_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"export KUBECONFIG={cluster.kubeconfig}\n"


def test_make_kubeconfig_of_a_stopped_cluster_says_how_to_start_one(tmp_path: Path) -> None:
    done = make_kubeconfig(tmp_path / "no-cluster")
    assert done.returncode != 0
    assert done.stdout == ""
    assert "make cluster-up" in done.stderr
