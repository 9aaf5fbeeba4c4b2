"""The `api` fixture: our own async `Client` on the test cluster's admin kubeconfig.

Import it into a conftest (`from testsupport.api import api  # noqa: F401`). One client per test
session, on the session event loop, closed at the end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import NAMESPACE

import testsupport
from testsupport.cluster import TEST_NAMESPACE_LABEL

T = TypeVar("T")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def api(cluster: Any) -> AsyncIterator[Client]:
    """A `Client` for the cluster of the `cluster` fixture (admin credentials)."""
    client = await Client.from_kubeconfig(str(cluster.kubeconfig))
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
