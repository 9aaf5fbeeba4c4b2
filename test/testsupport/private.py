"""Module-scoped `cluster`, `kubectl` and `api` on a control plane of the test directory's own
(`private_cluster`): a directory's conftest imports them to replace the session's, for tests that run
operators with flags of their own (`running_operator`), which the session operator would race."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client

from testsupport.cluster import Cluster, Kubectl, private_cluster


@pytest.fixture(scope="module")
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with private_cluster(f"pytest-{request.path.parent.name.replace('_', '-')}") as c:
        yield c


@pytest.fixture(scope="module")
def kubectl(cluster: Cluster) -> Kubectl:
    return Kubectl(cluster.kubeconfig)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def api(cluster: Cluster) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(cluster.kubeconfig)
    try:
        yield client
    finally:
        await client.close()
