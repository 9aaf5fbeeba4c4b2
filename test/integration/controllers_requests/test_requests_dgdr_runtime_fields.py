"""A request's `profilingConfig.nodeSelector` and `runtimeVersionOverride` are acted on, on a real API
server: the request is written as v1alpha1 (the operator's client stores it as v1beta1, where both are
fields too), the profiling pod gets the node selector, and the graph it deploys gives the runtime
version to each component that sets none."""

from __future__ import annotations

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import JOB
from integration.controllers_requests.dgdr_testlib import (
    TIMEOUT,
    finish_pod,
    request,
    wait_state,
    write_output,
)
from integration.controllers_requests.requests_testlib import apply, get_or_none
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

SELECTOR = {"nvidia.com/gpu.product": "H100"}


async def test_the_node_selector_reaches_the_profiling_pod(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """The pod then waits for a node that matches (no kwok node here does, as the scheduler says)."""
    body = request("sel", ns)
    body["spec"]["profilingConfig"]["nodeSelector"] = SELECTOR
    await apply(api, body)
    await wait_state(api, ns, "sel", "Profiling")
    job = await api.get(JOB, "profile-sel", namespace=ns)
    assert job["spec"]["template"]["spec"]["nodeSelector"] == SELECTOR


async def test_the_runtime_version_reaches_each_component_of_the_deployed_graph(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("rt", ns, autoApply=True, runtimeVersionOverride="1.5.0"))
    await wait_state(api, ns, "rt", "Profiling")
    await write_output(api, "rt", ns, real="gen-real", mocker="gen-mocker")
    await finish_pod(api, kubectl, ns, "profile-rt", phase="Succeeded")
    dgd = await eventually(lambda: get_or_none(api, kinds.DGD, "gen-real", ns), timeout=TIMEOUT)
    assert dgd is not None
    versions = {name: s.get("runtimeVersionOverride") for name, s in dgd["spec"]["services"].items()}
    assert versions == {"Frontend": "1.5.0", "VllmWorker": "1.5.0"}
