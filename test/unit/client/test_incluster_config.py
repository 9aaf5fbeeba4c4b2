"""In-cluster config: the pod's service account and the API server's Service address."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
import yaml
from dynamo_operator.internal.client import config
from unit.client.kubeconfig_testlib import Pair


@pytest.fixture
def service_account(
    tmp_path: Path, certs: dict[str, Pair], no_kube_env: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Path]:
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token\n")
    ca.write_bytes(certs["server"].cert_pem)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "6443")
    return token, ca


def load(paths: tuple[Path, Path]) -> config.ClusterConfig:
    return config.load_incluster(token_path=str(paths[0]), ca_path=str(paths[1]))


async def test_incluster_uses_the_service_address_token_and_ca(service_account: tuple[Path, Path]) -> None:
    cfg = load(service_account)
    assert cfg.server == "https://127.0.0.1:6443"
    assert await cfg.credentials.authorization() == "Bearer sa-token"
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert cfg.ssl_context.verify_mode is ssl.CERT_REQUIRED
    assert [c["subject"] for c in cfg.ssl_context.get_ca_certs()] == [((("commonName", "server"),),)]


async def test_incluster_ipv6_host_is_bracketed(
    service_account: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    assert load(service_account).server == "https://[fd00::1]:6443"


async def test_incluster_token_is_re_read_after_a_minute(service_account: tuple[Path, Path]) -> None:
    cfg = load(service_account)
    service_account[0].write_text("rotated")
    assert await cfg.credentials.authorization() == "Bearer sa-token"
    assert isinstance(cfg.credentials, config.RefreshingCredentials)
    cfg.credentials.loaded_at -= config.TOKEN_REFRESH_SECONDS
    assert await cfg.credentials.authorization() == "Bearer rotated"


async def test_incluster_token_is_re_read_on_refresh(service_account: tuple[Path, Path]) -> None:
    cfg = load(service_account)
    service_account[0].write_text("rotated")
    assert await cfg.credentials.authorization(refresh=True) == "Bearer rotated"


@pytest.mark.parametrize(
    ("case", "names"),
    [
        pytest.param(
            "no-env", "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set", id="no-env"
        ),
        pytest.param("no-token", "token file", id="no-token"),
        pytest.param("no-ca", "CA file", id="no-ca"),
        pytest.param("bad-ca", "not a usable certificate", id="bad-ca"),
    ],
)
async def test_incluster_problems_are_clear_one_line_errors(
    service_account: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, case: str, names: str
) -> None:
    token, ca = service_account
    match case:
        case "no-env":
            monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
        case "no-token":
            token.unlink()
        case "no-ca":
            ca.unlink()
        case "bad-ca":
            ca.write_text("not a certificate")
    with pytest.raises(config.ConfigError) as err:
        load(service_account)
    assert names in str(err.value)
    assert "\n" not in str(err.value)


async def test_default_falls_back_to_incluster_without_a_kubeconfig(
    service_account: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        config,
        "load_incluster",
        lambda: config.ClusterConfig("https://in-cluster", False, config.StaticCredentials(None)),
    )
    assert (await config.load_default()).server == "https://in-cluster"


async def test_default_prefers_home_kube_config(
    service_account: tuple[Path, Path], no_kube_env: Path
) -> None:
    (no_kube_env / ".kube").mkdir()
    doc = {
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:7777"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c"}}],
        "current-context": "x",
    }
    (no_kube_env / ".kube" / "config").write_text(yaml.safe_dump(doc))
    assert (await config.load_default()).server == "https://127.0.0.1:7777"


async def test_default_prefers_kubeconfig_env(
    service_account: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = {
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:8888"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c"}}],
        "current-context": "x",
    }
    (tmp_path / "kc").write_text(yaml.safe_dump(doc))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kc"))
    assert (await config.load_default()).server == "https://127.0.0.1:8888"
