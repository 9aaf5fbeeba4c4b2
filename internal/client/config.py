"""Where the API server is and how to authenticate, loaded by kubernetes_asyncio's config loaders.

We only borrow the loaders (kubeconfig merging, exec plugins, in-cluster service account); every
request then goes through our own aiohttp session. Bearer tokens that can change under us (exec
plugin output, `tokenFile`, the projected service-account token) are re-read by `Credentials`.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from kubernetes_asyncio.client import Configuration
from kubernetes_asyncio.config import incluster_config, kube_config

# Service-account tokens are rotated by the kubelet well ahead of expiry; client-go re-reads them
# about every minute, so a rotated token is picked up long before the old one stops working.
TOKEN_REFRESH_SECONDS = 60.0


class Credentials(Protocol):
    """Supplies the `Authorization` header value; `refresh=True` after a 401 forces a re-read."""

    async def authorization(self, *, refresh: bool = False) -> str | None: ...


@dataclass
class StaticCredentials:
    """A fixed header value (or none: client certificates only)."""

    value: str | None

    async def authorization(self, *, refresh: bool = False) -> str | None:
        return self.value


@dataclass
class RefreshingCredentials:
    """Re-runs `reload` (exec plugin / token file) at most every TOKEN_REFRESH_SECONDS, or on demand."""

    reload: Any  # async () -> str | None
    value: str | None = None
    loaded_at: float = field(default=float("-inf"))
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def authorization(self, *, refresh: bool = False) -> str | None:
        if refresh or time.monotonic() - self.loaded_at >= TOKEN_REFRESH_SECONDS:
            async with self._lock:
                if refresh or time.monotonic() - self.loaded_at >= TOKEN_REFRESH_SECONDS:
                    self.value = await self.reload()
                    self.loaded_at = time.monotonic()
        return self.value


@dataclass
class ClusterConfig:
    """Everything the client needs to reach one API server."""

    server: str  # https://host:port, no trailing slash
    ssl_context: ssl.SSLContext | bool  # False: TLS verification disabled (insecure-skip-tls-verify)
    credentials: Credentials
    tls_server_name: str | None = None


def _ssl_context(cfg: Configuration) -> ssl.SSLContext | bool:
    if not str(cfg.host).startswith("https"):
        return False
    ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert or None)
    if not cfg.verify_ssl:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if cfg.cert_file:
        ctx.load_cert_chain(cfg.cert_file, cfg.key_file)
    return ctx


def _bearer(cfg: Configuration) -> str | None:
    value = cfg.api_key.get("BearerToken") if cfg.api_key else None
    return str(value) if value else None


async def load_kubeconfig(path: str | None = None, *, context: str | None = None) -> ClusterConfig:
    """Load a kubeconfig file (default: $KUBECONFIG or ~/.kube/config)."""
    cfg = Configuration()
    loader = await kube_config.load_kube_config(
        config_file=path, context=context, client_configuration=cfg, persist_config=False
    )
    user = loader._user  # the loader keeps the selected user section private; we only read it
    credentials: Credentials
    if user is not None and ("exec" in user or "tokenFile" in user):

        async def reload() -> str | None:
            if "exec" in user:
                await loader.load_from_exec_plugin()  # re-runs the plugin only once expired
            else:
                loader._load_user_token()  # re-reads tokenFile
            token = getattr(loader, "token", None)
            return str(token) if token else None

        credentials = RefreshingCredentials(reload, value=_bearer(cfg), loaded_at=time.monotonic())
    else:
        credentials = StaticCredentials(_bearer(cfg))
    return ClusterConfig(
        server=str(cfg.host).rstrip("/"),
        ssl_context=_ssl_context(cfg),
        credentials=credentials,
        tls_server_name=getattr(cfg, "tls_server_name", None),
    )


def load_incluster(
    *,
    token_path: str = incluster_config.SERVICE_TOKEN_FILENAME,
    ca_path: str = incluster_config.SERVICE_CERT_FILENAME,
) -> ClusterConfig:
    """Load the pod's service-account config; the projected token is re-read every minute."""
    cfg = Configuration()
    incluster_config.InClusterConfigLoader(
        token_filename=token_path, cert_filename=ca_path, try_refresh_token=False
    ).load_and_set(cfg)

    async def reload() -> str | None:
        with open(token_path) as f:  # noqa: ASYNC230 - a tiny local file, read once a minute
            return "Bearer " + f.read().strip()

    return ClusterConfig(
        server=str(cfg.host).rstrip("/"),
        ssl_context=_ssl_context(cfg),
        credentials=RefreshingCredentials(reload, value=_bearer(cfg), loaded_at=time.monotonic()),
    )


async def load_default(path: str | None = None, *, context: str | None = None) -> ClusterConfig:
    """Kubeconfig when one is given or found ($KUBECONFIG, ~/.kube/config), else in-cluster."""
    if path is None:
        path = os.environ.get("KUBECONFIG") or None
    if path is None:
        default = os.path.expanduser(kube_config.KUBE_CONFIG_DEFAULT_LOCATION)  # noqa: ASYNC240
        if not os.path.exists(default):  # noqa: ASYNC240 - one stat at start-up
            return load_incluster()
    return await load_kubeconfig(path, context=context)
