"""These tests run operators with flags of their own (--nats-address, --mpi-run-ssh-secret-namespace,
...), so they get a control plane of their own, with no session operator beside them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from testsupport.cluster import Cluster, Kubectl, private_cluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with private_cluster("pytest-side") as c:
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
