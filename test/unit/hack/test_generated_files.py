"""hack/generated_files.py: the one write-or-check ending every hack/ generator shares."""

from __future__ import annotations

from pathlib import Path

import generated_files
import pytest


def test_check_reports_a_differing_file_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "out.yaml"
    path.write_text("old\n")
    assert generated_files.sync({path: "new\n"}, check=True) == 1
    assert path.read_text() == "old\n"
    assert "out.yaml" in capsys.readouterr().err


def test_check_counts_a_missing_file_as_stale(tmp_path: Path) -> None:
    path = tmp_path / "absent.md"
    assert generated_files.sync({path: "text"}, check=True) == 1
    assert not path.exists()


def test_check_passes_when_every_file_is_current(tmp_path: Path) -> None:
    current = {tmp_path / "a": "1", tmp_path / "b": "2"}
    for path, text in current.items():
        path.write_text(text)
    assert generated_files.sync(current, check=True) == 0


def test_write_creates_parents_and_makes_the_check_pass(tmp_path: Path) -> None:
    files = {tmp_path / "deep" / "dir" / "crd.yaml": "kind: CRD\n"}
    assert generated_files.sync(files, check=False) == 0
    assert generated_files.stale(files) == []
