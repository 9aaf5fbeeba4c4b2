"""Keeps the CA bundle in the conversion client config of the operator's CRDs, and says since when each
CRD has carried a given CA (the rotation waits for that before serving a new certificate).

Every replica runs it: it writes only when a CRD's bundle differs from what it should carry
(`pki.merge_bundle`), so all replicas agree on the bytes and steady state costs no write. A CRD that
does not convert by webhook, or does not exist, is left alone. Something that overwrites the bundle (a
`kubectl replace`, a `helm upgrade` carrying a placeholder) is seen by the watch and undone.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

import structlog
from cryptography import x509
from dynamo_operator.internal.cert import pki
from dynamo_operator.internal.cert.watch import follow
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, Conflict, NotFound, TransportError
from dynamo_operator.internal.client.model import Obj
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from dynamo_operator.internal.clock import Clock, RealClock

log = structlog.get_logger(__name__)

FIELD_MANAGER = "dynamo-operator-webhook-ca"
_RETRY = 2.0


def _client_config(crd: Obj) -> dict[str, Any] | None:
    """The CRD's conversion webhook client config, None when it does not convert by webhook."""
    conversion = (crd.get("spec") or {}).get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return None
    config = (conversion.get("webhook") or {}).get("clientConfig")
    return config if isinstance(config, dict) else None


def carried(crd: Obj) -> bytes:
    """The PEM bundle a CRD carries now (b"" when none or not base64)."""
    config = _client_config(crd) or {}
    try:
        return base64.b64decode(str(config.get("caBundle") or ""), validate=True)
    except (binascii.Error, ValueError):
        return b""


class CABundleInjector:
    """See the module docstring. `want(bundle)` sets what the CRDs should trust; `run()` follows the CRDs
    and writes; `trusts(ca)` answers the rotation's question."""

    def __init__(
        self,
        client: Client,
        crd_names: Sequence[str],
        *,
        grace: float = 30.0,
        clock: Clock | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self._client = client
        self.crd_names = tuple(crd_names)
        self.grace = grace
        self._clock: Clock = clock or RealClock()
        self._on_change = on_change
        self._wanted: list[x509.Certificate] = []
        self._observed: dict[str, Obj | None] = {}
        self._since: dict[str, dict[str, float]] = {}  # CRD → CA fingerprint → first seen carrying it
        self._kick = asyncio.Event()
        self.writes = 0

    def want(self, bundle_pem: bytes) -> None:
        certs = pki.load_certs(bundle_pem)
        if [pki.fingerprint(c) for c in certs] != [pki.fingerprint(c) for c in self._wanted]:
            self._wanted = certs
            self._kick.set()

    def trusts(self, ca: x509.Certificate) -> bool:
        """Whether every CRD that converts by webhook has carried `ca` for `grace` seconds, as seen here.

        A CRD not observed yet counts as not trusting: the answer must never be yes by ignorance."""
        fp = pki.fingerprint(ca)
        now = self._clock.now()
        for name in self.crd_names:
            if name not in self._observed:
                return False
            crd = self._observed[name]
            if crd is None or _client_config(crd) is None:
                continue
            since = self._since.get(name, {}).get(fp)
            if since is None or now - since < self.grace:
                return False
        return True

    def _observe(self, name: str, crd: Obj | None) -> None:
        self._observed[name] = crd
        now = self._clock.now()
        present = {pki.fingerprint(c) for c in pki.load_certs(carried(crd))} if crd else set()
        before = self._since.get(name, {})
        self._since[name] = {fp: before.get(fp, now) for fp in present}
        self._kick.set()
        if self._on_change is not None:
            self._on_change()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tasks:
            for name in self.crd_names:
                tasks.create_task(
                    follow(
                        self._client,
                        CUSTOM_RESOURCE_DEFINITION,
                        name,
                        lambda crd, name=name: self._observe(name, crd),  # type: ignore[misc]
                    ),
                    name=f"crd-watch:{name}",
                )
            tasks.create_task(self._write_loop(), name="ca-bundle-writer")

    async def _write_loop(self) -> None:
        while True:
            await self._kick.wait()
            self._kick.clear()
            try:
                for name in self.crd_names:
                    await self._sync(name)
            except (ApiError, TransportError) as err:
                log.warning("Cannot write the CA bundle into a CRD; retrying", error=str(err))
                await asyncio.sleep(_RETRY)
                self._kick.set()

    def desired(self, crd: Obj) -> bytes | None:
        """The bundle `crd` should carry, None when it needs no write."""
        if not self._wanted or _client_config(crd) is None:
            return None
        current = carried(crd)
        bundle = pki.to_pem(pki.merge_bundle(self._wanted, pki.load_certs(current), self._clock.wall()))
        return None if bundle == current else bundle

    async def _sync(self, name: str) -> None:
        crd = self._observed.get(name)
        if crd is None or (bundle := self.desired(crd)) is None:
            return
        patch = {
            "metadata": {"resourceVersion": (crd.get("metadata") or {}).get("resourceVersion")},
            "spec": {
                "conversion": {"webhook": {"clientConfig": {"caBundle": base64.b64encode(bundle).decode()}}}
            },
        }
        try:
            updated = await self._client.patch(
                CUSTOM_RESOURCE_DEFINITION, name, patch, field_manager=FIELD_MANAGER
            )
        except (NotFound, Conflict):  # gone, or changed since we looked: the watch brings the new state
            return
        self.writes += 1
        log.info("Wrote the webhook CA bundle into a CRD", crd=name, cas=len(pki.load_certs(bundle)))
        self._observe(name, updated)
