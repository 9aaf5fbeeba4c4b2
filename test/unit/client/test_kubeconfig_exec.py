"""Exec credential plugins: how they are run, what they are told, and when they are run again."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.client import config
from dynamo_operator.internal.client.execplugin import ExecCredentials, ExecPlugin
from dynamo_operator.internal.clock import FakeClock
from unit.client.kubeconfig_testlib import (
    Pair,
    Plugin,
    client_cn_seen_by_server,
    stamp,
    write_kubeconfig,
)

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"
MakePlugin = Callable[..., Plugin]


async def load(tmp_path: Path, exec_spec: dict[str, Any], **cluster: Any) -> config.ClusterConfig:
    fields = cluster or {"insecure-skip-tls-verify": True}
    return await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", {"exec": exec_spec}, **fields))


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
async def test_plugin_token_is_the_bearer_header(
    tmp_path: Path, make_plugin: MakePlugin, api_version: str
) -> None:
    plugin = make_plugin({"token": "tok-{n}"}, api_version=api_version)
    cfg = await load(tmp_path, plugin.spec(api_version))
    assert await cfg.credentials.authorization() == "Bearer tok-1"


@pytest.mark.parametrize("api_version", [V1, V1BETA1])
async def test_plugin_is_told_its_api_version_and_that_it_is_not_interactive(
    tmp_path: Path, make_plugin: MakePlugin, api_version: str
) -> None:
    plugin = make_plugin({"token": "t"}, api_version=api_version)
    await load(tmp_path, plugin.spec(api_version))
    [run] = plugin.runs()
    assert run["info"] == {
        "apiVersion": api_version,
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }


async def test_plugin_gets_its_args_and_env(tmp_path: Path, make_plugin: MakePlugin) -> None:
    plugin = make_plugin({"token": "t"})
    spec = plugin.spec(args=["get-token", "--cluster", "x"], env=[{"name": "PLUGIN_REGION", "value": "eu"}])
    await load(tmp_path, spec)
    [run] = plugin.runs()
    assert run["argv"] == ["get-token", "--cluster", "x"]
    assert run["env"] == {"PLUGIN_REGION": "eu"}


async def test_provide_cluster_info_hands_the_cluster_to_the_plugin(
    tmp_path: Path, make_plugin: MakePlugin, certs: dict[str, Pair]
) -> None:
    plugin = make_plugin({"token": "t"})
    cluster = {
        "certificate-authority-data": certs["server"].cert_b64,
        "tls-server-name": "api.test",
        "extensions": [{"name": "client.authentication.k8s.io/exec", "extension": {"audience": "ops"}}],
    }
    await load(tmp_path, plugin.spec(provideClusterInfo=True), **cluster)
    [run] = plugin.runs()
    assert run["info"]["spec"]["cluster"] == {
        "server": "https://127.0.0.1:6443",
        "tls-server-name": "api.test",
        "certificate-authority-data": certs["server"].cert_b64,
        "config": {"audience": "ops"},
    }


async def test_token_is_cached_until_it_expires(tmp_path: Path, make_plugin: MakePlugin) -> None:
    plugin = make_plugin({"token": "tok-{n}", "expirationTimestamp": stamp(timedelta(hours=1))})
    cfg = await load(tmp_path, plugin.spec())
    assert await cfg.credentials.authorization() == "Bearer tok-1"
    assert await cfg.credentials.authorization() == "Bearer tok-1"
    assert len(plugin.runs()) == 1


async def test_expired_token_runs_the_plugin_again(tmp_path: Path, make_plugin: MakePlugin) -> None:
    plugin = make_plugin({"token": "tok-{n}", "expirationTimestamp": stamp(-timedelta(minutes=1))})
    cfg = await load(tmp_path, plugin.spec())  # run 1 at load
    assert await cfg.credentials.authorization() == "Bearer tok-2"
    assert await cfg.credentials.authorization() == "Bearer tok-3"


async def test_expiry_follows_the_clock(tmp_path: Path, make_plugin: MakePlugin) -> None:
    """With an injected clock: the token is reused right up to expirationTimestamp, then replaced."""
    plugin = make_plugin({"token": "tok-{n}", "expirationTimestamp": "2030-01-01T00:00:00Z"})
    spec = ExecPlugin.from_kubeconfig("u", plugin.spec(), cluster={"server": "https://x"}, ca_data=None)
    clock = FakeClock(wall_start=datetime(2029, 12, 31, 23, 59, 59, tzinfo=UTC))  # a second before
    creds = ExecCredentials(spec, clock=clock)
    assert await creds.authorization() == "Bearer tok-1"
    assert await creds.authorization() == "Bearer tok-1"
    clock.advance(1)
    assert await creds.authorization() == "Bearer tok-2"


async def test_token_without_expiry_is_kept_until_refresh(tmp_path: Path, make_plugin: MakePlugin) -> None:
    plugin = make_plugin({"token": "tok-{n}"})
    cfg = await load(tmp_path, plugin.spec())
    assert await cfg.credentials.authorization() == "Bearer tok-1"
    assert await cfg.credentials.authorization(refresh=True) == "Bearer tok-2"
    assert await cfg.credentials.authorization() == "Bearer tok-2"


async def test_concurrent_refreshes_share_one_run(tmp_path: Path, make_plugin: MakePlugin) -> None:
    """Many requests hit by the same 401 re-run the plugin once, not once each."""
    plugin = make_plugin({"token": "tok-{n}", "expirationTimestamp": stamp(timedelta(hours=1))})
    cfg = await load(tmp_path, plugin.spec())
    values = await asyncio.gather(*(cfg.credentials.authorization(refresh=True) for _ in range(5)))
    assert set(values) == {"Bearer tok-2"}
    assert len(plugin.runs()) == 2


async def test_plugin_client_certificate_is_presented(
    tmp_path: Path, make_plugin: MakePlugin, certs: dict[str, Pair]
) -> None:
    status = {
        "clientCertificateData": certs["client"].cert_pem.decode(),
        "clientKeyData": certs["client"].key_pem.decode(),
    }
    plugin = make_plugin(status)
    cfg = await load(tmp_path, plugin.spec(), **{"certificate-authority-data": certs["server"].cert_b64})
    assert await cfg.credentials.authorization() is None
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert await client_cn_seen_by_server(cfg.ssl_context, certs) == "operator-client"


async def test_relative_command_with_a_separator_resolves_against_the_kubeconfig(
    tmp_path: Path, make_plugin: MakePlugin
) -> None:
    plugin = make_plugin({"token": "rel"})
    spec = plugin.spec(command="./" + os.path.basename(plugin.command))
    cfg = await load(tmp_path, spec)  # the kubeconfig is written next to the plugin
    assert await cfg.credentials.authorization() == "Bearer rel"


async def test_bare_command_is_looked_up_on_path(
    tmp_path: Path, make_plugin: MakePlugin, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = make_plugin({"token": "on-path"})
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    cfg = await load(tmp_path, plugin.spec(command=os.path.basename(plugin.command)))
    assert await cfg.credentials.authorization() == "Bearer on-path"


def script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bad-plugin"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def credential(status: dict[str, Any] | None, api_version: str = V1, kind: str = "ExecCredential") -> str:
    doc: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if status is not None:
        doc["status"] = status
    return f"cat <<'EOF'\n{json.dumps(doc)}\nEOF\n"


def failing(tmp_path: Path, case: str) -> dict[str, Any]:
    """An exec section that fails in one way."""
    match case:
        case "missing-command":
            return {
                "apiVersion": V1,
                "command": "no-such-plugin-xyz",
                "installHint": "Install it:\n  brew install x",
            }
        case "not-executable":
            (tmp_path / "plain").write_text("")
            return {"apiVersion": V1, "command": str(tmp_path / "plain")}
        case "exits-non-zero":
            return {"apiVersion": V1, "command": script(tmp_path, "echo 'login expired' >&2\nexit 3\n")}
        case "not-json":
            return {"apiVersion": V1, "command": script(tmp_path, "echo hello\n")}
        case "wrong-kind":
            return {"apiVersion": V1, "command": script(tmp_path, credential({"token": "t"}, kind="Secret"))}
        case "other-api-version":
            return {"apiVersion": V1, "command": script(tmp_path, credential({"token": "t"}, V1BETA1))}
        case "no-status":
            return {"apiVersion": V1, "command": script(tmp_path, credential(None))}
        case "empty-status":
            return {"apiVersion": V1, "command": script(tmp_path, credential({}))}
        case "cert-without-key":
            return {"apiVersion": V1, "command": script(tmp_path, credential({"clientCertificateData": "x"}))}
        case "bad-expiry":
            status = {"token": "t", "expirationTimestamp": "tomorrow"}
            return {"apiVersion": V1, "command": script(tmp_path, credential(status))}
        case "unsupported-api-version":
            return {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "true"}
        case "no-api-version":
            return {"command": "true"}
        case "no-command":
            return {"apiVersion": V1}
        case "always-interactive":
            return {"apiVersion": V1, "command": "true", "interactiveMode": "Always"}
        case "env-without-name":
            return {"apiVersion": V1, "command": "true", "env": [{"value": "x"}]}
    raise AssertionError(case)


@pytest.mark.parametrize(
    ("case", "names"),
    [
        pytest.param(
            "missing-command",
            "executable no-such-plugin-xyz not found; Install it: brew install x",
            id="missing-command-with-install-hint",
        ),
        pytest.param("not-executable", "is not executable", id="not-executable"),
        pytest.param("exits-non-zero", "failed with exit code 3: login expired", id="exits-non-zero"),
        pytest.param("not-json", "output is not JSON", id="not-json"),
        pytest.param("wrong-kind", "not an ExecCredential", id="wrong-kind"),
        pytest.param(
            "other-api-version", "plugin returned client.authentication.k8s.io/v1beta1", id="other-version"
        ),
        pytest.param("no-status", "has no status", id="no-status"),
        pytest.param("empty-status", "neither a token nor a client certificate", id="empty-status"),
        pytest.param("cert-without-key", "but not both", id="cert-without-key"),
        pytest.param("bad-expiry", "not an RFC 3339 time", id="bad-expiry"),
        pytest.param("unsupported-api-version", "v1alpha1' is not supported", id="v1alpha1"),
        pytest.param("no-api-version", "apiVersion is required", id="no-api-version"),
        pytest.param("no-command", "command is required", id="no-command"),
        pytest.param("always-interactive", "needs a terminal", id="always-interactive"),
        pytest.param("env-without-name", "needs a name", id="env-without-name"),
    ],
)
async def test_failing_plugins_are_clear_one_line_errors(tmp_path: Path, case: str, names: str) -> None:
    with pytest.raises(config.ConfigError) as err:
        await load(tmp_path, failing(tmp_path, case))
    assert names in str(err.value)
    assert "user 'u'" in str(err.value)
    assert "\n" not in str(err.value)
