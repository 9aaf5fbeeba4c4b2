"""A graph whose namespace is being deleted.

The API server then refuses every create in that namespace, for good, and the namespace's deletion
takes the graph with it. So once the namespace controller has taken a graph's children, the operator
must write nothing more there: no retries of the refused creates, no Warning Events (refused as
well), no reconcile errors. A namespace of a thousand graphs made thousands of each, with a
traceback apiece, while it went (issue #13).

The namespace controller deletes a namespace's objects kind by kind; a graph can outlive its
children by minutes. Here a ValidatingAdmissionPolicy refuses the graph's deletion, so the window
stays open for the whole test.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound
from dynamo_operator.internal.client.resource import CONFIG_MAP, NAMESPACE
from dynamo_operator.internal.observability.metrics import REGISTRY
from testsupport.admission import refusing
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, record_writes

pytestmark = pytest.mark.cluster

HOLD = "the test keeps this object while its namespace goes"
READY_TIMEOUT = 120.0
SETTLE_SECONDS = 3.0
WATCH_SECONDS = 8.0
# What the policy refuses to delete: the graph, and the probe ConfigMap that shows it is in force.
HOLD_RULES = [
    {
        "apiGroups": [kinds.DGD.group],
        "apiVersions": ["*"],
        "operations": ["DELETE"],
        "resources": [kinds.DGD.plural],
    },
    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["configmaps"]},
]


def ready(dgd: dict[str, Any]) -> bool:
    return (dgd.get("status") or {}).get("state") == "successful"


def reconcile_errors(namespace: str) -> float:
    """`dynamo_operator_reconcile_errors_total` of `namespace`, every kind and error type."""
    return sum(
        s.value
        for family in REGISTRY.collect()
        if family.name == "dynamo_operator_reconcile_errors"
        for s in family.samples
        if s.name.endswith("_total") and s.labels.get("namespace") == namespace
    )


async def deletion_refused(api: Client, ns: str) -> bool:
    """Whether the policy is in force: a probe ConfigMap cannot be deleted."""
    probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": ns}}
    await api.apply(CONFIG_MAP, probe, field_manager=TEST_FIELD_MANAGER)
    try:
        await api.delete(CONFIG_MAP, "probe", namespace=ns)
    except ApiError as e:
        return HOLD in e.message
    return False


async def dcds(api: Client, ns: str) -> list[dict[str, Any]]:
    return await api.list(kinds.DCD, namespace=ns)


async def ready_graph(api: Client, ns: str) -> None:
    """Graph `g` (two services) applied and Ready."""
    await api.apply(kinds.DGD, two_service_graph("g", ns), field_manager=TEST_FIELD_MANAGER)
    await eventually(lambda: api.get(kinds.DGD, "g", namespace=ns), until=ready, timeout=READY_TIMEOUT)


def graph_kept(api: Client, ns: str) -> AbstractAsyncContextManager[None]:
    """The policy that keeps graph `g` while its namespace goes (see the module docstring)."""
    return refusing(
        api,
        f"hold-{ns}",
        namespace=ns,
        rules=HOLD_RULES,
        message=HOLD,
        in_force=lambda: deletion_refused(api, ns),
    )


async def test_a_namespace_being_deleted_gets_no_more_writes_events_or_errors(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    await ready_graph(api, ns)
    async with graph_kept(api, ns):
        errors_before = reconcile_errors(ns)
        with record_writes() as while_going:
            await api.delete(NAMESPACE, ns)
            # The namespace controller takes what it may: the components go, the graph stays.
            await eventually(lambda: dcds(api, ns), until=lambda items: not items, timeout=60)
            await asyncio.sleep(SETTLE_SECONDS)
        with record_writes() as settled:
            await asyncio.sleep(WATCH_SECONDS)
        graph = await api.get(kinds.DGD, "g", namespace=ns)
        namespace = await api.get(NAMESPACE, ns)
    assert namespace["status"]["phase"] == "Terminating"
    assert not graph["metadata"].get("deletionTimestamp")  # the window the test needs stayed open
    ours = [w for w in while_going if f"/namespaces/{ns}/" in w[1]]
    assert ours, "the operator never tried to put the graph's components back"
    assert [w for w in ours if w[1].endswith("/events")] == [], "Warning Events into a dying namespace"
    assert reconcile_errors(ns) == errors_before
    assert [w for w in settled if f"/namespaces/{ns}/" in w[1]] == []


async def test_the_graph_still_goes_with_its_namespace(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Nothing the operator does (or stops doing) keeps a namespace from finishing its deletion."""
    await ready_graph(api, ns)
    await api.delete(NAMESPACE, ns)

    async def gone() -> bool:
        try:
            await api.get(NAMESPACE, ns)
        except NotFound:
            return True
        return False

    await eventually(gone, timeout=120, interval=0.5)


async def test_a_graph_left_in_a_namespace_being_deleted_does_not_recreate_its_children_on_each_event(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Once a create there was refused, events of the graph bring no new attempts: the namespace
    controller deletes each child before its owner, and a graph re-creating its children on every
    such event sent 21 refused creates per graph (of 30 requests) while a namespace of 100 went."""
    await ready_graph(api, ns)
    async with graph_kept(api, ns):
        with record_writes() as while_going:
            await api.delete(NAMESPACE, ns)
            await eventually(lambda: dcds(api, ns), until=lambda items: not items, timeout=60)
            await eventually(
                lambda: asyncio.sleep(0.2, while_going),
                until=lambda writes: any("/dynamocomponentdeployments/" in path for _, path in writes),
                timeout=30,
            )
        with record_writes() as after_refusal:
            # Each edit of the graph's annotations is an event its reconciler acts on.
            for i in range(3):
                edit = {"metadata": {"annotations": {"example.com/poke": str(i)}}}
                await api.patch(kinds.DGD, "g", edit, namespace=ns, field_manager=TEST_FIELD_MANAGER)
            await asyncio.sleep(SETTLE_SECONDS)
    graph_path = f"/namespaces/{ns}/dynamographdeployments/g"
    operators = [(m, p) for m, p in after_refusal if f"/namespaces/{ns}/" in p and not p.endswith(graph_path)]
    assert operators == []
