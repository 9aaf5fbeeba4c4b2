"""Where the API server is and how to authenticate: kubeconfig or the pod's service account.

The operator reads kubeconfig files itself (`kubeconfig.py`: merging and context selection;
`execplugin.py`: credential plugins) instead of borrowing kubernetes_asyncio's loaders: importing
`kubernetes_asyncio.config` pulls in every generated API model, about 38 MB of resident memory that
the operator never used (issue #13). The package stays in pyproject's fixed dependency list, but an
import-linter contract keeps it (and `kubernetes`) out of `dynamo_operator`.

Every request goes through our own aiohttp session with the `ClusterConfig` built here. Bearer
tokens that can change under us (exec plugin output, `tokenFile`, the projected service-account
token) are re-read by `Credentials`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import ssl
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from dynamo_operator.internal.client import kubeconfig
from dynamo_operator.internal.client.execplugin import ExecCredentials, ExecPlugin
from dynamo_operator.internal.client.kubeconfig import ConfigError

__all__ = [
    "ClusterConfig",
    "ConfigError",
    "Credentials",
    "RefreshingCredentials",
    "StaticCredentials",
    "load_default",
    "load_incluster",
    "load_kubeconfig",
]

# Service-account tokens are rotated by the kubelet well ahead of expiry; client-go re-reads them
# about every minute, so a rotated token is picked up long before the old one stops working.
TOKEN_REFRESH_SECONDS = 60.0

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
SERVICE_TOKEN_PATH = str(SERVICE_ACCOUNT_DIR / "token")
SERVICE_CA_PATH = str(SERVICE_ACCOUNT_DIR / "ca.crt")

# ssl can only load a client key from a file. Key material from the kubeconfig or a plugin is written
# to a private directory for the one call and removed at once; /dev/shm keeps it off disk and is
# writable even when the container's root filesystem is read-only.
_KEY_SCRATCH_DIR = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


class Credentials(Protocol):
    """Supplies the `Authorization` header value; `refresh=True` after a 401 forces a re-read."""

    async def authorization(self, *, refresh: bool = False) -> str | None: ...


@dataclass
class StaticCredentials:
    """A fixed header value (or none: client certificates only, or anonymous)."""

    value: str | None

    async def authorization(self, *, refresh: bool = False) -> str | None:
        return self.value


@dataclass
class RefreshingCredentials:
    """Re-runs `reload` (token file) at most every TOKEN_REFRESH_SECONDS, or on demand."""

    reload: Callable[[], Awaitable[str | None]]
    value: str | None = None
    loaded_at: float = field(default=float("-inf"))
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def authorization(self, *, refresh: bool = False) -> str | None:
        asked_at = time.monotonic()
        if refresh or asked_at - self.loaded_at >= TOKEN_REFRESH_SECONDS:
            async with self._lock:
                # Concurrent 401s share one re-read: skip it if one finished while we waited.
                forced = refresh and self.loaded_at < asked_at
                if forced or time.monotonic() - self.loaded_at >= TOKEN_REFRESH_SECONDS:
                    self.value = await self.reload()
                    self.loaded_at = time.monotonic()
        return self.value


@dataclass
class ClusterConfig:
    """Everything the client needs to reach one API server."""

    server: str  # https://host:port, no trailing slash
    ssl_context: ssl.SSLContext | bool  # False: plain http; an https context may skip verification
    credentials: Credentials
    tls_server_name: str | None = None


# -- kubeconfig ------------------------------------------------------------------------------------


async def load_kubeconfig(path: str | None = None, *, context: str | None = None) -> ClusterConfig:
    """Load a kubeconfig (default: $KUBECONFIG, a list of files, or ~/.kube/config).

    An exec plugin is run once here, so a missing command or bad output fails at start-up and
    client certificates it returns are in the TLS context before the first connection.
    """
    paths, all_required = kubeconfig.candidate_paths(path)
    selection = kubeconfig.load(paths, all_required=all_required).select(context)
    cluster, user = selection.cluster, selection.user
    where_cluster = f"cluster {selection.cluster_name!r}"
    where_user = f"user {selection.user_name!r}"

    ca = _pem_or_file(cluster, "certificate-authority", where_cluster)
    insecure = cluster.get("insecure-skip-tls-verify") is True
    if insecure and ca is not None:
        # client-go refuses this too: a CA that is never checked is a misconfiguration.
        raise ConfigError(f"{where_cluster}: certificate-authority and insecure-skip-tls-verify are both set")
    server = _server_url(cluster, where_cluster, tls_hinted=insecure or ca is not None or _has_cert(user))
    ctx: ssl.SSLContext | bool = False
    if server.startswith("https://"):
        ctx = _tls_context(ca, insecure=insecure, where=where_cluster)
        cert = _pem_or_file(user, "client-certificate", where_user)
        key = _pem_or_file(user, "client-key", where_user)
        if (cert is None) != (key is None):
            raise ConfigError(f"{where_user}: client-certificate and client-key must be given together")
        if cert is not None and key is not None:
            _load_client_certificate(ctx, cert, key, where=where_user)

    credentials = await _credentials(selection, ctx, ca)
    tls_server_name = cluster.get("tls-server-name") or None
    return ClusterConfig(
        server=server, ssl_context=ctx, credentials=credentials, tls_server_name=tls_server_name
    )


async def _credentials(
    selection: kubeconfig.Selection, ctx: ssl.SSLContext | bool, ca: bytes | None
) -> Credentials:
    """The Authorization source; token beats basic auth beats exec, as in client-go's transport."""
    user, where = selection.user, f"user {selection.user_name!r}"
    if "auth-provider" in user:
        provider = (user.get("auth-provider") or {}).get("name", "?")
        raise ConfigError(
            f"{where}: auth-provider {provider!r} is not supported; use an exec credential plugin"
            " (client.authentication.k8s.io/v1) instead, e.g. kubelogin or gke-gcloud-auth-plugin"
        )
    token, token_file = user.get("token"), user.get("tokenFile")
    username, password = user.get("username"), user.get("password")
    if (token or token_file) and (username or password):
        raise ConfigError(f"{where}: both a token and a username/password are set; only one is allowed")
    if token_file:
        path = str(token_file)

        async def reload() -> str | None:
            return "Bearer " + _read_token(path, where)

        # client-go reads the file, even when `token` is also set, and keeps re-reading it.
        return RefreshingCredentials(reload, value=await reload(), loaded_at=time.monotonic())
    if token:
        return StaticCredentials(f"Bearer {token}")
    if username or password:
        pair = f"{username or ''}:{password or ''}".encode()
        return StaticCredentials("Basic " + base64.b64encode(pair).decode())
    if "exec" in user:
        spec = user["exec"]
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where}: exec is not a mapping")
        plugin = ExecPlugin.from_kubeconfig(selection.user_name, spec, cluster=selection.cluster, ca_data=ca)
        on_certificate = None
        if isinstance(ctx, ssl.SSLContext):
            tls = ctx

            def on_certificate(cert: str, key: str) -> None:
                _load_client_certificate(tls, cert.encode(), key.encode(), where=f"{where} (exec plugin)")

        creds = ExecCredentials(plugin, on_certificate=on_certificate)
        await creds.authorization()
        return creds
    return StaticCredentials(None)


