"""Multinode graphs through the real LeaderWorkerSet controller, and through Grove.

These tests are marked `@pytest.mark.addons(...)`: run on their own (`make multinode`, or pytest on this
directory) the session's local cluster starts those add-ons (see testsupport/cluster.py); in a session
whose cluster runs without them they skip and say why. The shared fixtures come from
test/integration/conftest.py.

Grove: the `grove` add-on installs Grove's real CRDs (from its API module; PodGang a stand-in), and
every Grove test takes the `grove` fixture, parametrised over what plays Grove's operator:
- `standin`, always: the simulation in testsupport/grove_standin.py, run in the test process;
- `real`, only when GROVE_OPERATOR=/path/to/grove-operator names a binary of Grove's operator (no
  package registry serves it; the local cluster runs it as a process, with its webhooks).
Both run the same tests, so a drift between the simulation and Grove fails here. The session header
says in one line which of them ran. The two never run at once: the real operator (and its webhooks)
is stopped while the stand-in plays, and started again for the `real` tests (pytest runs each
parameter's tests together).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from dynamo_operator.internal.client.client import Client
from integration.controllers_multinode.multinode_testlib import REAL, STANDIN, GroveBackend
from testsupport.cluster import ADDONS_MARK, Cluster, needs_addons
from testsupport.grove_standin import GroveStandIn

GROVE_OPERATOR_ENV = "GROVE_OPERATOR"
GROVE_BACKENDS = (STANDIN, REAL) if os.environ.get(GROVE_OPERATOR_ENV) else (STANDIN,)


def pytest_report_header(config: pytest.Config) -> str:
    if REAL in GROVE_BACKENDS:
        return (
            "grove: every Grove test runs twice, on the stand-in (testsupport/grove_standin.py) and on "
            f"Grove's real operator ({GROVE_OPERATOR_ENV}={os.environ[GROVE_OPERATOR_ENV]})"
        )
    return (
        "grove: Grove tests run on the stand-in only (testsupport/grove_standin.py, a simulation); "
        f"{GROVE_OPERATOR_ENV}=/path/to/grove-operator adds Grove's real operator"
    )


@pytest.fixture(autouse=True)
def _addons_present(request: pytest.FixtureRequest) -> None:
    """Skip a test marked with an add-on the session's cluster does not run (before any other
    fixture of it touches the cluster)."""
    if any(request.node.iter_markers(ADDONS_MARK)):
        needs_addons(request.getfixturevalue("cluster"), request)


@pytest_asyncio.fixture(scope="session", loop_scope="session", params=GROVE_BACKENDS)
async def grove(request: pytest.FixtureRequest, cluster: Cluster, api: Client) -> AsyncIterator[GroveBackend]:
    """What plays Grove's operator for the test (see the module docstring)."""
    local = cluster.local
    real_process = local is not None and local.addon_has_process("grove")
    if request.param == STANDIN:
        if local is not None and real_process:
            await asyncio.to_thread(local.stop_addon, "grove")
        async with GroveStandIn(api) as standin:
            yield GroveBackend(STANDIN, cluster, standin)
        return
    if local is None or not real_process:
        pytest.fail(
            f"{GROVE_OPERATOR_ENV} is set but the session's cluster runs no Grove operator "
            "(an existing cluster, or the grove add-on not asked for)",
            pytrace=False,
        )
    await asyncio.to_thread(local.start_addon, "grove")
    yield GroveBackend(REAL, cluster)
