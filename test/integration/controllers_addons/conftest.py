"""Upstream's own add-on examples run by an operator of their own on a control plane of their own
(the session operator must not reconcile them beside it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from testsupport.cluster import Cluster, Kubectl, private_cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with private_cluster("pytest-addons") as c:
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
