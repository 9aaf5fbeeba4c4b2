"""Issuing and reading the conversion webhook's certificates (pure: no I/O, the time is a parameter).

Each issue makes a fresh CA and one serving certificate signed by it, and forgets the CA's private key:
nothing can mint another certificate from what the operator stores. A rotation is therefore a new CA,
and "the bundle" is the set of CA certificates a client should trust (old and new during a rotation).
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The CA's common name starts with this; a CRD's bundle keeps only unexpired CAs of ours (merge_bundle).
CA_NAME_PREFIX = "dynamo-operator-webhook-ca"
# Clients whose clock runs a little behind ours still accept a certificate this old; bounded by a tenth
# of the lifetime so that a short test lifetime is not mostly backdating.
_MAX_BACKDATE = datetime.timedelta(minutes=5)
# Renewal starts at this fraction of a certificate's validity (controller-runtime's cert rotators and
# cert-manager default to two thirds too).
RENEW_FRACTION = 2 / 3


@dataclass(frozen=True, slots=True)
class Issued:
    """A CA certificate and the serving pair it signed, PEM-encoded."""

    ca: bytes
    cert: bytes
    key: bytes


def _backdate(lifetime: datetime.timedelta) -> datetime.timedelta:
    return min(_MAX_BACKDATE, lifetime / 10)


def issue(
    *,
    dns_names: Sequence[str],
    ip_addresses: Sequence[str],
    lifetime: datetime.timedelta,
    now: datetime.datetime,
) -> Issued:
    """A new CA (valid `lifetime`) and a serving certificate for the names, signed by it (same validity)."""
    start = now - _backdate(lifetime)
    end = now + lifetime
    serial = x509.random_serial_number()
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{CA_NAME_PREFIX}-{serial:x}"[:64])])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(serial)
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    alt: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    alt += [x509.IPAddress(ipaddress.ip_address(a)) for a in ip_addresses]
    common = dns_names[0] if dns_names else "dynamo-operator-webhook"
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common[:64])]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Issued(
        ca=ca.public_bytes(serialization.Encoding.PEM),
        cert=leaf.public_bytes(serialization.Encoding.PEM),
        key=key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def load_certs(pem: bytes) -> list[x509.Certificate]:
    """Every certificate in a PEM blob; [] for empty or unreadable input (never raises)."""
    if not pem.strip():
        return []
    try:
        return list(x509.load_pem_x509_certificates(pem))
    except ValueError:
        return []


def to_pem(certs: Iterable[x509.Certificate]) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def fingerprint(cert: x509.Certificate) -> str:
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def renew_at(cert: x509.Certificate) -> datetime.datetime:
    """When renewal of `cert` starts: two thirds into its validity."""
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    return start + (end - start) * RENEW_FRACTION


def force_at(cert: x509.Certificate) -> datetime.datetime:
    """When a pending certificate is served even if not every CRD was seen trusting it: five sixths in,
    so that a broken CRD write never lets the served certificate expire."""
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    return start + (end - start) * (5 / 6)


def is_ours(cert: x509.Certificate) -> bool:
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return bool(names) and str(names[0].value).startswith(CA_NAME_PREFIX)


def valid_at(cert: x509.Certificate, now: datetime.datetime) -> bool:
    return cert.not_valid_before_utc <= now < cert.not_valid_after_utc


def signed_by(leaf: x509.Certificate, ca: x509.Certificate) -> bool:
    if leaf.issuer != ca.subject:
        return False
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def covers(leaf: x509.Certificate, dns_names: Sequence[str], ip_addresses: Sequence[str]) -> bool:
    """Whether `leaf` names every DNS name and IP address asked for."""
    try:
        alt = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    dns = set(alt.get_values_for_type(x509.DNSName))
    ips = {str(a) for a in alt.get_values_for_type(x509.IPAddress)}
    return set(dns_names) <= dns and {str(ipaddress.ip_address(a)) for a in ip_addresses} <= ips


def key_matches(leaf: x509.Certificate, key_pem: bytes) -> bool:
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError):
        return False
    pub = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    return key.public_key().public_bytes(enc, pub) == leaf.public_key().public_bytes(enc, pub)


def merge_bundle(
    wanted: Sequence[x509.Certificate], current: Sequence[x509.Certificate], now: datetime.datetime
) -> list[x509.Certificate]:
    """The bundle a CRD should carry: `wanted` plus any unexpired CA of ours it already carries, without
    expired ones, oldest first (so every replica computes the same bytes).

    Keeping our CAs already there means a replica whose view of the Secret lags one rotation never
    takes the new CA out again; only expiry removes a CA of ours. Anything foreign is replaced.
    """
    seen: dict[str, x509.Certificate] = {}
    for cert in [*wanted, *(c for c in current if is_ours(c))]:
        if cert.not_valid_after_utc > now:
            seen.setdefault(fingerprint(cert), cert)
    return sorted(seen.values(), key=lambda c: (c.not_valid_before_utc, fingerprint(c)))
