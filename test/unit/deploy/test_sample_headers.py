"""Every sample says what it needs and what the local control plane shows without it; the e2e suite
(test/e2e/test_e2e_samples.py) checks the statement on a real cluster."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from testsupport.samples import header, sample_files, statement

KINDS = {"DynamoGraphDeployment", "DynamoGraphDeploymentRequest", "DynamoModel"}


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_every_sample_header_says_what_it_needs_and_what_the_local_cluster_shows(path: Path) -> None:
    assert header(path, "Needs"), f"{path.name}: no '# Needs:' line"
    assert statement(path), f"{path.name}: no checkable '# Local control plane:' line"


@pytest.mark.parametrize("path", sample_files(), ids=lambda p: p.name)
def test_every_sample_is_one_object_of_a_kind_the_statement_can_describe(path: Path) -> None:
    [doc] = [d for d in yaml.safe_load_all(path.read_text()) if d]
    assert doc["kind"] in KINDS


def test_every_sample_file_is_listed() -> None:
    """`kubectl apply -k config/samples` applies them all."""
    on_disk = {p.name for p in (Path(sample_files()[0]).parent).glob("nvidia.com_*.yaml")}
    assert {p.name for p in sample_files()} == on_disk
