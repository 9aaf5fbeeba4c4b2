"""Fixtures for the kubeconfig loader tests (helpers live in kubeconfig_testlib)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from unit.client.kubeconfig_testlib import PLUGIN_SOURCE, Pair, Plugin, make_pair


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Pair]:
    """`server` (SAN 127.0.0.1 and api.test), `client` and `other` (a second, unrelated client)."""
    d = tmp_path_factory.mktemp("certs")
    return {
        "server": make_pair(d, "server", ip="127.0.0.1", dns="api.test"),
        "client": make_pair(d, "operator-client"),
        "other": make_pair(d, "other-client"),
    }


@pytest.fixture
def make_plugin(tmp_path: Path) -> Callable[..., Plugin]:
    """make_plugin(status, api_version=...): an executable that prints that ExecCredential status;
    `{n}` in the token becomes the run number, so re-runs are visible."""

    def make(status: dict[str, Any], *, api_version: str = "client.authentication.k8s.io/v1") -> Plugin:
        script = tmp_path / "plugin.py"
        script.write_text(PLUGIN_SOURCE)
        log = tmp_path / "plugin.log"
        command = tmp_path / "plugin"
        command.write_text(
            f"#!/bin/sh\nexec {sys.executable} {script} {log} '{json.dumps(status)}' {api_version} \"$@\"\n"
        )
        command.chmod(0o755)
        return Plugin(str(command), log)

    return make


@pytest.fixture
def no_kube_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """No KUBECONFIG, no in-cluster variables, HOME in tmp_path (so ~/.kube/config is ours)."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    yield home
