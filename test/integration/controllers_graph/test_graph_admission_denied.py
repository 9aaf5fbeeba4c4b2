"""A child refused by admission control (a ValidatingAdmissionPolicy here; an admission webhook such
as Grove's answers alike) is final until something changes: the component says why in its condition,
with one Warning, and the operator does not send the same write again and again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError
from dynamo_operator.internal.client.resource import EVENT
from testsupport.admission import refusing
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.objects import condition, get_or_none
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, record_writes

pytestmark = pytest.mark.cluster

DENIAL = "this namespace takes no Services"
WATCH_SECONDS = 8.0
SETTLE_SECONDS = 3.0


def frontend_only(name: str, namespace: str) -> dict[str, Any]:
    """The shared two-service graph without its worker: one component, one Service to refuse."""
    graph = two_service_graph(name, namespace)
    del graph["spec"]["services"]["Worker"]
    return graph


async def service_refused(api: Client, ns: str) -> bool:
    probe = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "probe", "namespace": ns}}
    probe["spec"] = {"ports": [{"port": 80}]}
    try:
        await api.create(kinds.SERVICE, probe)
    except ApiError as e:
        return DENIAL in e.message
    await api.delete(kinds.SERVICE, "probe", namespace=ns)
    return False


@pytest.fixture
async def no_services_policy(api: Client, ns: str) -> AsyncIterator[str]:
    """A policy that refuses every Service created in `ns` (and only there), in force once yielded."""
    name = f"no-services-{ns}"
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["services"]}]
    async with refusing(
        api, name, namespace=ns, rules=rules, message=DENIAL, in_force=lambda: service_refused(api, ns)
    ):
        yield name


async def test_a_child_refused_by_admission_is_reported_once_and_not_retried(
    api: Client, operator: RunningOperator, ns: str, no_services_policy: str
) -> None:
    await api.apply(kinds.DGD, frontend_only("g", ns), field_manager=TEST_FIELD_MANAGER)
    dcd = await eventually(
        lambda: get_or_none(api, kinds.DCD, "g-frontend", ns),
        until=lambda d: condition(d, "Available").get("reason") == "ApplyRejected",
        timeout=60,
    )
    assert DENIAL in condition(dcd, "Available")["message"]
    dgd = await api.get(kinds.DGD, "g", namespace=ns)
    assert condition(dgd, "Ready").get("status") != "True"

    # The rest of the component goes on (its Deployment's progress wakes the component up a few
    # times, each one more try of the Service); once it has settled, nothing is sent again.
    await eventually(
        lambda: get_or_none(api, kinds.DEPLOYMENT, "g-frontend", ns),
        until=lambda d: ((d or {}).get("status") or {}).get("readyReplicas") == 1,
        timeout=60,
    )
    await asyncio.sleep(SETTLE_SECONDS)
    with record_writes() as writes:
        await asyncio.sleep(WATCH_SECONDS)
    assert [w for w in writes if f"/namespaces/{ns}/" in w[1]] == []

    events = await api.list(EVENT, namespace=ns, field_selector="involvedObject.name=g-frontend,type=Warning")
    assert [e["reason"] for e in events if e["reason"] == "ApplyRejected"] == ["ApplyRejected"]
