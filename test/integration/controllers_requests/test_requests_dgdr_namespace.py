"""A DynamoGraphDeploymentRequest deploys into its own namespace only (issue #34, defect 1).

The shipped admission policy refuses a request naming another namespace; the operator refuses it too,
for requests stored before the policy or on clusters without it (the policy is not installed for
those tests: nothing but `test_the_policy_*` binds it, and only to its own namespace). Whatever
the route, nothing is created in the other namespace.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import ApiError, NotFound
from dynamo_operator.internal.client.resource import CONFIG_MAP, EVENT, JOB
from dynamo_operator.internal.stored_version import older
from integration.controllers_requests.dgdr_testlib import (
    PLANNER_DATA,
    TIMEOUT,
    finish_pod,
    generated_graph,
    request,
    wait_state,
    write_output_text,
)
from integration.controllers_requests.requests_testlib import apply, condition, get_or_none
from testsupport.admission import BINDING, POLICY, bound, shipped
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

ELSEWHERE = "kube-system"
FIELD = "spec.deploymentOverrides.namespace"
REFUSED = "NamespaceNotAllowed"
# config/default's name for the policy: a cluster where it was installed (test_crd_install) must not
# refuse the requests the backstop tests need stored.
DEPLOYED_POLICY = "dynamo-operator-dgdr-own-namespace"


@pytest.fixture
async def without_deployed_policy(api: Client) -> None:
    """The shipped policy, if some earlier test left it installed cluster-wide, is removed."""
    for resource in (BINDING, POLICY):
        with contextlib.suppress(NotFound):
            await api.delete(resource, DEPLOYED_POLICY)


async def create_when_admitted(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Create `obj`, retrying while a just-deleted policy is still in force."""

    async def attempt() -> dict[str, Any] | None:
        try:
            return await apply(api, obj)
        except ApiError as err:
            if FIELD in str(err):
                return None
            raise

    created: dict[str, Any] = await eventually(attempt, timeout=30)
    return created


async def nothing_tracked_in(api: Client, namespace: str, dgdr: str, dgdr_namespace: str) -> None:
    """No DGD and no ConfigMap in `namespace` carries the request's tracking labels."""
    selector = f"dgdr.nvidia.com/name={dgdr},dgdr.nvidia.com/namespace={dgdr_namespace}"
    assert await api.list(kinds.DGD, namespace=namespace, label_selector=selector) == []
    assert await api.list(CONFIG_MAP, namespace=namespace, label_selector=selector) == []


