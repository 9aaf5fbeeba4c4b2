"""HTTP client for the LoRA API of serving pods (`POST /v1/loras`, `DELETE /v1/loras/<name>`).

Besides internal/client this is the only place the operator speaks HTTP, and it talks to pods, not
the API server: every call is bounded (10 in flight, 15 s per request, 30 s per batch) so a hung or
unroutable pod delays one reconcile by at most the batch timeout and never wedges a worker.
Results come back in input order; a request that did not finish in time counts as failed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import aiohttp
from dynamo_operator.internal.dynamo.dynamomodel import lora
from dynamo_operator.internal.dynamo.dynamomodel.status import LoadResult

MAX_IN_FLIGHT = 10
REQUEST_TIMEOUT = 15.0
BATCH_TIMEOUT = 30.0
# Error bodies are for humans reading an Event; keep them short.
BODY_LIMIT = 256


class LoraApi(Protocol):
    """What the DynamoModel reconciler needs from the pods."""

    async def load(
        self, addresses: Sequence[str], *, lora_name: str, source_uri: str
    ) -> list[LoadResult]: ...
    async def unload(self, addresses: Sequence[str], *, lora_name: str) -> list[LoadResult]: ...


@dataclass(frozen=True, slots=True)
class Limits:
    max_in_flight: int = MAX_IN_FLIGHT
    request_timeout: float = REQUEST_TIMEOUT
    batch_timeout: float = BATCH_TIMEOUT


class LoraClient:
    """One aiohttp session (opened lazily, closed by `close()`), shared by all reconciles."""

    def __init__(self, *, limits: Limits | None = None) -> None:
        self._limits = limits or Limits()
        self._session: aiohttp.ClientSession | None = None
        # One semaphore for the whole process: the bound holds across concurrent reconciles too.
        self._slots = asyncio.Semaphore(self._limits.max_in_flight)

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self._limits.request_timeout),
                # Pods come and go with new IPs: no keep-alive pool of dead sockets, no env proxies.
                connector=aiohttp.TCPConnector(force_close=True),
                trust_env=False,
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def load(self, addresses: Sequence[str], *, lora_name: str, source_uri: str) -> list[LoadResult]:
        """POST the adapter to every address; ok = 2xx."""
        body = lora.load_body(lora_name, source_uri)
        return await self._batch([("POST", lora.load_url(a), body) for a in addresses])

    async def unload(self, addresses: Sequence[str], *, lora_name: str) -> list[LoadResult]:
        """DELETE the adapter from every address; ok = 2xx."""
        return await self._batch([("DELETE", lora.unload_url(a, lora_name), None) for a in addresses])

    async def _batch(self, calls: Sequence[tuple[str, str, object]]) -> list[LoadResult]:
        tasks = [asyncio.create_task(self._one(method, url, body)) for method, url, body in calls]
        if not tasks:
            return []
        done, pending = await asyncio.wait(tasks, timeout=self._limits.batch_timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return [
            t.result()
            if t in done
            else LoadResult(False, f"no answer within {self._limits.batch_timeout:g}s")
            for t in tasks
        ]

    async def _one(self, method: str, url: str, body: object) -> LoadResult:
        async with self._slots:
            try:
                async with self._http().request(method, url, json=body) as resp:
                    if lora.is_success(resp.status):
                        return LoadResult(True)
                    text = (await resp.text(errors="replace"))[:BODY_LIMIT]
                    return LoadResult(False, f"{method} {url}: HTTP {resp.status}: {text}")
            except TimeoutError:
                return LoadResult(False, f"{method} {url}: timed out after {self._limits.request_timeout:g}s")
            except aiohttp.ClientError as err:
                return LoadResult(False, f"{method} {url}: {type(err).__name__}: {err}")
