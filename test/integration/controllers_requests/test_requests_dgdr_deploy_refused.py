"""A generated graph the API server refuses: the request's transition records the Warning, nothing
is written to the request, and it is not retried (the refusal is permanent until the request
changes)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import EVENT
from integration.controllers_requests.dgdr_testlib import (
    TIMEOUT,
    event_reasons,
    finish_pod,
    generated_graph,
    request,
    state_of,
    wait_state,
    write_output_text,
)
from integration.controllers_requests.requests_testlib import apply, get_or_none
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator, wait_quiet

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

DGDR_V1ALPHA1 = "dynamographdeploymentrequests.v1alpha1.nvidia.com"  # kubectl without the webhook


def refused_graph() -> dict[str, Any]:
    """A graph the DGD's CRD refuses (a service's replicas below its minimum), which the profiler
    output parser passes on as it is."""
    graph = generated_graph("refused")
    graph["spec"]["services"]["VllmWorker"]["replicas"] = -1
    return graph


async def test_a_refused_deployment_is_warned_about_and_not_retried(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("req", ns, autoApply=True))
    await wait_state(api, ns, "req", "Profiling")
    await finish_pod(api, kubectl, ns, "profile-req", phase="Succeeded")
    await write_output_text(api, "req", ns, yaml.safe_dump(refused_graph()))

    await eventually(
        lambda: event_reasons(api, ns, "req"),
        until=lambda rs: "DeploymentCreationFailed" in rs,
        timeout=TIMEOUT,
    )
    await wait_quiet(settle=2.0, timeout=30.0)
    dgdr = await state_of(api, ns, "req")
    assert dgdr["status"]["state"] == "Deploying"
    assert "created" not in (dgdr["status"].get("deployment") or {})
    assert await get_or_none(api, kinds.DGD, "refused", ns) is None
    # Repeats of an Event fold into its count, one per attempt: the reconcile that refused it and the
    # one its own status write (Profiling -> Deploying) brings; then no retry, however long it waits.
    first = await refused_event(api, ns)
    assert first["type"] == "Warning" and "refused" in first["message"]
    assert first.get("count", 1) <= 2
    # A change of the request brings one more attempt, and only one.
    kubectl("annotate", f"{DGDR_V1ALPHA1}/req", "-n", ns, "test/poke=1")
    await wait_quiet(settle=3.0, timeout=30.0)
    assert (await refused_event(api, ns)).get("count", 1) <= first.get("count", 1) + 1


async def refused_event(api: Client, ns: str) -> dict[str, Any]:
    events = await api.list(EVENT, namespace=ns, field_selector="involvedObject.name=req")
    [refused] = [e for e in events if e.get("reason") == "DeploymentCreationFailed"]
    return refused
