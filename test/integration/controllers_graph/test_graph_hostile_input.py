"""Hostile and unlucky input that the API accepts: the operator says why in a condition, writes nothing
it must not, and goes quiet (no write, next to no reconcile) instead of fighting itself.

Collisions inside one graph are refused by the CRD (test/integration/crds); what is left is what one
object cannot see: two graphs whose generated names meet, names at the length limits, references to
objects that do not exist, and a name created and deleted in a rapid loop.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import EVENT
from dynamo_operator.internal.dynamo.status.readiness import NOT_READY_RECHECK_MIN_SECONDS
from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.stored_version import older
from testsupport.api import eventually, only_this_test_namespace_left
from testsupport.graphs import IMAGE
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, record_writes, wait_quiet

pytestmark = pytest.mark.cluster

READY_TIMEOUT = 120.0
QUIET_SECONDS = 30.0


def graph(name: str, namespace: str, *services: str) -> dict[str, Any]:
    """A vLLM graph with one small worker per service key (the first one a frontend)."""
    spec: dict[str, Any] = {}
    for i, key in enumerate(services):
        main: dict[str, Any] = {"image": IMAGE}
        if i:
            main |= {"command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "m"]}
        spec[key] = {
            "componentType": "frontend" if i == 0 else "worker",
            "replicas": 1,
            "extraPodSpec": {"mainContainer": main},
        }
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"backendFramework": "vllm", "services": spec},
    }


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def ready_condition(obj: dict[str, Any], kind: str = "Ready") -> dict[str, Any]:
    for condition in (obj.get("status") or {}).get("conditions") or ():
        if condition.get("type") == kind:
            return dict(condition)
    return {}


async def wait_ready(api: Client, ns: str, name: str) -> dict[str, Any]:
    return await eventually(
        lambda: api.get(kinds.DGD, name, namespace=ns),
        until=lambda d: (d.get("status") or {}).get("state") == "successful",
        timeout=READY_TIMEOUT,
    )


async def find(api: Client, resource: Any, ns: str, name: str) -> dict[str, Any]:
    """The object, or {} while it does not exist."""
    try:
        return await api.get(resource, name, namespace=ns)
    except NotFound:
        return {}


async def warnings(api: Client, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    events = await api.list(EVENT, namespace=ns, field_selector=f"involvedObject.name={name},type=Warning")
    return [e for e in events if e.get("reason") == reason]


async def owned_by(api: Client, ns: str, *uids: str) -> list[str]:
    """Kind/name of every DCD, ServiceAccount, Role, RoleBinding and Service controlled by one of `uids`."""
    out = []
    for resource in (kinds.DCD, kinds.SERVICE_ACCOUNT, kinds.ROLE, kinds.ROLE_BINDING, kinds.SERVICE):
        for obj in await api.list(resource, namespace=ns):
            refs = obj["metadata"].get("ownerReferences") or ()
            if any(r.get("uid") in uids and r.get("controller") for r in refs):
                out.append(f"{resource.kind}/{obj['metadata']['name']}")
    return out


async def named(api: Client, ns: str, prefix: str) -> list[str]:
    """Kind/name of every object the operator writes for a graph (directly or through its DCDs) whose
    name starts with `prefix`."""
    out = []
    for resource in (
        kinds.DCD,
        kinds.DEPLOYMENT,
        kinds.SERVICE,
        kinds.SERVICE_ACCOUNT,
        kinds.ROLE,
        kinds.ROLE_BINDING,
    ):
        for obj in await api.list(resource, namespace=ns):
            if obj["metadata"]["name"].startswith(prefix):
                out.append(f"{resource.kind}/{obj['metadata']['name']}")
    return out


async def test_longest_accepted_graph_name_reaches_ready(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """52 characters (the most the CRD admits with a one-letter service) generate only valid objects:
    the discovery RBAC's long label values are shortened, not refused."""
    name = "g" * 52
    await apply(api, graph(name, ns, "F", "W"))
    await wait_ready(api, ns, name)
    [account] = [
        sa
        for sa in await api.list(kinds.SERVICE_ACCOUNT, namespace=ns)
        if sa["metadata"]["name"] == f"{name}-k8s-service-discovery"
    ]
    assert len(account["metadata"]["labels"]["app.kubernetes.io/name"]) <= 63


