"""The probe and metrics endpoints (aiohttp): `/healthz`, `/readyz`, `/metrics`.

Both servers run on leaders and standbys alike, so a standby is visibly alive and ready (its caches
are warm) while not reconciling. Probes are always plain HTTP without authentication (the kubelet
sends no token); the metrics server may serve TLS and filter requests (`metrics_auth.py`).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable, Iterable

import prometheus_client
from aiohttp import web
from aiohttp.typedefs import Middleware
from dynamo_operator.internal.observability.gc_pauses import GcPauses
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import CollectorRegistry

Check = Callable[[], bool]

_process_collectors_registered = False


def register_process_collectors(registry: CollectorRegistry = REGISTRY) -> None:
    """Add the process/platform/GC collectors to `registry` once (dashboards expect them), and the
    collector's pause time (`python_gc_pause_seconds_total`)."""
    global _process_collectors_registered  # noqa: PLW0603 - a registry accepts each collector once
    if _process_collectors_registered:
        return
    prometheus_client.ProcessCollector(registry=registry)
    prometheus_client.PlatformCollector(registry=registry)
    prometheus_client.GCCollector(registry=registry)
    GcPauses(registry).install()
    _process_collectors_registered = True


def parse_bind_address(address: str) -> tuple[str, int] | None:
    """`":8080"` → ("0.0.0.0", 8080), `"127.0.0.1:0"` → ("127.0.0.1", 0); `"0"`/`""` → None (off)."""
    if address in ("", "0"):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address must look like [host]:port, got {address!r}")
    return (host.strip("[]") or "0.0.0.0", int(port))


class Server:
    """One aiohttp site; `port` is the bound port after `start()` (useful with port 0).

    With `cancel_on_disconnect`, a handler whose client hangs up is cancelled (aiohttp's default is
    to let it run on): the secure metrics server needs that, so that a review nobody waits for any
    more stops (`review_cache.py`)."""

    def __init__(
        self,
        app: web.Application,
        *,
        host: str,
        port: int,
        ssl_context: ssl.SSLContext | None = None,
        cancel_on_disconnect: bool = False,
    ) -> None:
        self._runner = web.AppRunner(
            app, access_log=None, handle_signals=False, handler_cancellation=cancel_on_disconnect
        )
        self._host = host
        self._port = port
        self._ssl_context = ssl_context
        self.port: int | None = None

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self._host, self._port, reuse_address=True, ssl_context=self._ssl_context
        )
        await site.start()
        server = site._server  # aiohttp exposes the bound sockets only here
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else self._port

    async def stop(self) -> None:
        await self._runner.cleanup()


def _checks_handler(checks: dict[str, Check], what: str) -> Callable[[web.Request], object]:
    async def handle(request: web.Request) -> web.Response:
        results = {name: _safe(check) for name, check in checks.items()}
        verbose = "verbose" in request.query
        if all(results.values()):
            if not verbose:
                return web.Response(text="ok")
            lines = [f"[+]{name} ok" for name in results]
            return web.Response(text="\n".join([*lines, f"{what} check passed"]))
        lines = [f"[{'+' if ok else '-'}]{name} {'ok' if ok else 'failed'}" for name, ok in results.items()]
        return web.Response(status=500, text="\n".join([*lines, f"{what} check failed"]))

    return handle


def _safe(check: Check) -> bool:
    try:
        return bool(check())
    except Exception:
        return False


def probes_app(*, healthz: dict[str, Check], readyz: dict[str, Check]) -> web.Application:
    """`/healthz` and `/readyz`: 200 `ok` when every check passes, else 500 listing each check."""
    app = web.Application()
    app.router.add_get("/healthz", _checks_handler(healthz, "healthz"))  # type: ignore[arg-type]
    app.router.add_get("/readyz", _checks_handler(readyz, "readyz"))  # type: ignore[arg-type]
    return app


def metrics_app(
    registry: CollectorRegistry = REGISTRY, *, middlewares: Iterable[Middleware] = ()
) -> web.Application:
    """`/metrics`: the Prometheus text format of `registry`; `middlewares` see every request first."""

    async def handle(_: web.Request) -> web.Response:
        body = prometheus_client.generate_latest(registry)
        return web.Response(body=body, headers={"Content-Type": prometheus_client.CONTENT_TYPE_LATEST})

    app = web.Application(middlewares=list(middlewares))
    app.router.add_get("/metrics", handle)
    return app
