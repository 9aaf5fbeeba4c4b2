"""The cheapest fault scenarios of hack/faults/run.py (PVC safety, etcd compaction), each in its own
local control plane and operator process, so `make test-e2e` covers them; the heavy ones stay
one-command scripts (`hack/faults/run.py leader-failover` etc.)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BOUND = 420.0  # seconds per scenario, cluster start included


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param("pvc-safety", id="pvc-safety"),
        pytest.param("compaction", id="compaction"),
    ],
)
def test_fault_scenario_passes(scenario: str) -> None:
    """The scenario exits 0 and ends with its invariant line."""
    if os.environ.get("DYNAMO_E2E_MODE") == "kind":
        pytest.skip("fault scenarios need the local control plane's fault hooks")
    done = subprocess.run(
        [sys.executable, str(REPO / "hack" / "faults" / "run.py"), scenario, f"--timeout={BOUND - 60:g}"],
        capture_output=True,
        text=True,
        timeout=BOUND,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        check=False,
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "no lost user PVC" in done.stdout
