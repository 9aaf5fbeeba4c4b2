"""Kubeconfig loading: server, TLS and credentials, including tokens that change under us."""

from __future__ import annotations

import datetime
import json
import ssl
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal.client import config


def write_kubeconfig(path: Path, user: dict[str, Any], server: str = "https://127.0.0.1:6443") -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


async def test_static_token(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", {"token": "abc"}))
    assert cfg.server == "https://127.0.0.1:6443"
    assert await cfg.credentials.authorization() == "Bearer abc"
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert cfg.ssl_context.verify_mode is ssl.CERT_NONE  # insecure-skip-tls-verify


async def test_token_file_is_re_read_on_refresh(tmp_path: Path) -> None:
    """A rotated tokenFile is picked up when the client asks for a refresh (after a 401)."""
    token = tmp_path / "token"
    token.write_text("first")
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", {"tokenFile": str(token)}))
    assert await cfg.credentials.authorization() == "Bearer first"
    token.write_text("second")
    assert await cfg.credentials.authorization() == "Bearer first"  # cached within the minute
    assert await cfg.credentials.authorization(refresh=True) == "Bearer second"


async def test_exec_plugin_token_is_refreshed_when_expired(tmp_path: Path) -> None:
    """An exec plugin is re-run once its token has expired."""
    counter = tmp_path / "count"
    counter.write_text("0")
    expired = (datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=1)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    plugin = tmp_path / "plugin.sh"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "tok-$n", "expirationTimestamp": expired},
    }
    plugin.write_text(
        "#!/bin/sh\n"
        f"n=$(($(cat {counter}) + 1)); echo $n > {counter}\n"
        f"cat <<EOF\n{json.dumps(credential)}\nEOF\n"
    )
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin)}}
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user))
    assert await cfg.credentials.authorization() == "Bearer tok-1"
    assert await cfg.credentials.authorization(refresh=True) == "Bearer tok-2"


def test_incluster_reads_the_service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("not used until a connection is made")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    with pytest.raises(ssl.SSLError):  # our fake CA is not a certificate: proves it is used
        config.load_incluster(token_path=str(token), ca_path=str(ca))
