"""Kubeconfig TLS: which server certificates are trusted and which client certificate is presented."""

from __future__ import annotations

import base64
import os
import ssl
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.client import config
from unit.client.kubeconfig_testlib import Pair, client_cn_seen_by_server, write_kubeconfig


def ca_subjects(ctx: ssl.SSLContext | bool) -> list[str]:
    assert isinstance(ctx, ssl.SSLContext)
    return [v for c in ctx.get_ca_certs() for rdn in c["subject"] for k, v in rdn if k == "commonName"]


async def test_certificate_authority_file_is_trusted(tmp_path: Path, certs: dict[str, Pair]) -> None:
    path = write_kubeconfig(
        tmp_path / "kc", None, **{"certificate-authority": str(certs["server"].cert_file)}
    )
    cfg = await config.load_kubeconfig(path)
    assert ca_subjects(cfg.ssl_context) == ["server"]
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert cfg.ssl_context.verify_mode is ssl.CERT_REQUIRED and cfg.ssl_context.check_hostname


async def test_certificate_authority_data_is_trusted(tmp_path: Path, certs: dict[str, Pair]) -> None:
    path = write_kubeconfig(tmp_path / "kc", None, **{"certificate-authority-data": certs["server"].cert_b64})
    cfg = await config.load_kubeconfig(path)
    assert ca_subjects(cfg.ssl_context) == ["server"]


async def test_without_a_certificate_authority_the_system_roots_verify(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", None))
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert cfg.ssl_context.verify_mode is ssl.CERT_REQUIRED


async def test_insecure_skip_tls_verify_turns_verification_off(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(
        write_kubeconfig(tmp_path / "kc", None, **{"insecure-skip-tls-verify": True})
    )
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert cfg.ssl_context.verify_mode is ssl.CERT_NONE and not cfg.ssl_context.check_hostname


async def test_plain_http_server_has_no_tls(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(
        write_kubeconfig(tmp_path / "kc", {"token": "t"}, server="http://127.0.0.1:8080")
    )
    assert (cfg.server, cfg.ssl_context) == ("http://127.0.0.1:8080", False)


async def test_tls_server_name_is_passed_on(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(
        write_kubeconfig(tmp_path / "kc", None, **{"tls-server-name": "api.test"})
    )
    assert cfg.tls_server_name == "api.test"


async def test_tls_server_name_is_unset_by_default(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", None))
    assert cfg.tls_server_name is None


def trusting(certs: dict[str, Pair]) -> dict[str, Any]:
    return {"certificate-authority-data": certs["server"].cert_b64}


async def test_client_certificate_files_are_presented(tmp_path: Path, certs: dict[str, Pair]) -> None:
    user = {"client-certificate": str(certs["client"].cert_file), "client-key": str(certs["client"].key_file)}
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user, **trusting(certs)))
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert await client_cn_seen_by_server(cfg.ssl_context, certs) == "operator-client"


async def test_client_certificate_data_is_presented(tmp_path: Path, certs: dict[str, Pair]) -> None:
    user = {"client-certificate-data": certs["client"].cert_b64, "client-key-data": certs["client"].key_b64}
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user, **trusting(certs)))
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert await client_cn_seen_by_server(cfg.ssl_context, certs) == "operator-client"


async def test_client_certificate_data_and_key_file_mix(tmp_path: Path, certs: dict[str, Pair]) -> None:
    user = {"client-certificate-data": certs["other"].cert_b64, "client-key": str(certs["other"].key_file)}
    cfg = await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user, **trusting(certs)))
    assert isinstance(cfg.ssl_context, ssl.SSLContext)
    assert await client_cn_seen_by_server(cfg.ssl_context, certs) == "other-client"


