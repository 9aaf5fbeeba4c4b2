"""External certificates (cert-manager, or any mounted kubernetes.io/tls Secret): `tls.crt` and `tls.key`
in a directory, served by every replica and reloaded into the same SSL context when the kubelet swaps
the files. The CA bundle of the CRDs is someone else's job then (cert-manager's CA injector)."""

from __future__ import annotations

import asyncio
import hashlib
import ssl
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
POLL_SECONDS = 10.0


class MountedCertificates:
    """`load()` once at start (raises when the pair is missing or bad), `run()` polls for changes."""

    def __init__(self, context: ssl.SSLContext, cert_dir: Path | str, *, interval: float = POLL_SECONDS):
        self.context = context
        self.cert_path = Path(cert_dir, CERT_FILE)
        self.key_path = Path(cert_dir, KEY_FILE)
        self.interval = interval
        self._loaded: bytes | None = None
        self.serving = False
        self.ready = asyncio.Event()  # set with `serving`
        self.reloads = 0

    def _digest(self) -> bytes:
        # Contents, not mtimes: the kubelet's atomic symlink swap may keep sizes and times alike.
        digest = hashlib.sha256(self.cert_path.read_bytes())
        digest.update(self.key_path.read_bytes())
        return digest.digest()

    def load(self) -> None:
        digest = self._digest()
        self.context.load_cert_chain(self.cert_path, self.key_path)
        self._loaded = digest
        self.serving = True
        self.ready.set()

    def reload_if_changed(self) -> bool:
        try:
            if self._digest() == self._loaded:
                return False
            self.load()
        except (OSError, ssl.SSLError) as err:
            # Mid-swap the two files can disagree for a moment: keep the current pair, try next poll.
            log.warning("Cannot reload the webhook certificate; keeping the current one", error=str(err))
            return False
        self.reloads += 1
        log.info("Reloaded the webhook certificate", path=str(self.cert_path))
        return True

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.reload_if_changed()