async def test_graph_whose_components_another_graph_owns_writes_nothing_and_says_why(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Graph `x` with service `a-b` and graph `x-a` with service `b` both want DCD `x-a-b`. The first
    one keeps it; the second writes nothing (not even its discovery RBAC), says who holds the name in
    a NameConflict condition with one Warning Event, and proceeds once the first graph is gone."""
    await apply(api, graph("x", ns, "a-b"))
    await wait_ready(api, ns, "x")
    await apply(api, graph("x-a", ns, "b"))
    refused = await eventually(
        lambda: api.get(kinds.DGD, "x-a", namespace=ns),
        until=lambda d: ready_condition(d).get("reason") == "NameConflict",
        timeout=60,
    )
    condition = ready_condition(refused)
    assert condition["status"] == "False"
    assert "DynamoComponentDeployment x-a-b is controlled by DynamoGraphDeployment x" in condition["message"]
    assert refused["status"]["state"] == "failed"
    assert await owned_by(api, ns, refused["metadata"]["uid"]) == []
    await eventually(
        lambda: warnings(api, ns, "x-a", "NameConflict"), until=lambda xs: len(xs) == 1, timeout=30
    )

    await api.delete(kinds.DGD, "x", namespace=ns)
    await eventually(
        lambda: api.list(kinds.DCD, namespace=ns),
        until=lambda xs: [d["metadata"]["name"] for d in xs] == [],
        timeout=60,
    )
    # The periodic re-check would find the name free within a minute; an edit finds it at once.
    await api.patch(kinds.DGD, "x-a", {"metadata": {"annotations": {"nudge": "1"}}}, namespace=ns)
    await wait_ready(api, ns, "x-a")
    assert len(await warnings(api, ns, "x-a", "NameConflict")) == 1


async def test_service_another_owner_controls_keeps_the_graph_not_ready(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Service `y-cache-a` already belongs to someone else (a ConfigMap controls it here). Component
    `y-cache-a` says so (NameConflict), creates no workload, and its graph is never reported ready.
    (v1beta1, the stored version, refuses dots in component names, so two graphs can no longer both
    want one Service name through `cache.a` and `cache-a`.)"""
    holder = await api.create(
        kinds.CONFIG_MAP, {"metadata": {"name": "holder", "namespace": ns}, "data": {"k": "v"}}
    )
    owner = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "holder",
        "uid": holder["metadata"]["uid"],
        "controller": True,
    }
    service = {
        "metadata": {"name": "y-cache-a", "namespace": ns, "ownerReferences": [owner]},
        "spec": {"ports": [{"port": 80}]},
    }
    await api.create(kinds.SERVICE, service)
    await apply(api, graph("y-cache", ns, "a"))
    dcd = await eventually(
        lambda: find(api, kinds.DCD, ns, "y-cache-a"),
        until=lambda d: ready_condition(d, "Available").get("reason") == "NameConflict",
        timeout=60,
    )
    assert (
        "Service y-cache-a is controlled by ConfigMap holder" in ready_condition(dcd, "Available")["message"]
    )
    with pytest.raises(NotFound):
        await api.get(kinds.DEPLOYMENT, "y-cache-a", namespace=ns)
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "y-cache", namespace=ns),
        until=lambda d: bool(ready_condition(d)),
        timeout=60,
    )
    assert ready_condition(dgd)["status"] == "False"
    await asyncio.sleep(5)  # and it stays so
    assert ready_condition(await api.get(kinds.DGD, "y-cache", namespace=ns))["status"] == "False"


async def test_a_component_name_with_a_dot_fails_the_graph_with_the_rule_it_breaks(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """v1alpha1 lets a service be called `cache.a`; v1beta1, which components are stored in, does not:
    the graph fails and says which rule, and no workload of it runs half-written. Sent as v1alpha1
    (the API server validates it in that version and the operator's webhook converts it), as a user's
    `kubectl apply` of a v1alpha1 manifest is."""
    await api.apply(older(kinds.DGD), graph("y", ns, "cache.a"), field_manager=TEST_FIELD_MANAGER)
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "y", namespace=ns),
        until=lambda d: (
            ready_condition(d).get("status") == "False" and "spec.name" in ready_condition(d)["message"]
        ),
        timeout=60,
    )
    assert "cache.a" in ready_condition(dgd)["message"]
    with pytest.raises(NotFound):
        await api.get(kinds.DEPLOYMENT, "y-cache-a", namespace=ns)


def by_controller(name: str) -> dict[str, float]:
    """A counter's value per controller label, from this process's registry."""
    out: dict[str, float] = {}
    for metric in REGISTRY.collect():
        if metric.name == name:
            for sample in metric.samples:
                if sample.name.endswith("_total"):
                    key = sample.labels.get("controller", "")
                    out[key] = out.get(key, 0.0) + sample.value
    return out