async def warnings(api: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    events = await api.list(EVENT, namespace=namespace, field_selector=f"involvedObject.name={name}")
    return [e for e in events if e.get("reason") == REFUSED and e.get("type") == "Warning"]


async def test_a_request_naming_kube_system_fails_and_leaves_nothing_there(
    api: Client, operator: RunningOperator, ns: str, without_deployed_policy: None
) -> None:
    """Stored without the policy: the operator fails it at validation, naming the field, with one
    Warning Event; no profiling Job, nothing in kube-system."""
    name = "req"
    await create_when_admitted(
        api, request(name, ns, autoApply=True, deploymentOverrides={"namespace": ELSEWHERE})
    )
    failed = await wait_state(api, ns, name, "Failed")
    cond = condition(failed, "Validation")
    assert (cond["status"], cond["reason"]) == ("False", REFUSED)
    assert f"{FIELD} is '{ELSEWHERE}'" in cond["message"]
    await eventually(lambda: warnings(api, ns, name), until=lambda es: len(es) == 1)
    assert await api.list(JOB, namespace=ns) == []
    await nothing_tracked_in(api, ELSEWHERE, name, ns)


async def test_a_request_stored_with_another_namespace_in_its_generated_graph_does_not_deploy(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A request an older operator carried to Deploying with a generated graph for kube-system (its
    status written here as that operator would have): the deploy step refuses, nothing is created."""
    name = "old"
    # Waits for a ConfigMap that never comes: the operator leaves the request where it is.
    spec = {"autoApply": True}
    obj = request(name, ns, **spec)
    obj["spec"]["profilingConfig"]["configMapRef"] = {"name": "never-created"}
    created = await apply(api, obj)
    await eventually(
        lambda: api.get(kinds.DGDR, name, namespace=ns),
        until=lambda d: condition(d, "Validation").get("reason") == "ReferenceNotFound",
        timeout=TIMEOUT,
    )
    generated = generated_graph(f"{ns}-gen"[:63])
    generated["metadata"]["namespace"] = ELSEWHERE
    status = {
        "status": {
            "state": "Deploying",
            "observedGeneration": created["metadata"]["generation"],
            "generatedDeployment": generated,
        }
    }
    # A v1alpha1 status patch: sent in v1alpha1 (a patch cannot be converted on its own; the API
    # server converts the object it applies to through the webhook).
    await api.patch(
        older(kinds.DGDR), name, status, namespace=ns, subresource="status", field_manager=TEST_FIELD_MANAGER
    )
    failed = await wait_state(api, ns, name, "Failed")
    cond = condition(failed, "DeploymentReady")
    assert (cond["status"], cond["reason"]) == ("False", REFUSED)
    assert f"names namespace '{ELSEWHERE}' (metadata.namespace)" in cond["message"]
    await eventually(lambda: warnings(api, ns, name), until=lambda es: len(es) == 1)
    assert await get_or_none(api, kinds.DGD, generated["metadata"]["name"], ELSEWHERE) is None
    assert await get_or_none(api, kinds.DGD, generated["metadata"]["name"], ns) is None
    await nothing_tracked_in(api, ELSEWHERE, name, ns)


async def test_profiler_output_naming_another_namespace_writes_nothing_there(
    api: Client, operator: RunningOperator, ns: str, kubectl: Kubectl
) -> None:
    """The output's DGD and its planner ConfigMap both name kube-system: the request fails when the
    output is read (SpecGenerated, NamespaceNotAllowed); neither is created, there or here."""
    name = "out"
    await apply(api, request(name, ns, autoApply=True))
    await wait_state(api, ns, name, "Profiling")
    graph = generated_graph(f"{ns}-gen"[:63])
    graph["metadata"]["namespace"] = ELSEWHERE
    planner = copy.deepcopy(PLANNER_DATA)
    planner["metadata"] = {"name": f"{ns}-planner"[:63], "namespace": ELSEWHERE}
    await write_output_text(api, name, ns, yaml.safe_dump(planner) + "---\n" + yaml.safe_dump(graph))
    await finish_pod(api, kubectl, ns, f"profile-{name}", phase="Succeeded")

    failed = await wait_state(api, ns, name, "Failed")
    cond = condition(failed, "SpecGenerated")
    assert (cond["status"], cond["reason"]) == ("False", REFUSED)
    assert "ConfigMap" in cond["message"] and "DynamoGraphDeployment" in cond["message"]
    await eventually(lambda: warnings(api, ns, name), until=lambda es: len(es) == 1)
    for namespace in (ELSEWHERE, ns):
        assert await get_or_none(api, kinds.DGD, graph["metadata"]["name"], namespace) is None
        assert await get_or_none(api, CONFIG_MAP, planner["metadata"]["name"], namespace) is None
    await nothing_tracked_in(api, ELSEWHERE, name, ns)


async def test_the_policy_refuses_a_request_naming_another_namespace(api: Client, ns: str) -> None:
    """The shipped policy, bound to this namespace: the create is refused naming the field; the
    request's own namespace, or none, is admitted."""
    probe = request("probe", ns, deploymentOverrides={"namespace": ELSEWHERE})

    async def refused() -> str:
        """The refusal's text; "" when admitted (before the policy is in force: removed again)."""
        try:
            await api.create(kinds.DGDR, copy.deepcopy(probe))
        except ApiError as err:
            return str(err)
        await api.delete(kinds.DGDR, "probe", namespace=ns)
        await eventually(lambda: get_or_none(api, kinds.DGDR, "probe", ns), until=lambda d: d is None)
        return ""

    async def in_force() -> bool:
        return FIELD in await refused()

    async with bound(api, shipped("dgdr_namespace_policy.yaml"), namespace=ns, in_force=in_force) as policy:
        message = await refused()
        assert (
            f"{FIELD}: a DynamoGraphDeploymentRequest deploys only into its own namespace ({ns})" in message
        )
        assert policy in message
        own = await apply(api, request("own", ns, deploymentOverrides={"namespace": ns}))
        none = await apply(api, request("none", ns, deploymentOverrides={"name": "x"}))
        assert (own["metadata"]["name"], none["metadata"]["name"]) == ("own", "none")
