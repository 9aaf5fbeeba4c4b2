"""Async Kubernetes REST client over one aiohttp session: raw JSON in, plain dicts out.

Every request goes through `_send`, the single place that adds credentials, records metrics, turns
HTTP failures into typed errors (`errors.py`) and applies the retry policy (`retry.py`). Watches are
streamed as JSON lines and parsed with orjson, one event per line.
"""

from __future__ import annotations

import asyncio
import builtins
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from types import TracebackType
from typing import Any

import aiohttp
import orjson
from dynamo_operator.internal.client import config as cfg
from dynamo_operator.internal.client import metrics
from dynamo_operator.internal.client.codec import VersionCodec
from dynamo_operator.internal.client.errors import ApiError, NotFound, TransportError, error_from_status
from dynamo_operator.internal.client.gate import RequestGate
from dynamo_operator.internal.client.model import ListPage, Obj, PatchType, WatchEvent, WatchEventType
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.client.retry import DEFAULT_RETRY, NO_RETRY, RetryPolicy, retrying

FIELD_MANAGER = "dynamo-operator"
PAGE_SIZE = 500
USER_AGENT = "dynamo-operator/0.1"

# Server-side watch timeouts are spread over [300, 600) s so a fleet of watches does not reconnect
# in lock-step; the client gives up reading a little later, which catches half-open connections
# (apiserver gone without a FIN) that would otherwise hang forever.
WATCH_TIMEOUT_RANGE = (300, 600)
WATCH_READ_MARGIN = 15.0
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 60.0

_WATCH_TYPES: frozenset[str] = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"})


def _resource_label(resource: Resource) -> str:
    return f"{resource.plural}.{resource.group}" if resource.group else resource.plural


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise ValueError("object has no metadata.name")
    return meta


def _with_type(resource: Resource, obj: Obj, *, retype: bool = False) -> Obj:
    """Fill apiVersion/kind (list items come without them); a shallow copy when changed.

    `retype` overwrites them: a PartialObjectMetadata stands for an object of `resource`'s kind.
    """
    if retype:
        return {**obj, "apiVersion": resource.api_version, "kind": resource.kind}
    if "apiVersion" in obj and "kind" in obj:
        return obj
    return {"apiVersion": resource.api_version, "kind": resource.kind, **obj}


def _map_transport(err: BaseException) -> TransportError:
    # Connect-phase failures (refused, unresolvable, TLS handshake) never delivered a byte of the
    # request; everything after that may have reached the server.
    if isinstance(err, aiohttp.ClientConnectorError):
        return TransportError(f"cannot connect: {err}", sent=False)
    if isinstance(err, TimeoutError):
        return TransportError("timed out waiting for the API server", sent=True)
    return TransportError(f"{type(err).__name__}: {err}", sent=True)


_TRANSPORT_ERRORS = (aiohttp.ClientError, TimeoutError, ConnectionError)

# Ask for metadata only (apiVersion, kind, metadata): the server drops spec/status/data before
# sending, which saves bandwidth and decode time for kinds we only map or index (Pods, Secrets).
# Plain JSON stays acceptable so a server without the conversion still answers. Lists and watches
# need different `as=` values: offered the List form, a watch answers with an empty stream.
METADATA_ONLY_LIST_ACCEPT = (
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)
METADATA_ONLY_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


