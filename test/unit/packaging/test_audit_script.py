"""`make audit` (hack/audit.py) never reads an unaudited pin as a pass: exit codes from pip-audit's report
and PyPI's project data, both replaced by fakes here (no network)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import audit
import pytest


@pytest.fixture
def constraints(tmp_path: Path) -> Path:
    path = tmp_path / "constraints.txt"
    path.write_text("# header\naiohttp==3.14.5\nPyYAML==6.0.3\n")
    return path


def run(
    monkeypatch: pytest.MonkeyPatch,
    constraints: Path,
    report: list[dict[str, Any]],
    newest: dict[str, tuple[list[dict[str, Any]] | None, str]] | None = None,
) -> int:
    monkeypatch.setattr(audit, "run_pip_audit", lambda _: report)
    monkeypatch.setattr(audit, "latest_release_advisories", lambda name, _v: (newest or {})[name])
    return audit.main(["audit.py", str(constraints)])


def test_every_pin_audited_without_advisory_passes(
    monkeypatch: pytest.MonkeyPatch, constraints: Path
) -> None:
    report = [
        {"name": "aiohttp", "version": "3.14.5", "vulns": []},
        {"name": "pyyaml", "version": "6.0.3", "vulns": []},
    ]
    assert run(monkeypatch, constraints, report) == 0


def test_an_advisory_fails(monkeypatch: pytest.MonkeyPatch, constraints: Path) -> None:
    report = [
        {"name": "aiohttp", "version": "3.14.5", "vulns": [{"id": "GHSA-x", "fix_versions": ["3.14.6"]}]},
        {"name": "pyyaml", "version": "6.0.3", "vulns": []},
    ]
    assert run(monkeypatch, constraints, report) == 1


def test_a_skipped_pin_that_is_the_newest_release_is_audited_from_project_data(
    monkeypatch: pytest.MonkeyPatch, constraints: Path
) -> None:
    report = [{"name": "aiohttp", "version": "3.14.5", "vulns": []}, {"name": "pyyaml", "skip_reason": "404"}]
    assert run(monkeypatch, constraints, report, {"pyyaml": ([], "")}) == 0
    advisory = {"id": "PYSEC-1", "fixed_in": ["6.0.5"]}
    assert run(monkeypatch, constraints, report, {"pyyaml": ([advisory], "")}) == 1


def test_a_pin_that_could_not_be_audited_is_not_a_pass(
    monkeypatch: pytest.MonkeyPatch, constraints: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = [{"name": "aiohttp", "version": "3.14.5", "vulns": []}, {"name": "pyyaml", "skip_reason": "404"}]
    assert run(monkeypatch, constraints, report, {"pyyaml": (None, "not the newest release")}) == 3
    assert "pyyaml==6.0.3: not the newest release" in capsys.readouterr().err
