"""Serving certificates of the secure metrics endpoint: the self-signed pair, a mounted pair and its
rotation, and a manager that refuses to start without the pair it was told to use."""

from __future__ import annotations

import asyncio
import os
import ssl
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.gate import RequestGate
from dynamo_operator.internal.manager import Manager, ManagerError, ManagerOptions, http, tls
from testsupport.api import eventually


def write_pair(directory: Path, pair: tls.PemPair) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / tls.CERT_FILE).write_bytes(pair.cert)
    (directory / tls.KEY_FILE).write_bytes(pair.key)


async def served_certificate(port: int, trusted: bytes) -> x509.Certificate:
    """Handshake with 127.0.0.1:port trusting only `trusted`; the certificate the server presented."""
    context = ssl.create_default_context(cadata=trusted.decode())
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
        await writer.wait_closed()
    return x509.load_der_x509_certificate(der)


async def serve(context: ssl.SSLContext) -> http.Server:
    server = http.Server(http.metrics_app(), host="127.0.0.1", port=0, ssl_context=context)
    await server.start()
    return server


def test_self_signed_pair_is_a_loopback_server_certificate() -> None:
    """Names localhost and the loopback addresses, is no CA, and is meant for serving."""
    cert = x509.load_pem_x509_certificate(tls.self_signed_pair("metrics-server").cert)
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert {str(ip) for ip in names.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == tls.SELF_SIGNED_VALIDITY


def test_every_start_gets_a_new_key() -> None:
    """Nothing is baked in: two pairs never share a key."""
    assert tls.self_signed_pair("m").key != tls.self_signed_pair("m").key


@pytest.mark.parametrize("memfd", [True, False], ids=["memory-file", "private-temp-dir"])
async def test_an_in_memory_pair_is_served(memfd: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated pair is what a client sees, loaded through a memory file (Linux) or a private
    temporary directory (elsewhere)."""
    if not memfd:
        monkeypatch.delattr(os, "memfd_create", raising=False)
    pair = tls.self_signed_pair("metrics-server")
    context = tls.server_context()
    tls.load_pair(context, pair)
    server = await serve(context)
    try:
        assert server.port is not None
        served = await served_certificate(server.port, pair.cert)
    finally:
        await server.stop()
    assert served == x509.load_pem_x509_certificate(pair.cert)


async def test_a_mounted_pair_is_reloaded_when_it_rotates(tmp_path: Path) -> None:
    """A new tls.crt/tls.key in the directory is served on the next handshake, without a restart."""
    first, second = tls.self_signed_pair("first"), tls.self_signed_pair("second")
    write_pair(tmp_path, first)
    watcher = tls.CertWatcher(tls.server_context(), tmp_path)
    watcher.load()
    assert watcher.reload_if_changed() is False  # unchanged files: nothing to do
    server = await serve(watcher.context)
    try:
        assert server.port is not None
        assert await served_certificate(server.port, first.cert) == x509.load_pem_x509_certificate(first.cert)
        write_pair(tmp_path, second)
        assert watcher.reload_if_changed() is True
        assert await served_certificate(server.port, second.cert) == x509.load_pem_x509_certificate(
            second.cert
        )
    finally:
        await server.stop()


def test_a_broken_rotation_keeps_the_current_pair(tmp_path: Path) -> None:
    """A key that does not match the certificate (half-written rotation) is not loaded; the next
    consistent pair is."""
    first, second = tls.self_signed_pair("first"), tls.self_signed_pair("second")
    write_pair(tmp_path, first)
    watcher = tls.CertWatcher(tls.server_context(), tmp_path)
    watcher.load()
    (tmp_path / tls.CERT_FILE).write_bytes(second.cert)  # key still the first one's
    assert watcher.reload_if_changed() is False
    (tmp_path / tls.KEY_FILE).write_bytes(second.key)
    assert watcher.reload_if_changed() is True


async def test_a_manager_with_a_certificate_directory_serves_that_pair(tmp_path: Path) -> None:
    """--metrics-cert-path: the handshake presents the mounted certificate, not a generated one."""
    mounted = tls.self_signed_pair("mounted")
    write_pair(tmp_path, mounted)
    mgr = Manager(
        _NO_API_SERVER,  # the handshake needs no API server
        options=ManagerOptions(
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address="0",
            metrics_secure=True,
            metrics_cert_dir=str(tmp_path),
        ),
        cache=cast(Any, _IdleCache()),
    )
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=10)
        assert mgr.metrics_port is not None
        served = await served_certificate(mgr.metrics_port, mounted.cert)
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 10)
    assert served == x509.load_pem_x509_certificate(mounted.cert)


async def test_a_manager_told_to_use_a_missing_pair_does_not_start(tmp_path: Path) -> None:
    """--metrics-cert-path naming an empty directory is a start-up error, not a silent self-signed
    fallback."""
    mgr = Manager(
        _NO_API_SERVER,
        options=ManagerOptions(
            metrics_bind_address="127.0.0.1:0",
            health_probe_bind_address="0",
            metrics_secure=True,
            metrics_cert_dir=str(tmp_path),
        ),
        cache=cast(Any, _IdleCache()),
    )
    with pytest.raises(ManagerError, match="metrics certificate"):
        await mgr.run()


# The review client is built from `config` and `gate` at start-up, and never used by these tests.
_NO_API_SERVER = cast(Client, SimpleNamespace(config=None, gate=RequestGate(None)))


class _IdleCache:
    async def start(self) -> None:
        pass

    async def wait_for_sync(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109
        return True

    async def stop(self) -> None:
        pass