def _server_url(cluster: Mapping[str, Any], where: str, *, tls_hinted: bool) -> str:
    server = cluster.get("server")
    if not isinstance(server, str) or not server:
        raise ConfigError(f"{where} has no server")
    if "://" not in server:
        # client-go's rule for a bare host:port: https when any TLS setting is present.
        server = ("https://" if tls_hinted else "http://") + server
    if not server.startswith(("https://", "http://")):
        raise ConfigError(f"{where}: server {server!r} is neither http nor https")
    return server.rstrip("/")


def _has_cert(user: Mapping[str, Any]) -> bool:
    return bool(user.get("client-certificate") or user.get("client-certificate-data"))


def _pem_or_file(section: Mapping[str, Any], key: str, where: str) -> bytes | None:
    """`<key>-data` (base64) or the file named by `<key>`; setting both is an error, as in client-go."""
    data, path = section.get(f"{key}-data"), section.get(key)
    if data and path:
        raise ConfigError(f"{where}: both {key} and {key}-data are set; use one")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError(f"{where}: {key}-data is not valid base64") from None
    if path:
        try:
            return Path(str(path)).read_bytes()
        except OSError as err:
            raise ConfigError(f"{where}: {key} {path} cannot be read: {err.strerror or err}") from None
    return None


def _tls_context(ca: bytes | None, *, insecure: bool, where: str) -> ssl.SSLContext:
    try:
        ctx = ssl.create_default_context(cadata=_cadata(ca) if ca is not None else None)
    except (ssl.SSLError, ValueError) as err:
        raise ConfigError(f"{where}: certificate authority is not a usable certificate: {err}") from err
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def _cadata(ca: bytes) -> str | bytes:
    # ssl takes PEM as text and DER as bytes; kubeconfigs almost always carry PEM.
    return ca.decode("ascii", errors="replace") if b"-----BEGIN" in ca else ca


