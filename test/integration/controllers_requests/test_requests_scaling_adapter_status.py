"""An adapter says whether it drives its service, on the real API server: `Ready` with a reason, one
Warning Event per problem, `kubectl get dgdsa` columns, recovery by itself when the graph or service
appears, and no reconcile loop while it waits."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeploymentscalingadapter import (
    DynamoGraphDeploymentScalingAdapterReconciler,
)
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT
from integration.controllers_requests.requests_testlib import apply, condition, get_or_none, graph
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

TIMEOUT = 120.0
QUIET_SECONDS = 10.0  # a short requeue period would reconcile many times within this window


def adapter(name: str, ns: str, *, dgd: str, service: str = "Worker", replicas: int = 1) -> dict[str, Any]:
    """A hand-made adapter (no owner), as a user or a Helm chart creates it for HPA to target."""
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"replicas": replicas, "dgdRef": {"name": dgd, "componentName": service}},
    }


async def ready_is(api: Client, ns: str, name: str, status: str, reason: str) -> dict[str, Any]:
    """The adapter once its Ready condition reports `status`/`reason` for its current generation."""

    def reports(a: dict[str, Any] | None) -> bool:
        cond = condition(a, "Ready")
        return (
            a is not None
            and (cond.get("status"), cond.get("reason")) == (status, reason)
            and cond.get("observedGeneration") == a["metadata"]["generation"]
        )

    found = await eventually(lambda: get_or_none(api, kinds.DGDSA, name, ns), until=reports, timeout=TIMEOUT)
    assert found is not None
    return found


async def warnings(api: Client, ns: str, name: str, reason: str) -> int:
    """How many times a Warning with `reason` was reported about the adapter (Event counts summed)."""
    events = await api.list(EVENT, namespace=ns, field_selector=f"involvedObject.name={name},type=Warning")
    return sum(int(e.get("count") or 1) for e in events if e.get("reason") == reason)


@contextlib.contextmanager
def count_reconciles(key: str) -> Iterator[list[str]]:
    """Record every reconcile of `key` by the adapter controller while the block runs."""
    calls: list[str] = []
    original = DynamoGraphDeploymentScalingAdapterReconciler.reconcile

    async def counting(self: DynamoGraphDeploymentScalingAdapterReconciler, k: str) -> Any:
        if k == key:
            calls.append(k)
        return await original(self, k)

    DynamoGraphDeploymentScalingAdapterReconciler.reconcile = counting  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        DynamoGraphDeploymentScalingAdapterReconciler.reconcile = original  # type: ignore[method-assign]


async def test_missing_graph_is_graph_not_found_with_one_warning_and_no_reconcile_loop(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """An adapter naming an absent graph is Ready=False GraphNotFound (a message naming the graph),
    shown by `kubectl get dgdsa`, warned about once, and then left alone until something changes."""
    await apply(api, adapter("ghost-worker", ns, dgd="ghost"))
    found = await ready_is(api, ns, "ghost-worker", "False", "GraphNotFound")
    message = condition(found, "Ready")["message"]
    assert f"DynamoGraphDeployment ghost was not found in namespace {ns}" in message
    assert "spec.dgdRef.name" in message
    await eventually(lambda: warnings(api, ns, "ghost-worker", "GraphNotFound"), timeout=TIMEOUT)

    # kubectl reads the newest served version, v1beta1, whose adapter names a component, not a service.
    [header, row] = kubectl("get", "dgdsa", "ghost-worker", "-n", ns).splitlines()
    assert header.split() == ["NAME", "DGD", "COMPONENT", "REPLICAS", "READY", "REASON", "AGE"]
    assert row.split()[1:3] == ["ghost", "Worker"] and row.split()[-3:-1] == ["False", "GraphNotFound"]

    with count_reconciles(f"{ns}/ghost-worker") as reconciles:
        await asyncio.sleep(QUIET_SECONDS)
    assert reconciles == []

    # A new generation is reconciled (and reported) again, but the same problem is not news.
    with count_reconciles(f"{ns}/ghost-worker") as reconciles:
        kubectl("scale", "dgdsa/ghost-worker", "--replicas=2", "-n", ns)
        await ready_is(api, ns, "ghost-worker", "False", "GraphNotFound")
    assert len(reconciles) >= 1
    # The graph appears: the adapter scales it, and its Normal Event marks a point after any Warning
    # the generation-2 reconcile could have sent.
    await apply(api, graph("ghost", ns))
    await ready_is(api, ns, "ghost-worker", "True", "Active")
    await eventually(
        lambda: api.list(
            EVENT, namespace=ns, field_selector="involvedObject.name=ghost-worker,reason=Scaled"
        ),
        timeout=TIMEOUT,
    )
    assert await warnings(api, ns, "ghost-worker", "GraphNotFound") == 1


async def test_adapter_created_before_its_graph_drives_it_once_the_graph_appears(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Recovery needs no restart and no timer: the graph's creation re-triggers the adapter, which
    turns Ready and writes its replicas into the graph (which takes the same-named adapter as its
    own); the graph's deletion turns it GraphNotFound again."""
    await apply(api, adapter("late-worker", ns, dgd="late", replicas=2))
    await ready_is(api, ns, "late-worker", "False", "GraphNotFound")

    await apply(api, graph("late", ns))
    ready = await ready_is(api, ns, "late-worker", "True", "Active")
    assert "service Worker of DynamoGraphDeployment late" in condition(ready, "Ready")["message"]
    await eventually(
        lambda: api.get(kinds.DGD, "late", namespace=ns),
        until=lambda d: d["spec"]["services"]["Worker"].get("replicas") == 2,
        timeout=TIMEOUT,
    )
    await eventually(
        lambda: api.get(kinds.DGDSA, "late-worker", namespace=ns),
        until=lambda a: bool((a.get("status") or {}).get("selector")),
        timeout=TIMEOUT,
    )

    # The graph goes again: the adapter (the graph's only by name, not owned) is told by the watch.
    await api.delete(kinds.DGD, "late", namespace=ns)
    await ready_is(api, ns, "late-worker", "False", "GraphNotFound")


