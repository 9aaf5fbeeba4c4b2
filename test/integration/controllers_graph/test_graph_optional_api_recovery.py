"""Optional APIs come and go while the operator runs: a multinode graph waits for the LeaderWorkerSet
API and proceeds when its CRD is installed, and says so when the CRD is deleted again, all without
an operator restart (the CRD watch re-detects the API)."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from testsupport.api import eventually
from testsupport.components import dcd_of
from testsupport.components import name as name_of
from testsupport.operator import LWS_CRD, TEST_FIELD_MANAGER, RunningOperator, install_crds

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

SAMPLE = (
    Path(__file__).resolve().parents[3]
    / "config"
    / "samples"
    / "nvidia.com_v1alpha1_dynamographdeployment_sglang_multinode.yaml"
)
LWS_CRD_NAME = "leaderworkersets.leaderworkerset.x-k8s.io"
MULTINODE_SERVICE = "SGLangWorker"
NO_ORCHESTRATOR = "NoOrchestratorAvailable"
TIMEOUT = 120.0


class LeaderWorkerSetCrd:
    """Removes and installs the LWS CRD, each time until the operator's view has followed."""

    def __init__(self, api: Client, operator: RunningOperator) -> None:
        self.api, self.operator = api, operator

    async def remove(self) -> None:
        with contextlib.suppress(NotFound):
            await self.api.delete(CUSTOM_RESOURCE_DEFINITION, LWS_CRD_NAME)
        await eventually(self._gone, timeout=TIMEOUT, interval=0.25)
        await eventually(lambda: not self.operator.capabilities.lws, timeout=TIMEOUT)

    async def install(self) -> None:
        await install_crds(self.api, [LWS_CRD])
        await eventually(lambda: self.operator.capabilities.lws, timeout=TIMEOUT)

    async def _gone(self) -> bool:
        try:
            await self.api.get(CUSTOM_RESOURCE_DEFINITION, LWS_CRD_NAME)
        except NotFound:
            return True
        return False


@pytest_asyncio.fixture(loop_scope="session")
async def lws_crd(api: Client, operator: RunningOperator) -> AsyncIterator[LeaderWorkerSetCrd]:
    """The LWS CRD, under the test's control; installed again afterwards (other tests expect it)."""
    crd = LeaderWorkerSetCrd(api, operator)
    try:
        yield crd
    finally:
        await crd.install()


def multinode_graph(namespace: str) -> dict[str, Any]:
    doc = yaml.safe_load(SAMPLE.read_text())
    doc["metadata"]["namespace"] = namespace
    return dict(doc)


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def ready_condition(dgd: dict[str, Any]) -> dict[str, Any]:
    conds = (dgd.get("status") or {}).get("conditions") or ()
    return next((dict(c) for c in conds if c.get("type") == "Ready"), {})


async def leader_worker_sets(api: Client, namespace: str, dcd: str) -> list[dict[str, Any]]:
    """The LWSs of `dcd` ([] also while the API is not served)."""
    try:
        sets = await api.list(kinds.LWS, namespace=namespace)
    except NotFound:
        return []
    return [s for s in sets if any(r["name"] == dcd for r in s["metadata"].get("ownerReferences") or ())]


async def test_multinode_graph_proceeds_once_the_leaderworkerset_crd_is_installed(
    api: Client, operator: RunningOperator, ns: str, lws_crd: LeaderWorkerSetCrd
) -> None:
    """Without the LWS API the graph names the API it lacks and applies nothing; installing the CRD
    is enough for it to create its LeaderWorkerSets: no restart, no edit of the graph."""
    await lws_crd.remove()
    dgd = multinode_graph(ns)
    name = dgd["metadata"]["name"]
    await apply(api, dgd)
    failed = await eventually(
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: ready_condition(d).get("reason") == NO_ORCHESTRATOR,
        timeout=TIMEOUT,
    )
    assert failed["status"]["state"] == "failed"
    assert "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet" in ready_condition(failed)["message"]
    assert await api.list(kinds.DCD, namespace=ns) == []  # half a graph helps nobody

    await lws_crd.install()

    dcd = name_of(await eventually(lambda: dcd_of(api, ns, name, MULTINODE_SERVICE), timeout=TIMEOUT))
    sets = await eventually(lambda: leader_worker_sets(api, ns, dcd), timeout=TIMEOUT)
    assert all(s["metadata"]["ownerReferences"][0]["kind"] == kinds.DCD.kind for s in sets)
    recovered = await eventually(
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: ready_condition(d).get("reason") not in (None, NO_ORCHESTRATOR),
        timeout=TIMEOUT,
    )
    assert recovered["status"]["state"] == "pending"  # no LWS controller runs here: never ready


async def test_a_graph_says_so_when_its_leaderworkerset_crd_is_deleted(
    api: Client, operator: RunningOperator, ns: str, lws_crd: LeaderWorkerSetCrd
) -> None:
    """A running multinode graph whose LWS API vanishes reports the missing orchestrator on the graph
    and the missing API on its component, instead of staying silently 'pending'."""
    assert operator.capabilities.lws
    dgd = multinode_graph(ns)
    name = dgd["metadata"]["name"]
    await apply(api, dgd)
    dcd = name_of(await eventually(lambda: dcd_of(api, ns, name, MULTINODE_SERVICE), timeout=TIMEOUT))
    await eventually(lambda: leader_worker_sets(api, ns, dcd), timeout=TIMEOUT)

    await lws_crd.remove()

    failed = await eventually(
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: ready_condition(d).get("reason") == NO_ORCHESTRATOR,
        timeout=TIMEOUT,
    )
    assert failed["status"]["state"] == "failed"
    component = await eventually(
        lambda: api.get(kinds.DCD, dcd, namespace=ns),
        until=lambda d: any(
            c.get("reason") == "MissingAPI" for c in (d.get("status") or {}).get("conditions") or ()
        ),
        timeout=TIMEOUT,
    )
    available = next(c for c in component["status"]["conditions"] if c["type"] == "Available")
    assert available["status"] == "False"
