"""Pure helpers of the local control plane and the test support: names, CIDRs, polling, process stop."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys
import time

import pytest
from localcluster import ClusterError, node_manifest, process_alive, terminate
from testsupport import eventually, eventually_sync
from testsupport.cluster import namespace_name

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


@pytest.mark.parametrize(
    ("test_name", "prefix"),
    [
        pytest.param("test_lease_update", "lease-update-", id="plain"),
        pytest.param("test_scale[3-Replicas_ok]", "scale-3-replicas-ok-", id="parametrized"),
        pytest.param("test_" + "x" * 80, "x" * 50 + "-", id="truncated"),
        pytest.param("test___", "t-", id="nothing-left"),
    ],
)
def test_namespace_name_is_a_fresh_dns_label(test_name: str, prefix: str) -> None:
    """Derived from the test's name, unique per call, always a valid namespace name."""
    first, second = namespace_name(test_name), namespace_name(test_name)
    assert first.startswith(prefix)
    assert first != second
    assert DNS_LABEL.fullmatch(first), first


def test_fake_nodes_get_disjoint_loopback_pod_cidrs() -> None:
    """Every node's pod range lies in 127.0.0.0/8 and no two overlap."""
    nets = [ipaddress.IPv4Network(node_manifest(i)["spec"]["podCIDR"]) for i in range(8)]
    assert all(n.subnet_of(ipaddress.IPv4Network("127.0.0.0/8")) for n in nets)
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])
    assert all(n.num_addresses >= 1000 for n in nets)


def test_eventually_sync_returns_the_first_value_that_holds() -> None:
    """Values that do not satisfy `until` and AssertionErrors both mean "not yet"."""
    calls = iter([AssertionError("not yet"), 1, 2, 3])

    def probe() -> int:
        match next(calls):
            case AssertionError() as e:
                raise e
            case int(value):
                return value
        raise AssertionError("unreachable")

    assert eventually_sync(probe, until=lambda v: v >= 2, interval=0.001) == 2


def test_eventually_sync_reports_what_it_last_saw_on_timeout() -> None:
    """A bare False never holds; the timeout message names the wait and the last value."""
    with pytest.raises(AssertionError, match=r"the flag.*last seen: False"):
        eventually_sync(lambda: False, timeout=0.05, interval=0.01, what="the flag")


async def test_eventually_awaits_coroutine_probes() -> None:
    """The async twin accepts coroutine functions."""
    seen = []

    async def probe() -> int:
        seen.append(1)
        return len(seen)

    assert await eventually(probe, until=lambda n: n == 3, interval=0.001) == 3


def test_terminate_kills_a_process_that_ignores_sigterm() -> None:
    """SIGTERM first; SIGKILL once the grace period is over; the child is reaped."""
    code = "import signal as s, time; s.signal(s.SIGTERM, s.SIG_IGN); print(flush=True); time.sleep(60)"
    # -P: the repo root (the cwd) holds a folder named `operator` that would shadow the stdlib module.
    proc = subprocess.Popen([sys.executable, "-P", "-c", code], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()  # SIGTERM is ignored from here on
    started = time.monotonic()
    terminate({proc.pid: sys.executable}, [proc], grace=0.2)
    assert proc.returncode == -9
    assert not process_alive(proc.pid)
    assert time.monotonic() - started < 5


def test_terminate_leaves_a_pid_running_another_binary_alone() -> None:
    """A recorded pid now running something else (pid reuse) is not signalled."""
    proc = subprocess.Popen([sys.executable, "-P", "-c", "import time; time.sleep(60)"])
    try:
        terminate({proc.pid: "/not/the/recorded/binary"}, [proc], grace=0.1)
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_cluster_error_is_a_runtime_error() -> None:
    """Callers may catch RuntimeError without importing the module."""
    assert issubclass(ClusterError, RuntimeError)