async def test_missing_service_is_service_not_found_until_the_adapter_names_a_real_one(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """An adapter naming a service the graph lacks is Ready=False ServiceNotFound, its message listing
    the services there are, with one Warning; pointing it at an existing service makes it Ready."""
    await apply(api, graph("s", ns))
    await eventually(lambda: get_or_none(api, kinds.DGDSA, "s-worker", ns), timeout=TIMEOUT)
    await apply(api, adapter("s-decode", ns, dgd="s", service="Decode"))
    found = await ready_is(api, ns, "s-decode", "False", "ServiceNotFound")
    message = condition(found, "Ready")["message"]
    assert "has no component Decode (its components: Frontend, Worker)" in message
    await eventually(lambda: warnings(api, ns, "s-decode", "ServiceNotFound"), timeout=TIMEOUT)

    # Retargeted at the Frontend, which has no scalingAdapter: the graph keeps its replicas.
    fixed = adapter("s-decode", ns, dgd="s", service="Frontend", replicas=3)
    await apply(api, fixed)
    found = await ready_is(api, ns, "s-decode", "False", "AdapterDisabled")
    assert "spec.services.Frontend.scalingAdapter.enabled: true" in condition(found, "Ready")["message"]
    await eventually(lambda: warnings(api, ns, "s-decode", "AdapterDisabled"), timeout=TIMEOUT)
    assert (await api.get(kinds.DGD, "s", namespace=ns))["spec"]["services"]["Frontend"]["replicas"] == 1


async def test_service_without_scaling_adapter_is_adapter_disabled_until_enabled(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A hand-made adapter of a service without `scalingAdapter.enabled` leaves the graph's replicas
    alone (they are the user's) and says so; enabling the flag in the graph makes it drive them."""
    plain = graph("d", ns, adapter=False)
    await apply(api, plain)
    await apply(api, adapter("d-worker", ns, dgd="d", replicas=3))
    await ready_is(api, ns, "d-worker", "False", "AdapterDisabled")
    assert (await api.get(kinds.DGD, "d", namespace=ns))["spec"]["services"]["Worker"]["replicas"] == 1

    await apply(api, graph("d", ns, adapter=True))
    await ready_is(api, ns, "d-worker", "True", "Active")
    await eventually(
        lambda: api.get(kinds.DGD, "d", namespace=ns),
        until=lambda d: d["spec"]["services"]["Worker"].get("replicas") == 3,
        timeout=TIMEOUT,
    )


async def test_second_adapter_of_a_service_is_a_duplicate_and_never_fights(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Two adapters with different replicas for one service: the graph's own one drives it, the
    other is Ready=False DuplicateAdapter and writes nothing (two drivers would flip the replicas
    back and forth forever)."""
    await apply(api, graph("x", ns))
    await ready_is(api, ns, "x-worker", "True", "Active")
    await apply(api, adapter("x-rival", ns, dgd="x", replicas=4))
    found = await ready_is(api, ns, "x-rival", "False", "DuplicateAdapter")
    assert "Adapter x-worker already drives service Worker" in condition(found, "Ready")["message"]
    assert (await api.get(kinds.DGD, "x", namespace=ns))["spec"]["services"]["Worker"]["replicas"] == 1