class Client:
    """One connection pool to one API server. Use `async with` or call `close()`."""

    def __init__(
        self,
        config: cfg.ClusterConfig,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        max_connections: int = 256,
        max_in_flight: int | None = None,
        codecs: Mapping[Resource, VersionCodec] | None = None,
    ) -> None:
        self.config = config
        # Resources spoken in another version on the wire than callers use (codec.py).
        self._codecs: dict[Resource, VersionCodec] = dict(codecs or {})
        # Requests (not watches) in flight at once, the rest handed out by priority (gate.py).
        self.gate = RequestGate(max_in_flight)
        self._retry = retry
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------

    @classmethod
    async def from_kubeconfig(
        cls,
        path: str | None = None,
        *,
        context: str | None = None,
        max_in_flight: int | None = None,
        codecs: Mapping[Resource, VersionCodec] | None = None,
    ) -> Client:
        """A client for a kubeconfig (default $KUBECONFIG / ~/.kube/config), else in-cluster."""
        return cls(await cfg.load_default(path, context=context), max_in_flight=max_in_flight, codecs=codecs)

    # -- versions on the wire (codec.py) ---------------------------------------------------------

    def speak(self, codecs: Mapping[Resource, VersionCodec]) -> None:
        """Use `codecs` from now on; called once, before any informer or write (the operator learns
        which versions the API server serves from this very client)."""
        self._codecs = dict(codecs)

    def wire_version(self, resource: Resource) -> str:
        """The apiVersion `resource` is read and written in on the wire (its codec's, else its own)."""
        return self._wire(resource).api_version

    def _wire(self, resource: Resource) -> Resource:
        codec = self._codecs.get(resource)
        return codec.wire if codec is not None else resource

    def _decoded(self, resource: Resource, obj: Obj) -> Obj:
        codec = self._codecs.get(resource)
        if codec is None or obj.get("apiVersion") != codec.wire.api_version:
            return obj
        return codec.decode(obj)

    def to_wire(self, resource: Resource, obj: Obj) -> Obj:
        """`obj` as the API server is to receive it: encoded when `resource` has a codec and `obj` is
        not in the wire version already; else `obj` itself."""
        codec = self._codecs.get(resource)
        if codec is None or obj.get("apiVersion") == codec.wire.api_version:
            return obj
        return codec.encode(_with_type(resource, obj))

    def _http(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("client is closed")
        if self._session is None:
            # Created lazily: aiohttp wants a running loop. Watches each hold one connection,
            # so the pool is sized for many informers plus request traffic.
            connector = aiohttp.TCPConnector(
                ssl=self.config.ssl_context, limit=self._max_connections, enable_cleanup_closed=True
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
                # The watch reader splits lines itself; a large buffer keeps chunk reads cheap.
                read_bufsize=2**21,
            )
        return self._session

    async def close(self) -> None:
        """Close the connection pool; idempotent."""
        self._closed = True
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- the one request path --------------------------------------------------------------------

    async def _headers(
        self, content_type: str | None, accept: str | None, *, refresh: bool = False
    ) -> dict[str, str]:
        headers: dict[str, str] = {"Accept": accept} if accept else {}
        auth = await self.config.credentials.authorization(refresh=refresh)
        if auth:
            headers["Authorization"] = auth
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    async def _open(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        client_timeout: aiohttp.ClientTimeout,
        label: str,
        verb: str,
        accept: str | None = None,
    ) -> aiohttp.ClientResponse:
        """Send once and return a successful response (caller releases it); failures are typed."""
        refreshed = False
        while True:
            started = time.perf_counter()
            try:
                resp = await self._http().request(
                    method,
                    self.config.server + path,
                    params=params,
                    data=body,
                    headers=await self._headers(content_type, accept, refresh=refreshed),
                    timeout=client_timeout,
                    server_hostname=self.config.tls_server_name,
                )
            except _TRANSPORT_ERRORS as err:
                metrics.REQUESTS.labels(metrics.NO_RESPONSE, method, label).inc()
                raise _map_transport(err) from err
            finally:
                metrics.REQUEST_DURATION.labels(verb, label).observe(time.perf_counter() - started)
            metrics.REQUESTS.labels(str(resp.status), method, label).inc()
            if resp.status < 400:
                return resp
            error = await self._error(resp)
            # A rotated token (exec plugin, projected SA token) shows up as a 401: re-read it once.
            if resp.status == 401 and not refreshed:
                refreshed = True
                continue
            raise error

    async def _error(self, resp: aiohttp.ClientResponse) -> ApiError:
        try:
            raw = await resp.read()
        except _TRANSPORT_ERRORS:
            raw = b""
        finally:
            resp.release()
        status: Any = None
        with suppress(orjson.JSONDecodeError):
            status = orjson.loads(raw) if raw else None
        if not isinstance(status, dict) or status.get("kind") != "Status":
            status = None
        return error_from_status(
            resp.status,
            status,
            retry_after=resp.headers.get("Retry-After"),
            date=resp.headers.get("Date"),
            fallback_message=raw[:512].decode(errors="replace") or resp.reason or "",
        )

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
        label: str = "",
        verb: str | None = None,
        idempotent: bool = True,
        accept: str | None = None,
    ) -> Obj:
        """A request with retries; returns the decoded JSON body ({} when empty)."""
        data = orjson.dumps(body) if body is not None else None
        if data is not None and content_type is None:
            content_type = "application/json"
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT, sock_connect=CONNECT_TIMEOUT)
        async for attempt in retrying(
            idempotent=idempotent, policy=self._retry, sleep=self._sleep, rng=self._rng
        ):
            with attempt:
                async with self.gate.slot():
                    resp = await self._open(
                        method,
                        path,
                        params=params,
                        body=data,
                        content_type=content_type,
                        client_timeout=timeout,
                        label=label,
                        verb=verb or method,
                        accept=accept,
                    )
                    try:
                        raw = await resp.read()
                    except _TRANSPORT_ERRORS as err:
                        raise _map_transport(err) from err
                    finally:
                        resp.release()
                decoded: Obj = orjson.loads(raw) if raw else {}
                return decoded
        raise AssertionError("unreachable: tenacity re-raises the last error")

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Obj:
        """Escape hatch for paths without a `Resource` (discovery, `/version`, non-resource URLs)."""
        return await self._send(
            method.upper(),
            path,
            params=params,
            body=body,
            content_type=content_type,
            label="other",
            idempotent=method.upper() != "POST",
        )

    # -- reads -----------------------------------------------------------------------------------

    async def get(
        self, resource: Resource, name: str, *, namespace: str | None = None, subresource: str | None = None
    ) -> Obj:
        """GET one object (or its `status`/`scale` subresource); raises NotFound."""
        wire = self._wire(resource)
        obj = await self._send(
            "GET",
            wire.object_path(name, namespace, subresource),
            label=_resource_label(resource),
        )
        if subresource == "scale":
            return obj
        return self._decoded(resource, _with_type(wire, obj) if not subresource else obj)

    async def list_page(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = PAGE_SIZE,
        continue_token: str | None = None,
        resource_version: str | None = None,
        metadata_only: bool = False,
    ) -> ListPage:
        """One page of a LIST. `resource_version` None/"" is a consistent read from etcd.

        `metadata_only` returns each item as apiVersion, kind and metadata only.
        """
        params: dict[str, str] = {"limit": str(limit)}
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        if continue_token:
            params["continue"] = continue_token
        elif resource_version:
            params["resourceVersion"] = resource_version
        wire = self._wire(resource)
        body = await self._send(
            "GET",
            wire.collection_path(namespace),
            params=params,
            label=_resource_label(resource),
            verb="LIST",
            accept=METADATA_ONLY_LIST_ACCEPT if metadata_only else None,
        )
        meta = body.get("metadata") or {}
        if metadata_only:
            items = [_with_type(resource, item, retype=True) for item in body.get("items") or []]
        else:
            items = [self._decoded(resource, _with_type(wire, item)) for item in body.get("items") or []]
        return ListPage(
            items=items,
            resource_version=str(meta.get("resourceVersion", "")),
            continue_token=meta.get("continue") or None,
        )

    async def list(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> builtins.list[Obj]:
        """Every object, following `continue` tokens page by page (consistent snapshot)."""
        items: builtins.list[Obj] = []
        token: str | None = None
        while True:
            page = await self.list_page(
                resource,
                namespace=namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                continue_token=token,
                metadata_only=metadata_only,
            )
            items.extend(page.items)
            if not (token := page.continue_token):
                return items

    @asynccontextmanager
    async def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        resource_version: str,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[AsyncIterator[WatchEvent]]:
        """Open a watch from `resource_version` with bookmarks; iterate events until the server closes.

        Opening is not retried: the reflector owns backoff. Errors while opening or streaming are
        the same typed errors as elsewhere; an `ERROR` event is yielded as is (a Status object).
        """
        if timeout_seconds is None:
            timeout_seconds = self._rng.randrange(*WATCH_TIMEOUT_RANGE)
        params: dict[str, str] = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        if resource_version:
            params["resourceVersion"] = resource_version
        if label_selector:
            params["labelSelector"] = label_selector
        if field_selector:
            params["fieldSelector"] = field_selector
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=CONNECT_TIMEOUT, sock_read=timeout_seconds + WATCH_READ_MARGIN
        )
        wire = self._wire(resource)
        resp = await self._open(
            "GET",
            wire.collection_path(namespace),
            params=params,
            body=None,
            content_type=None,
            client_timeout=timeout,
            label=_resource_label(resource),
            verb="WATCH",
            accept=METADATA_ONLY_WATCH_ACCEPT if metadata_only else None,
        )
        if metadata_only:
            events = _events(resp, resource, retype=True)
        else:
            # Any codec decodes, also one that keeps the collection and changes only the callers'
            # version (a test's view of a kind the operator reads as stored).
            decode = (lambda obj: self._decoded(resource, obj)) if resource in self._codecs else None
            events = _events(resp, wire, decode=decode)
        try:
            yield events
        finally:
            await events.aclose()
            resp.close()  # an unfinished stream cannot go back to the pool

    async def api_resources(self, group_version: str) -> builtins.list[dict[str, Any]] | None:
        """Discovery for one group/version ("v1", "apps/v1"); None when the server does not serve it."""
        path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        try:
            body = await self._send("GET", path, label="discovery")
        except NotFound:
            return None
        return list(body.get("resources") or [])

    # -- writes ----------------------------------------------------------------------------------

    async def create(self, resource: Resource, obj: Obj) -> Obj:
        """POST a new object into `metadata.namespace`; raises AlreadyExists, Invalid, ..."""
        namespace = (obj.get("metadata") or {}).get("namespace")
        wire = self._wire(resource)
        created = await self._send(
            "POST",
            wire.collection_path(namespace),
            body=self.to_wire(resource, _with_type(resource, obj)),
            label=_resource_label(resource),
            idempotent=False,
        )
        return self._decoded(resource, created)

    async def apply(
        self,
        resource: Resource,
        obj: Obj,
        *,
        field_manager: str = FIELD_MANAGER,
        force: bool = True,
        subresource: str | None = None,
    ) -> Obj:
        """Server-side apply `obj` (the fields we own) under `field_manager`; creates when absent."""
        meta = _meta(obj)
        body = self.to_wire(resource, _with_type(resource, obj))
        if "managedFields" in meta:  # the server rejects an apply that carries managedFields
            body = {**body, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        params = {"fieldManager": field_manager}
        if force:
            params["force"] = "true"
        applied = await self._send(
            "PATCH",
            self._wire(resource).object_path(meta["name"], meta.get("namespace"), subresource),
            params=params,
            body=body,
            content_type=PatchType.APPLY.value,
            label=_resource_label(resource),
            verb="APPLY",
        )
        return self._decoded(resource, applied)

    async def patch(
        self,
        resource: Resource,
        name: str,
        body: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        field_manager: str | None = FIELD_MANAGER,
    ) -> Obj:
        """PATCH with merge (default), JSON or strategic-merge semantics.

        The body goes as it is: for a resource with a codec it must hold in the wire version
        (codec.py); the object returned is decoded.
        """
        params = {"fieldManager": field_manager} if field_manager else None
        patched = await self._send(
            "PATCH",
            self._wire(resource).object_path(name, namespace, subresource),
            params=params,
            body=body,
            content_type=patch_type.value,
            label=_resource_label(resource),
            idempotent=patch_type is not PatchType.JSON,
        )
        return patched if subresource == "scale" else self._decoded(resource, patched)

    async def replace(
        self,
        resource: Resource,
        obj: Obj,
        *,
        subresource: str | None = None,
        field_manager: str | None = FIELD_MANAGER,
    ) -> Obj:
        """PUT the whole object; `metadata.resourceVersion` makes it conditional (else Conflict)."""
        meta = _meta(obj)
        params = {"fieldManager": field_manager} if field_manager else None
        if subresource == "scale":
            return await self._send(
                "PUT",
                self._wire(resource).object_path(meta["name"], meta.get("namespace"), subresource),
                params=params,
                body=obj,
                label=_resource_label(resource),
            )
        replaced = await self._send(
            "PUT",
            self._wire(resource).object_path(meta["name"], meta.get("namespace"), subresource),
            params=params,
            body=self.to_wire(resource, _with_type(resource, obj)),
            label=_resource_label(resource),
        )
        return self._decoded(resource, replaced)

    async def delete(
        self,
        resource: Resource,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = "Background",
        preconditions: Mapping[str, str] | None = None,
    ) -> None:
        """DELETE one object; raises NotFound when it is already gone, Conflict on a failed precondition."""
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if preconditions:
            options["preconditions"] = dict(preconditions)
        await self._send(
            "DELETE",
            self._wire(resource).object_path(name, namespace),
            body=options,
            label=_resource_label(resource),
        )


async def _events(
    resp: aiohttp.ClientResponse,
    resource: Resource,
    *,
    retype: bool = False,
    decode: Callable[[Obj], Obj] | None = None,
) -> AsyncGenerator[WatchEvent, None]:
    """Split the chunked body into lines ourselves (no line-length cap) and decode each one."""
    buffer = bytearray()
    try:
        async for chunk in resp.content.iter_any():
            if b"\n" not in chunk:
                buffer += chunk
                continue
            *lines, rest = chunk.split(b"\n")
            lines[0] = bytes(buffer) + lines[0]
            buffer = bytearray(rest)
            for line in lines:
                if line.strip():
                    yield _decode(line, resource, retype, decode)
    except _TRANSPORT_ERRORS as err:
        raise _map_transport(err) from err
    if buffer.strip():
        yield _decode(buffer, resource, retype, decode)


def _decode(
    line: bytes | bytearray,
    resource: Resource,
    retype: bool = False,
    decode: Callable[[Obj], Obj] | None = None,
) -> WatchEvent:
    raw = orjson.loads(line)
    kind = raw.get("type")
    if kind not in _WATCH_TYPES:
        raise TransportError(f"unexpected watch event type {kind!r}", sent=True)
    event_type: WatchEventType = kind
    obj = raw.get("object") or {}
    if event_type in ("ADDED", "MODIFIED", "DELETED"):
        obj = _with_type(resource, obj, retype=retype)
        if decode is not None:
            obj = decode(obj)
    return WatchEvent(event_type, obj)


__all__ = ["FIELD_MANAGER", "NO_RETRY", "Client", "ListPage", "PatchType", "WatchEvent"]
