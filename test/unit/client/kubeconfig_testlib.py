"""Kubeconfig test kit: files in tmp_path, self-signed certificates, exec plugins, a mutual-TLS probe."""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import json
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

SERVER = "https://127.0.0.1:6443"


@dataclass(frozen=True)
class Pair:
    """A self-signed certificate and its key, PEM, also written to files."""

    cn: str
    cert_pem: bytes
    key_pem: bytes
    cert_file: Path
    key_file: Path

    @property
    def cert_b64(self) -> str:
        return base64.b64encode(self.cert_pem).decode()

    @property
    def key_b64(self) -> str:
        return base64.b64encode(self.key_pem).decode()


def make_pair(directory: Path, cn: str, *, ip: str | None = None, dns: str | None = None) -> Pair:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    )
    sans: list[x509.GeneralName] = []
    if ip:
        sans.append(x509.IPAddress(ipaddress.ip_address(ip)))
    if dns:
        sans.append(x509.DNSName(dns))
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    cert = builder.sign(key, hashes.SHA256())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = directory / f"{cn}.crt", directory / f"{cn}.key"
    cert_file.write_bytes(cert_pem)
    key_file.write_bytes(key_pem)
    return Pair(cn, cert_pem, key_pem, cert_file, key_file)


def kubeconfig_doc(
    *,
    cluster: dict[str, Any] | None = None,
    user: dict[str, Any] | None = None,
    cluster_name: str = "c",
    user_name: str = "u",
    context_name: str = "ctx",
    current: str | None = "ctx",
) -> dict[str, Any]:
    """One cluster, one user, one context; `user=None` leaves the context without a user."""
    context: dict[str, Any] = {"cluster": cluster_name}
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name, "cluster": cluster or {"server": SERVER}}],
        "contexts": [{"name": context_name, "context": context}],
    }
    if user is not None:
        context["user"] = user_name
        doc["users"] = [{"name": user_name, "user": user}]
    if current is not None:
        doc["current-context"] = current
    return doc


def write(path: Path, doc: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def write_kubeconfig(path: Path, user: dict[str, Any] | None, **cluster: Any) -> str:
    """A kubeconfig with `user` and a cluster at SERVER (extra cluster fields as keywords)."""
    return write(path, kubeconfig_doc(cluster={"server": SERVER, **cluster}, user=user))


@dataclass(frozen=True)
class Plugin:
    """A Python exec plugin; each run appends its KUBERNETES_EXEC_INFO, argv and env to `log`."""

    command: str
    log: Path

    def runs(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def spec(self, api_version: str = "client.authentication.k8s.io/v1", **extra: Any) -> dict[str, Any]:
        return {"apiVersion": api_version, "command": self.command, **extra}


PLUGIN_SOURCE = """\
import json, os, sys
log, status, api_version = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
with open(log, "a") as f:
    f.write(json.dumps({"info": json.loads(os.environ["KUBERNETES_EXEC_INFO"]), "argv": sys.argv[4:],
                        "env": {k: v for k, v in os.environ.items() if k.startswith("PLUGIN_")}}) + "\\n")
n = len(open(log).read().splitlines())
if "token" in status:
    status["token"] = status["token"].replace("{n}", str(n))
print(json.dumps({"apiVersion": api_version, "kind": "ExecCredential", "status": status}))
"""


def stamp(delta: datetime.timedelta) -> str:
    return (datetime.datetime.now(datetime.UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


async def client_cn_seen_by_server(client_ctx: ssl.SSLContext, certs: dict[str, Pair]) -> str:
    """Do a mutual-TLS handshake on loopback; return the CN of the client certificate the server got.

    The server trusts `client` and `other` as client CAs; a handshake without a certificate fails.
    """
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(certs["server"].cert_file, certs["server"].key_file)
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    server_ctx.load_verify_locations(cadata=(certs["client"].cert_pem + certs["other"].cert_pem).decode())

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert") or {}
        cn = next((v for rdn in peer.get("subject", ()) for k, v in rdn if k == "commonName"), "")
        writer.write(cn.encode() + b"\n")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        async with asyncio.timeout(10):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=client_ctx, server_hostname="127.0.0.1"
            )
            line = await reader.readline()
            writer.close()
        return line.decode().strip()
    finally:
        server.close()
