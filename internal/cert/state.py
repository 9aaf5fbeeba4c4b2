"""What the webhook Secret should hold next (pure: the Secret's data and the time in, new data out).

The Secret (type kubernetes.io/tls) holds:
  ca.crt             the CA bundle clients must trust (every unexpired CA we issued that is still in use)
  tls.crt, tls.key   the pair every replica serves
  next.crt, next.key a pair issued for a rotation and not served yet (its CA is already in ca.crt)

A rotation without a failed conversion is two writes:
  1. at two thirds of the served certificate's validity: issue a new CA and pair; add the CA to the
     bundle and park the pair under next.*. Replicas keep serving the old pair, the CRDs get the
     bundle old+new.
  2. once every CRD has carried the new CA for a grace period (`trusted` says so), or at five sixths
     of the validity whatever the CRDs say: the parked pair becomes tls.*. Clients trust both CAs, so
     replicas may switch in any order.
The old CA stays in the bundle until it expires (connections opened before the switch keep its
certificate), then any write drops it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from cryptography import x509
from dynamo_operator.internal.cert import pki

CA_BUNDLE = "ca.crt"
CERT = "tls.crt"
KEY = "tls.key"
NEXT_CERT = "next.crt"
NEXT_KEY = "next.key"

Trusted = Callable[[x509.Certificate], bool]


@dataclass(frozen=True, slots=True)
class Wanted:
    """What the serving certificate must name, and how long each issue lasts."""

    dns_names: tuple[str, ...]
    ip_addresses: tuple[str, ...]
    lifetime: datetime.timedelta


def service_names(service: str, namespace: str) -> tuple[str, ...]:
    """The names the API server may check: `<service>.<ns>.svc` (what it dials for a service
    reference), the cluster-local form, and localhost for a loopback URL."""
    return (f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local", "localhost")


@dataclass(frozen=True, slots=True)
class Parsed:
    bundle: list[x509.Certificate]
    cert: x509.Certificate | None
    key: bytes
    next_cert: x509.Certificate | None
    next_key: bytes

    @classmethod
    def of(cls, data: Mapping[str, bytes]) -> Parsed:
        certs = pki.load_certs(data.get(CERT, b""))
        nexts = pki.load_certs(data.get(NEXT_CERT, b""))
        return cls(
            bundle=pki.load_certs(data.get(CA_BUNDLE, b"")),
            cert=certs[0] if certs else None,
            key=data.get(KEY, b""),
            next_cert=nexts[0] if nexts else None,
            next_key=data.get(NEXT_KEY, b""),
        )


def signer(leaf: x509.Certificate, bundle: Sequence[x509.Certificate]) -> x509.Certificate | None:
    return next((ca for ca in bundle if pki.signed_by(leaf, ca)), None)


def usable(
    leaf: x509.Certificate | None,
    key: bytes,
    bundle: Sequence[x509.Certificate],
    wanted: Wanted,
    now: datetime.datetime,
) -> bool:
    """A pair the webhook can serve now: valid, naming what is wanted, its key, a CA of the bundle."""
    if leaf is None or not pki.valid_at(leaf, now) or not pki.key_matches(leaf, key):
        return False
    if not pki.covers(leaf, wanted.dns_names, wanted.ip_addresses):
        return False
    ca = signer(leaf, bundle)
    return ca is not None and pki.valid_at(ca, now)


def serving(data: Mapping[str, bytes], wanted: Wanted, now: datetime.datetime) -> bool:
    parsed = Parsed.of(data)
    return usable(parsed.cert, parsed.key, parsed.bundle, wanted, now)


def _issue(wanted: Wanted, now: datetime.datetime) -> pki.Issued:
    return pki.issue(
        dns_names=wanted.dns_names, ip_addresses=wanted.ip_addresses, lifetime=wanted.lifetime, now=now
    )


def _unexpired(certs: Sequence[x509.Certificate], now: datetime.datetime) -> list[x509.Certificate]:
    return [c for c in certs if c.not_valid_after_utc > now]


def plan(
    data: Mapping[str, bytes], wanted: Wanted, now: datetime.datetime, trusted: Trusted
) -> dict[str, bytes] | None:
    """The Secret's next data, or None when it is right as it is."""
    parsed = Parsed.of(data)
    if not usable(parsed.cert, parsed.key, parsed.bundle, wanted, now):
        # Nothing servable (first start, damaged, expired, names changed): start over. Conversions can
        # fail until the CRDs carry the new CA, which cannot be helped without a valid pair.
        fresh = _issue(wanted, now)
        return {CA_BUNDLE: fresh.ca, CERT: fresh.cert, KEY: fresh.key}
    assert parsed.cert is not None
    bundle = _unexpired(parsed.bundle, now)
    cert, key = parsed.cert, parsed.key
    next_cert: x509.Certificate | None = None
    next_key = b""
    if usable(parsed.next_cert, parsed.next_key, bundle, wanted, now):
        assert parsed.next_cert is not None
        ca = signer(parsed.next_cert, bundle)
        assert ca is not None
        if trusted(ca) or now >= pki.force_at(cert):
            cert, key = parsed.next_cert, parsed.next_key
        else:
            next_cert, next_key = parsed.next_cert, parsed.next_key
    elif now >= pki.renew_at(cert):
        fresh = _issue(wanted, now)
        bundle.extend(pki.load_certs(fresh.ca))
        next_cert, next_key = pki.load_certs(fresh.cert)[0], fresh.key
    out = {CA_BUNDLE: pki.to_pem(bundle), CERT: pki.to_pem([cert]), KEY: key}
    if next_cert is not None:
        out |= {NEXT_CERT: pki.to_pem([next_cert]), NEXT_KEY: next_key}
    return None if out == dict(data) else out


def next_deadline(data: Mapping[str, bytes], now: datetime.datetime) -> datetime.datetime | None:
    """The next moment `plan` could change its answer without any event: a renewal, a forced switch,
    or a CA's expiry."""
    parsed = Parsed.of(data)
    if parsed.cert is None:
        return None
    times = [pki.renew_at(parsed.cert), pki.force_at(parsed.cert), parsed.cert.not_valid_after_utc]
    times += [ca.not_valid_after_utc for ca in parsed.bundle]
    future = [t for t in times if t > now]
    return min(future) if future else None
