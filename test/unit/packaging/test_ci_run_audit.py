""".ci/run reads the audit's own exit code: `make` would turn any failing recipe into exit 2, so an
incomplete audit (3) must not pass through make, or every CI run on an index without per-release data
would fail as "could not run"."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _run_ci(tmp_path: Path, audit_rc: int, *, strict: bool = False) -> subprocess.CompletedProcess[str]:
    """.ci/run in a scratch tree whose `make` only records its targets and whose audit exits `audit_rc`."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    _executable(tmp_path / ".venv" / "bin" / "python", f"#!/bin/sh\nexit {audit_rc}\n")
    bin_dir = tmp_path / "fakebin"
    _executable(bin_dir / "make", f'#!/bin/sh\necho "$@" >> {tmp_path}/make.log\nexit 0\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "AUDIT_STRICT": "1" if strict else "0"}
    return subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_incomplete_audit_is_announced_and_the_tests_still_run(tmp_path: Path) -> None:
    done = _run_ci(tmp_path, 3)
    assert done.returncode == 0
    assert "DEPENDENCY AUDIT INCOMPLETE" in done.stderr
    assert "test" in (tmp_path / "make.log").read_text().split()


@pytest.mark.parametrize("audit_rc", [1, 2])
def test_an_advisory_or_an_audit_that_could_not_run_fails_ci_before_the_tests(
    tmp_path: Path, audit_rc: int
) -> None:
    done = _run_ci(tmp_path, audit_rc)
    assert done.returncode == audit_rc
    assert "test" not in (tmp_path / "make.log").read_text().split()


def test_strict_mode_fails_an_incomplete_audit(tmp_path: Path) -> None:
    assert _run_ci(tmp_path, 3, strict=True).returncode == 3