def metric_total(name: str) -> float:
    """Sum of a counter over every label set, from this process's registry."""
    return sum(by_controller(name).values())


# A fault scenario (`make faults`): it waits out the orphan collector's grace period for the flapping
# graph (up to 3 min) and then 30 s of silence. `make test` keeps silence checks of its own
# (test_quiet_after_convergence, the rolling update's and the adapters' quiet windows).
@pytest.mark.fault
async def test_hostile_inputs_settle_into_silence(api: Client, operator: RunningOperator, ns: str) -> None:
    """Every odd input at once: conflicting graphs, the longest names, a missing user PVC, adapters
    and models pointing at nothing, a name created and deleted ten times in a row. Once settled, 30 s
    pass with no write for this namespace, at most one reconcile per conflicted object (their
    periodic re-check) and the pod re-checks of the one component that cannot become ready, no key
    reported as a hot loop, and the operator still running."""
    hot_before = metric_total("controller_hot_loop_keys")
    await apply(api, graph("p", ns, "q-r"))
    await apply(api, graph("s", ns, "t.u"))  # a dot: v1beta1 refuses the component name, s fails
    await wait_ready(api, ns, "p")
    await eventually(
        lambda: api.get(kinds.DGD, "s", namespace=ns),
        until=lambda d: "spec.name" in ready_condition(d).get("message", ""),
        timeout=60,
    )
    await apply(api, graph("p-q", ns, "r"))  # conflicts with p's DCD p-q-r
    await apply(api, graph("s-t", ns, "u"))  # the Service s-t-u that s could not make
    await apply(api, graph("h" * 52, ns, "F", "W"))
    missing_pvc = graph("m", ns, "F", "W")
    missing_pvc["spec"]["pvcs"] = [{"name": "nobody-made-this"}]
    missing_pvc["spec"]["services"]["W"]["volumeMounts"] = [{"name": "nobody-made-this", "mountPoint": "/d"}]
    await apply(api, missing_pvc)
    await apply(
        api,
        {
            "apiVersion": "nvidia.com/v1beta1",
            "kind": "DynamoGraphDeploymentScalingAdapter",
            "metadata": {"name": "orphan", "namespace": ns},
            "spec": {"replicas": 2, "dgdRef": {"name": "no-such-graph", "componentName": "W"}},
        },
    )
    await apply(
        api,
        {
            "apiVersion": "nvidia.com/v1alpha1",
            "kind": "DynamoModel",
            "metadata": {"name": "unserved", "namespace": ns},
            "spec": {"modelName": "org/nothing", "baseModelName": "org/nothing", "modelType": "base"},
        },
    )
    for _ in range(10):
        await apply(api, graph("flap", ns, "F", "W"))
        await api.delete(kinds.DGD, "flap", namespace=ns)

    for name in ("p", "s-t", "h" * 52):
        await wait_ready(api, ns, name)
    await only_this_test_namespace_left(api, ns)
    # A name deleted and re-created at once can lose kube-controller-manager's garbage collector
    # (it reads the pair as one update between two UIDs): the operator's orphan collector removes
    # what the flapping graph left, after its grace period. That is change; silence comes after it.
    await eventually(lambda: named(api, ns, "flap"), until=lambda left: left == [], timeout=180, interval=2.0)
    await wait_quiet(settle=3.0, timeout=90)
    before = by_controller("controller_runtime_reconcile")
    with record_writes() as writes:
        await asyncio.sleep(QUIET_SECONDS)
    mine = [w for w in writes if f"/namespaces/{ns}/" in w[1]]
    assert mine == []
    # p-q and s-t's DCD re-check their conflict once a minute: at most one reconcile each here. m's
    # worker, whose pods cannot schedule (their claim does not exist), looks at its pods again on its
    # not-ready schedule (there is no Pod watch): at most one reconcile per the shortest interval, and
    # one at the window's edge. Reads only: no write, asserted above.
    rechecks = int(QUIET_SECONDS // NOT_READY_RECHECK_MIN_SECONDS) + 1
    after = by_controller("controller_runtime_reconcile")
    moved = {c: after[c] - before.get(c, 0.0) for c in after if after[c] != before.get(c, 0.0)}
    # The orphan collector still judges children of other tests' deleted graphs as their grace ends:
    # cache lookups, no write (asserted above). The Dynamo reconcilers are what must be still.
    moved.pop("orphans", None)
    assert sum(moved.values()) <= 2 + rechecks, moved
    assert metric_total("controller_hot_loop_keys") == hot_before
    assert operator.manager.ready
