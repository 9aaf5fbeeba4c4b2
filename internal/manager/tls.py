"""Serving certificates for the secure metrics endpoint: a mounted pair that is reloaded when it
rotates, or a self-signed pair made in memory at start-up.

A mounted pair is what cert-manager (or any Secret of type kubernetes.io/tls) provides: a directory
with `tls.crt` and `tls.key`. The kubelet swaps the files atomically when the Secret changes, so the
watcher compares their contents and reloads the same `SSLContext`: new handshakes present the new
certificate, open connections keep theirs, and the server is never restarted.

Without a mounted pair a self-signed one is generated (ECDSA P-256, one year). Python's `ssl` loads a
key only from a path; on Linux the pair goes through an anonymous memory file (`memfd_create`), so the
private key never touches a filesystem. Elsewhere (a developer's laptop) a private temporary directory
is used and removed at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import ipaddress
import os
import ssl
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
# controller-runtime's certwatcher polls every 10 s as well; a rotation is seen within one period.
WATCH_INTERVAL = 10.0
SELF_SIGNED_VALIDITY = datetime.timedelta(days=365)
# Tolerates a scraper whose clock runs a little behind the operator's.
_BACKDATE = datetime.timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class PemPair:
    """A certificate chain and its private key, PEM-encoded."""

    cert: bytes
    key: bytes


def self_signed_pair(
    common_name: str,
    *,
    dns_names: Sequence[str] = ("localhost",),
    ip_addresses: Sequence[str] = ("127.0.0.1", "::1"),
    now: datetime.datetime | None = None,
) -> PemPair:
    """A fresh self-signed serving certificate; scrapers skip verification or pin it."""
    # Imported here: only a self-signed start-up needs it, and the package costs ~8 MB of RSS.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    issued = (now or datetime.datetime.now(datetime.UTC)) - _BACKDATE
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    alt_names: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    alt_names += [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_addresses]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(issued)
        .not_valid_after(issued + SELF_SIGNED_VALIDITY)
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return PemPair(
        cert=cert.public_bytes(serialization.Encoding.PEM),
        key=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def server_context() -> ssl.SSLContext:
    """TLS 1.2+, HTTP/1.1 only (as controller-runtime without --enable-http2); no certificate yet."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    return context


def load_pair(context: ssl.SSLContext, pair: PemPair) -> None:
    """Install an in-memory pair into `context` without writing the key to a filesystem (on Linux)."""
    with _readable_paths(pair) as (cert_path, key_path):
        context.load_cert_chain(cert_path, key_path)


@contextlib.contextmanager
def _readable_paths(pair: PemPair) -> Iterator[tuple[str, str]]:
    if hasattr(os, "memfd_create"):
        fds = [os.memfd_create(label, os.MFD_CLOEXEC) for label in ("metrics-cert", "metrics-key")]
        try:
            for fd, data in zip(fds, (pair.cert, pair.key), strict=True):
                os.write(fd, data)
            yield f"/proc/self/fd/{fds[0]}", f"/proc/self/fd/{fds[1]}"
        finally:
            for fd in fds:
                os.close(fd)
        return
    with tempfile.TemporaryDirectory(prefix="metrics-cert-") as tmp:  # mode 0700
        cert_path, key_path = Path(tmp, CERT_FILE), Path(tmp, KEY_FILE)
        cert_path.write_bytes(pair.cert)
        key_path.touch(mode=0o600)
        key_path.write_bytes(pair.key)
        yield str(cert_path), str(key_path)


class CertWatcher:
    """Keeps `context` serving the pair in `cert_dir`; `run()` polls for rotations until cancelled."""

    def __init__(self, context: ssl.SSLContext, cert_dir: Path | str) -> None:
        self.context = context
        self.cert_path = Path(cert_dir, CERT_FILE)
        self.key_path = Path(cert_dir, KEY_FILE)
        self._loaded: bytes | None = None

    def _fingerprint(self) -> bytes:
        # Contents, not stat: a rewrite within one timestamp tick with the same size is still seen,
        # and two small files every 10 s cost nothing.
        digest = hashlib.sha256(self.cert_path.read_bytes())
        digest.update(self.key_path.read_bytes())
        return digest.digest()

    def load(self) -> None:
        """Load the pair now; raises OSError/ssl.SSLError when missing or unreadable (start-up fails)."""
        before = self._fingerprint()
        self.context.load_cert_chain(self.cert_path, self.key_path)
        self._loaded = before

    def reload_if_changed(self) -> bool:
        """Reload when the files changed since the last load; a bad new pair keeps the old one."""
        try:
            if self._fingerprint() == self._loaded:
                return False
            self.load()
        except (OSError, ssl.SSLError) as err:
            # Mid-rotation the pair can be briefly inconsistent; the next poll tries again.
            log.warning("Cannot reload the metrics certificate; keeping the current one", error=str(err))
            return False
        log.info("Reloaded the metrics certificate", path=str(self.cert_path))
        return True

    async def run(self, interval: float = WATCH_INTERVAL) -> None:
        while True:
            await asyncio.sleep(interval)
            self.reload_if_changed()
