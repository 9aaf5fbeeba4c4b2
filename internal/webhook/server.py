"""The conversion webhook's HTTPS server: POST /convert, one ConversionReview per request.

Parsing and converting run in a worker thread, so a review of a thousand objects does not stall the
event loop (Lease renewals, watches, probes). A request body over `max_body_bytes` is refused with 413
before it is read whole; a review not answered within `timeout` is answered with a Failure (the API
server gives up after 30 s anyway, and then fails the request less clearly).

The listening socket sets SO_REUSEPORT: replicas on one host (a local control plane, where no Service
spreads connections) can share one address, and the kernel hands each connection to one of them.
"""

from __future__ import annotations

import asyncio
import ssl

import orjson
import structlog
from aiohttp import web
from dynamo_operator.internal.webhook import review

log = structlog.get_logger(__name__)

PATH = "/convert"
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 25.0
# The API server retries a failed LIST (the garbage collector's, the namespace controller's) about every
# second; one object that cannot be converted would otherwise log a warning each time.
FAILURE_LOG_INTERVAL = 60.0
_FAILURE_LOG_KEYS = 256


class WebhookServer:
    """Start with `start()`; `serving` is true from then until `stop()`; `port` is the bound port."""

    def __init__(
        self,
        convert: review.Converter,
        *,
        host: str,
        port: int,
        ssl_context: ssl.SSLContext | None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
        reuse_port: bool = True,
    ) -> None:
        self._convert = convert
        self._host = host
        self._port = port
        self._ssl_context = ssl_context
        self._timeout = timeout
        self._reuse_port = reuse_port
        app = web.Application(client_max_size=max_body_bytes)
        app.router.add_post(PATH, self._handle)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        self.port: int | None = None
        self.serving = False
        self.reviews = 0
        self.failures = 0
        self._logged: dict[str, tuple[float, int]] = {}  # message -> (last logged, repeats since)

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(
            self._runner,
            self._host,
            self._port,
            ssl_context=self._ssl_context,
            reuse_address=True,
            reuse_port=self._reuse_port,
        )
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # aiohttp exposes the bound sockets only here
        self.port = sockets[0].getsockname()[1] if sockets else self._port
        self.serving = True
        log.info("Serving the conversion webhook", address=f"{self._host}:{self.port}{PATH}")

    async def stop(self) -> None:
        """Stop listening, let requests in flight finish, close the connections; a no-op before start."""
        if self.port is None:
            return
        self.serving = False
        await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.Response:
        if not self.serving:
            # A kept-alive connection can outlive stop(): one whose TLS handshake finished after the
            # connections were closed is still served by aiohttp until its keep-alive runs out (75 s).
            # A stopped webhook converts nothing: refuse, and close the connection after the answer.
            refused = web.Response(status=503, text="the conversion webhook is stopping\n")
            refused.force_close()
            return refused
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            self.failures += 1
            log.warning("Refused a ConversionReview over the size limit", limit=request.app._client_max_size)
            raise
        try:
            parsed = await asyncio.to_thread(review.parse, body)
        except review.BadReview as err:
            self.failures += 1
            return web.Response(status=400, text=f"{err}\n")
        self.reviews += 1
        try:
            answer = await asyncio.wait_for(
                asyncio.to_thread(review.convert_all, parsed, self._convert), self._timeout
            )
        except TimeoutError:
            answer = review.response(
                parsed.uid, error=f"conversion took longer than {self._timeout:g} s; try a smaller page"
            )
        result = answer["response"]["result"]
        if result["status"] != "Success":
            self.failures += 1
            self._log_failure(str(result.get("message")))
        payload = await asyncio.to_thread(orjson.dumps, answer)
        return web.Response(body=payload, content_type="application/json")

    def _log_failure(self, message: str) -> None:
        """A warning per distinct message at most every FAILURE_LOG_INTERVAL, with the repeats between."""
        now = asyncio.get_running_loop().time()
        last, repeats = self._logged.get(message, (None, 0))
        if last is not None and now - last < FAILURE_LOG_INTERVAL:
            self._logged[message] = (last, repeats + 1)
            return
        if len(self._logged) >= _FAILURE_LOG_KEYS and message not in self._logged:
            self._logged.pop(next(iter(self._logged)))
        self._logged[message] = (now, 0)
        log.warning("Conversion failed", message=message, repeats_since_last_logged=repeats)
