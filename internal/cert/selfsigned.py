"""The operator's own CA and serving certificate, kept in a Secret of its namespace (`state.py` says
what the Secret should hold; this module reads, writes and serves it).

Every replica runs the same loop, leader or not, because every replica serves conversions from
start-up: follow the Secret, compute `state.plan`, write when it says so, serve the Secret's pair
(reloading the SSL context in place when it changes) and hand the CA bundle to the CRD injector.
Replicas converge on one Secret through the API server's concurrency control: the first write is a
create (AlreadyExists: someone else made it, read theirs), later ones a replace carrying the
resourceVersion read (Conflict: read again and re-plan). Issuing is done only by the replica whose
write lands; the others adopt its result.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import ssl
from collections.abc import Mapping

import structlog
from cryptography import x509
from dynamo_operator.internal.cert import pki, state
from dynamo_operator.internal.cert.inject import CABundleInjector
from dynamo_operator.internal.cert.watch import follow
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import AlreadyExists, ApiError, Conflict, TransportError
from dynamo_operator.internal.client.model import Obj
from dynamo_operator.internal.client.resource import SECRET
from dynamo_operator.internal.clock import Clock, RealClock, Timer
from dynamo_operator.internal.manager import tls

log = structlog.get_logger(__name__)

_RETRY = 2.0
# Even with nothing due, look again this often (a cheap in-memory check; no request).
_MAX_WAIT = 300.0
_UNSEEN = object()


def decode(secret: Obj | None) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for key, value in ((secret or {}).get("data") or {}).items():
        try:
            out[key] = base64.b64decode(str(value), validate=True)
        except (binascii.Error, ValueError):
            continue
    return out


def encode(data: Mapping[str, bytes]) -> dict[str, str]:
    return {k: base64.b64encode(v).decode() for k, v in sorted(data.items())}


class SelfSignedCertificates:
    """See the module docstring. `serving` turns true once the context holds a pair."""

    def __init__(
        self,
        client: Client,
        *,
        namespace: str,
        secret_name: str,
        wanted: state.Wanted,
        context: ssl.SSLContext,
        injector: CABundleInjector | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._client = client
        self.namespace = namespace
        self.secret_name = secret_name
        self.wanted = wanted
        self.context = context
        self.injector = injector
        self._clock: Clock = clock or RealClock()
        self._latest: object = _UNSEEN
        self._kick = asyncio.Event()
        self._loaded: bytes | None = None
        self._timer: Timer | None = None
        self.serving = False
        self.ready = asyncio.Event()  # set with `serving`
        self.writes = 0

    def kick(self) -> None:
        self._kick.set()

    def _trusted(self, ca: x509.Certificate) -> bool:
        return self.injector is None or self.injector.trusts(ca)

    def _seen(self, secret: Obj | None) -> None:
        self._latest = secret
        self._kick.set()

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(
                follow(self._client, SECRET, self.secret_name, self._seen, namespace=self.namespace),
                name="webhook-secret-watch",
            )
            tasks.create_task(self._loop(), name="webhook-certificates")

    async def _loop(self) -> None:
        while True:
            await self._kick.wait()
            self._kick.clear()
            if self._latest is _UNSEEN:
                continue
            try:
                await self._step()
            except (ApiError, TransportError) as err:
                log.warning("Cannot keep the webhook certificate Secret; retrying", error=str(err))
                await asyncio.sleep(_RETRY)
                self._kick.set()
                continue
            self._arm_timer()

    def _arm_timer(self) -> None:
        """Wake at the next deadline of the plan, or sooner while a parked pair waits for the CRDs."""
        data = decode(self._latest)  # type: ignore[arg-type]
        now = self._clock.wall()
        wait = _MAX_WAIT
        if (deadline := state.next_deadline(data, now)) is not None:
            wait = min(wait, max((deadline - now).total_seconds(), 0.0) + 0.05)
        if state.NEXT_CERT in data:
            grace = self.injector.grace if self.injector is not None else 1.0
            wait = min(wait, max(grace / 4, 0.2))
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._clock.call_later(wait, self._kick.set)

    async def _step(self) -> None:
        secret: Obj | None = self._latest  # type: ignore[assignment]
        data = decode(secret)
        new = state.plan(data, self.wanted, self._clock.wall(), self._trusted)
        if new is not None:
            secret = await self._write(secret, new)
            self._latest = secret
            data = decode(secret)
        self._serve(data)

    async def _write(self, secret: Obj | None, data: Mapping[str, bytes]) -> Obj | None:
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": self.secret_name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"},
            },
            "type": "kubernetes.io/tls",
            "data": encode(data),
        }
        try:
            if secret is None:
                written = await self._client.create(SECRET, body)
            else:
                meta = secret.get("metadata") or {}
                body["metadata"] |= {
                    "resourceVersion": meta.get("resourceVersion"),
                    "labels": {**(meta.get("labels") or {}), **body["metadata"]["labels"]},
                }
                written = await self._client.replace(SECRET, body)
        except (AlreadyExists, Conflict):
            # Another replica wrote first: take what it wrote and plan again from there.
            fresh = await self._client.get(SECRET, self.secret_name, namespace=self.namespace)
            log.info("Another replica updated the webhook certificate Secret first; adopting it")
            self._kick.set()
            return fresh
        self.writes += 1
        log.info(
            "Wrote the webhook certificate Secret",
            secret=f"{self.namespace}/{self.secret_name}",
            pending=state.NEXT_CERT in data,
            cas=len(pki.load_certs(data.get(state.CA_BUNDLE, b""))),
        )
        return written

    def _serve(self, data: Mapping[str, bytes]) -> None:
        if self.injector is not None and data.get(state.CA_BUNDLE):
            self.injector.want(data[state.CA_BUNDLE])
        pair = data.get(state.CERT, b"") + b"\0" + data.get(state.KEY, b"")
        if pair == self._loaded or not state.serving(data, self.wanted, self._clock.wall()):
            return
        tls.load_pair(self.context, tls.PemPair(cert=data[state.CERT], key=data[state.KEY]))
        self._loaded = pair
        self.serving = True
        self.ready.set()
        cert = pki.load_certs(data[state.CERT])[0]
        log.info(
            "Serving the webhook certificate from the Secret",
            serial=f"{cert.serial_number:x}",
            not_after=cert.not_valid_after_utc.isoformat(),
            renew_at=pki.renew_at(cert).isoformat(),
        )


def lifetime(seconds: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=seconds)
