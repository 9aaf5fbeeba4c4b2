"""Module-scoped `cluster`, `kubectl` and `api` on a private control plane (`private_cluster`): a
directory's conftest imports them to replace the session's, for tests that run operators with flags
of their own (`running_operator`), which the session operator would race.

Every such directory shares one private control plane per session (`private_control_plane`, declared
once in test/integration/conftest.py): a start-up costs tens of seconds on a busy machine, and their
tests already keep to themselves, each running its operator restricted to its own namespace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client

from testsupport.cluster import Cluster, Kubectl, private_cluster
from testsupport.dcd_view import alpha_view


@pytest.fixture(scope="session")
def private_control_plane() -> Iterator[Cluster]:
    """The session's private control plane, started on first use and stopped at the session's end."""
    with private_cluster("pytest-private") as c:
        yield c


@pytest.fixture(scope="module")
def cluster(private_control_plane: Cluster) -> Cluster:
    return private_control_plane


@pytest.fixture(scope="module")
def kubectl(cluster: Cluster) -> Kubectl:
    return Kubectl(cluster.kubeconfig)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def api(cluster: Cluster) -> AsyncIterator[Client]:
    """Speaks each kind in its stored version, as the operator does: a private control plane runs
    no conversion webhook, and v1beta1 is stored for graphs, components and adapters."""
    client = await Client.from_kubeconfig(cluster.kubeconfig, codecs=alpha_view())
    try:
        yield client
    finally:
        await client.close()