def _load_client_certificate(ctx: ssl.SSLContext, cert: bytes, key: bytes, *, where: str) -> None:
    """Load a PEM certificate+key pair from memory into `ctx` (via files that exist only meanwhile)."""
    with tempfile.TemporaryDirectory(prefix="dynamo-operator-tls-", dir=_KEY_SCRATCH_DIR) as scratch:
        cert_path, key_path = os.path.join(scratch, "tls.crt"), os.path.join(scratch, "tls.key")
        for path, content in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(content)
        try:
            ctx.load_cert_chain(cert_path, key_path)
        except ssl.SSLError as err:
            raise ConfigError(f"{where}: client certificate and key are not a usable pair: {err}") from err


def _read_token(path: str, where: str) -> str:
    try:
        token = Path(path).read_text().strip()
    except OSError as err:
        raise ConfigError(f"{where}: token file {path} cannot be read: {err.strerror or err}") from None
    if not token:
        raise ConfigError(f"{where}: token file {path} is empty")
    return token


# -- in-cluster ------------------------------------------------------------------------------------


def load_incluster(*, token_path: str = SERVICE_TOKEN_PATH, ca_path: str = SERVICE_CA_PATH) -> ClusterConfig:
    """Load the pod's service-account config; the projected token is re-read every minute."""
    host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError(
            "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"
            " (and no kubeconfig was found)"
        )
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    where = "service account"
    token = _read_token(token_path, where)
    try:
        ca = Path(ca_path).read_bytes()
    except OSError as err:
        raise ConfigError(f"{where}: CA file {ca_path} cannot be read: {err.strerror or err}") from None

    async def reload() -> str | None:
        return "Bearer " + _read_token(token_path, where)  # a tiny local file, read once a minute

    return ClusterConfig(
        server=f"https://{host}:{port}",
        ssl_context=_tls_context(ca, insecure=False, where=f"{where} CA file {ca_path}"),
        credentials=RefreshingCredentials(reload, value=f"Bearer {token}", loaded_at=time.monotonic()),
    )


async def load_default(path: str | None = None, *, context: str | None = None) -> ClusterConfig:
    """Kubeconfig when one is given or found ($KUBECONFIG, ~/.kube/config), else in-cluster."""
    no_kubeconfig = path is None and not os.environ.get("KUBECONFIG")
    if no_kubeconfig and not kubeconfig.DEFAULT_PATH.expanduser().exists():
        return load_incluster()
    return await load_kubeconfig(path, context=context)