async def test_key_material_leaves_no_file_behind(
    tmp_path: Path, certs: dict[str, Pair], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inline keys go through a private scratch file that is gone once the TLS context has it."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    modes: list[int] = []
    load = ssl.SSLContext.load_cert_chain

    def spy(self: ssl.SSLContext, certfile: Any, keyfile: Any = None, password: Any = None) -> None:
        modes.extend(os.stat(p).st_mode & 0o777 for p in (certfile, keyfile))
        modes.append(os.stat(os.path.dirname(keyfile)).st_mode & 0o777)
        load(self, certfile, keyfile)

    monkeypatch.setattr(config, "_KEY_SCRATCH_DIR", str(scratch))
    monkeypatch.setattr(ssl.SSLContext, "load_cert_chain", spy)
    user = {"client-certificate-data": certs["client"].cert_b64, "client-key-data": certs["client"].key_b64}
    await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user, **trusting(certs)))
    assert modes == [0o600, 0o600, 0o700]
    assert list(scratch.iterdir()) == []


def bad_tls(certs: dict[str, Pair], case: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(cluster fields, user) for one misconfiguration."""
    cert, key = certs["client"], certs["client"]
    match case:
        case "ca-file-and-data":
            return {"certificate-authority": str(certs["server"].cert_file), **trusting(certs)}, None
        case "ca-and-insecure":
            return {**trusting(certs), "insecure-skip-tls-verify": True}, None
        case "ca-not-base64":
            return {"certificate-authority-data": "%%%"}, None
        case "ca-not-a-certificate":
            pem = b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"
            return {"certificate-authority-data": base64.b64encode(pem).decode()}, None
        case "ca-file-missing":
            return {"certificate-authority": "/nonexistent/ca.crt"}, None
        case "cert-without-key":
            return trusting(certs), {"client-certificate": str(cert.cert_file)}
        case "key-without-cert":
            return trusting(certs), {"client-key-data": key.key_b64}
        case "cert-file-and-data":
            return trusting(certs), {
                "client-certificate": str(cert.cert_file),
                "client-certificate-data": cert.cert_b64,
                "client-key": str(key.key_file),
            }
        case "cert-and-key-mismatch":
            return trusting(certs), {
                "client-certificate-data": cert.cert_b64,
                "client-key-data": certs["other"].key_b64,
            }
        case "cert-file-missing":
            return trusting(certs), {
                "client-certificate": "/nonexistent/c.crt",
                "client-key": str(key.key_file),
            }
    raise AssertionError(case)


@pytest.mark.parametrize(
    ("case", "names"),
    [
        pytest.param(
            "ca-file-and-data", "both certificate-authority and certificate-authority-data", id="ca-twice"
        ),
        pytest.param("ca-and-insecure", "insecure-skip-tls-verify are both set", id="ca-and-insecure"),
        pytest.param("ca-not-base64", "not valid base64", id="ca-not-base64"),
        pytest.param("ca-not-a-certificate", "not a usable certificate", id="ca-not-a-certificate"),
        pytest.param("ca-file-missing", "/nonexistent/ca.crt cannot be read", id="ca-file-missing"),
        pytest.param("cert-without-key", "must be given together", id="cert-without-key"),
        pytest.param("key-without-cert", "must be given together", id="key-without-cert"),
        pytest.param(
            "cert-file-and-data", "both client-certificate and client-certificate-data", id="cert-twice"
        ),
        pytest.param("cert-and-key-mismatch", "not a usable pair", id="cert-key-mismatch"),
        pytest.param("cert-file-missing", "/nonexistent/c.crt cannot be read", id="cert-file-missing"),
    ],
)
async def test_bad_tls_settings_are_clear_one_line_errors(
    tmp_path: Path, certs: dict[str, Pair], case: str, names: str
) -> None:
    cluster, user = bad_tls(certs, case)
    with pytest.raises(config.ConfigError) as err:
        await config.load_kubeconfig(write_kubeconfig(tmp_path / "kc", user, **cluster))
    assert names in str(err.value)
    assert "\n" not in str(err.value)
