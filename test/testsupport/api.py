"""The `api` fixture: our own async `Client` on the test cluster's admin kubeconfig.

Import it into a conftest (`from testsupport.api import api  # noqa: F401`). One client per test
session, on the session event loop, closed at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import NAMESPACE, Resource

import testsupport
from testsupport.cluster import TEST_NAMESPACE_LABEL
from testsupport.dcd_view import alpha_view

T = TypeVar("T")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def api(cluster: Any) -> AsyncIterator[Client]:
    """A `Client` for the cluster of the `cluster` fixture (admin credentials)."""
    client = await Client.from_kubeconfig(str(cluster.kubeconfig), codecs=alpha_view())
    try:
        yield client
    finally:
        await client.close()


async def eventually(
    probe: Callable[[], Awaitable[T] | T],
    *,
    until: Callable[[T], bool] = bool,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling bound, not a cancellation scope
    interval: float = 0.1,
) -> T:
    """`testsupport.eventually` with a truthiness default: None, [] and 0 mean "not yet"."""
    return await testsupport.eventually(probe, until=until, timeout=timeout, interval=interval)


async def only_this_test_namespace_left(api: Client, ns: str) -> None:
    """Wait until every other test namespace is gone: their teardown (Secrets and objects vanishing
    in some order, which the operator rightly reacts to) is change, not a lack of quiet."""
    await eventually(
        lambda: api.list(NAMESPACE, label_selector=TEST_NAMESPACE_LABEL),
        until=lambda xs: [x["metadata"]["name"] for x in xs] == [ns],
        timeout=180,
        interval=1.0,
    )


@contextlib.asynccontextmanager
async def recording(
    api: Client,
    resource: Resource,
    namespace: str,
    *,
    keep: Callable[[str, dict[str, Any]], Any] = lambda _type, obj: obj,
    types: Sequence[str] = ("ADDED", "MODIFIED", "DELETED"),
    listed: bool = True,
) -> AsyncIterator[list[Any]]:
    """`keep(event type, object)` for every version of every `resource` object in `namespace` a watch
    sees while the block runs (a watch misses no intermediate state, unlike polling), in its order:
    first each object listed at the start (type "LISTED", unless `listed` is false), then each event
    of `types`."""
    seen: list[Any] = []
    page = await api.list_page(resource, namespace=namespace)
    if listed:
        seen += [keep("LISTED", o) for o in page.items]

    async def follow() -> None:
        rv = page.resource_version
        while True:
            async with api.watch(
                resource, namespace=namespace, resource_version=rv, timeout_seconds=60
            ) as events:
                async for event in events:
                    if event.type in types:
                        seen.append(keep(event.type, event.object))
                    if event.type != "ERROR":
                        rv = event.object.get("metadata", {}).get("resourceVersion", rv)

    task = asyncio.create_task(follow())
    try:
        yield seen
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.contextmanager
def calls_seen(attr: str, see: Callable[[Client, str, str], None]) -> Iterator[None]:
    """While the block runs, every call of `Client.<attr>(method, path, ...)` in this process, any
    client's, is shown to `see(client, method, path)` before it goes on as usual."""
    original = getattr(Client, attr)

    # Named as Client's own methods name them: `_open` also takes a `verb` keyword of its own.
    async def seen(self: Client, method: str, path: str, **kwargs: Any) -> Any:
        see(self, method, path)
        return await original(self, method, path, **kwargs)

    setattr(Client, attr, seen)
    try:
        yield
    finally:
        setattr(Client, attr, original)


@contextlib.contextmanager
def requests_of(client: Client) -> Iterator[list[str]]:
    """The paths of every request `client` opens (requests, retries and watches) during the block."""
    paths: list[str] = []

    def see(caller: Client, _verb: str, path: str) -> None:
        if caller is client:
            paths.append(path)

    with calls_seen("_open", see):
        yield paths


async def as_stored(api: Client, resource: Resource, name: str, namespace: str) -> dict[str, Any]:
    """The object exactly as the API server returns it in `resource`'s version: read by a client of
    the same credentials without the tests' codecs (testsupport/dcd_view.py)."""
    async with Client(api.config) as plain:
        return await plain.get(resource, name, namespace=namespace)
