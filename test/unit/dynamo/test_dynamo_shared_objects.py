"""Objects a graph shares with the other graphs of its namespace: the planner and EPP ServiceAccounts
and their RoleBindings (graph.desired_shared_objects), compared with upstream's shapes."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import (
    Capabilities,
    GenContext,
    desired_component_objects,
    desired_shared_objects,
)
from dynamo_operator.internal.dynamo.graph.generate import desired_epp_rbac, desired_graph_objects
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
EPP = service("epp", eppConfig={"config": {"plugins": []}})
EPP_ROLE = "dynamo-platform-dynamo-operator-epp"
CTX = GenContext(namespace=NS, epp_cluster_role=EPP_ROLE)
LABELS = {
    "app.kubernetes.io/component": "rbac",
    "app.kubernetes.io/managed-by": "dynamo-operator",
    "app.kubernetes.io/name": "epp-serviceaccount",
}
GRAPHS = {
    "agg": {"Epp": EPP, "Worker": service("decode")},
    "disagg": {"Epp": EPP, "Prefill": service("prefill"), "Decode": service("decode")},
    "with-frontend": {"Frontend": service("frontend"), "Epp": EPP, "Worker": service("worker")},
}


def keys(objs: list[Obj]) -> list[str]:
    return [f"{o['kind']}/{o['metadata']['name']}" for o in objs]


def without_hash(obj: Obj) -> Obj:
    out = {**obj, "metadata": dict(obj["metadata"])}
    annotations = {
        k: v
        for k, v in (out["metadata"].pop("annotations", None) or {}).items()
        if k != consts.ANNOTATION_LAST_APPLIED_HASH
    }
    if annotations:
        out["metadata"]["annotations"] = annotations
    return out


@pytest.mark.parametrize("services", list(GRAPHS.values()), ids=list(GRAPHS))
def test_epp_graph_gets_the_epp_service_account_and_binding(services: dict[str, Obj]) -> None:
    """Every graph with an epp service (agg, disagg, with a frontend) gets both objects."""
    assert keys(desired_epp_rbac(dgd(services), CTX)) == [
        "ServiceAccount/epp-serviceaccount",
        "RoleBinding/epp-serviceaccount-binding",
    ]


def test_epp_service_account_has_upstreams_shape() -> None:
    """Name, labels, no owner: as upstream's golden (backends_vllm_gaie_agg)."""
    sa, _ = desired_epp_rbac(dgd(GRAPHS["agg"]), CTX)
    assert without_hash(sa) == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "epp-serviceaccount", "namespace": NS, "labels": LABELS},
    }


def test_epp_binding_grants_the_configured_cluster_role_to_the_service_account() -> None:
    """The RoleBinding binds the namespace's EPP SA to --epp-cluster-role-name, without an owner."""
    _, binding = desired_epp_rbac(dgd(GRAPHS["disagg"]), CTX)
    assert without_hash(binding) == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "epp-serviceaccount-binding", "namespace": NS, "labels": LABELS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": EPP_ROLE},
        "subjects": [{"kind": "ServiceAccount", "name": "epp-serviceaccount", "namespace": NS}],
    }


def test_without_the_flag_the_service_account_is_created_unbound() -> None:
    """No --epp-cluster-role-name: the pods are still admitted (their SA exists), nothing is bound."""
    assert keys(desired_epp_rbac(dgd(GRAPHS["agg"]), GenContext(namespace=NS))) == [
        "ServiceAccount/epp-serviceaccount"
    ]


@pytest.mark.parametrize("ctype", ["frontend", "worker", "prefill", "decode", "planner", "main"])
def test_graph_without_epp_gets_no_epp_objects(ctype: str) -> None:
    """Only an epp service asks for the EPP ServiceAccount."""
    assert desired_epp_rbac(dgd({"S": service(ctype)}), CTX) == []


def test_two_graphs_of_a_namespace_want_the_same_objects() -> None:
    """Shared: two graphs desire identical objects (same name, content, hash), so whichever comes
    first creates them and the other finds them; neither owns them."""
    first = desired_shared_objects(dgd(GRAPHS["agg"], name="a", uid="uid-a"), CTX)
    second = desired_shared_objects(dgd(GRAPHS["disagg"], name="b", uid="uid-b"), CTX)
    assert first == second
    assert all("ownerReferences" not in o["metadata"] for o in first)


def test_shared_objects_are_not_graph_objects() -> None:
    """They are applied create-if-absent beside the graph's own objects, never pruned with them."""
    ctx = GenContext(
        namespace=NS, epp_cluster_role=EPP_ROLE, capabilities=Capabilities(gateway_inference_extension=True)
    )
    graph = desired_graph_objects(dgd(GRAPHS["agg"]), ctx)
    assert not {"ServiceAccount/epp-serviceaccount", "RoleBinding/epp-serviceaccount-binding"} & set(
        keys(graph)
    )


def test_planner_and_epp_together() -> None:
    """A graph with both gets both ServiceAccounts, planner first."""
    ctx = GenContext(namespace=NS, planner_cluster_role="planner", epp_cluster_role=EPP_ROLE)
    objs = desired_shared_objects(dgd({**GRAPHS["agg"], "Planner": service("planner")}), ctx)
    assert keys(objs) == [
        "ServiceAccount/planner-serviceaccount",
        "RoleBinding/planner-serviceaccount-binding",
        "ServiceAccount/epp-serviceaccount",
        "RoleBinding/epp-serviceaccount-binding",
    ]


def test_epp_pods_run_as_the_shared_service_account() -> None:
    """The pods name the ServiceAccount these objects create."""
    ctx = GenContext(namespace=NS, capabilities=Capabilities(gateway_inference_extension=True))
    graph = desired_graph_objects(dgd(GRAPHS["agg"]), ctx)
    [dcd] = [
        o for o in graph if o["kind"] == "DynamoComponentDeployment" and o["spec"]["componentType"] == "epp"
    ]
    [deployment] = [o for o in desired_component_objects(dcd, ctx) if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == consts.EPP_SERVICE_ACCOUNT_NAME
