"""The ValidatingAdmissionPolicy of config/admission as config/default deploys it, proven with
impersonated identities.

Replicas of a component with a scalingAdapter may be changed only by the operator's service account
(it mirrors the adapter), exactly as deployed (namespace and name), or by the planner service account
of the graph's own namespace; a user must scale the adapter instead.

The graph is the scaling-adapter sample in v1beta1, the stored version the policy is written against,
so these tests need no conversion webhook.
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.conversion import V1BETA1, convert
from testsupport.cluster import Kubectl, KubectlError

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "config" / "samples" / "nvidia.com_v1alpha1_dynamographdeployment_scaling_adapter.yaml"
OPERATOR_NAMESPACE = "dynamo-system"
OPERATOR_SA = "dynamo-operator-controller-manager"
OPERATOR = f"system:serviceaccount:{OPERATOR_NAMESPACE}:{OPERATOR_SA}"
OTHER_NAMESPACE = "elsewhere"
USER = "alice@example.com"
POLICY = "dynamo-operator-adapter-managed-replicas"  # as config/default names it
POLICY_ACTIVE_WITHIN = 30.0  # seconds: the API server loads a new policy asynchronously


@functools.cache
def _rendered() -> tuple[dict[str, Any], ...]:
    # Rendered and parsed once per session: with its CRDs the render is over a megabyte, and kustomize
    # plus the parse took seconds per test.
    out = subprocess.run(
        ["kubectl", "kustomize", str(REPO / "config" / "default")], capture_output=True, check=True, text=True
    ).stdout
    return tuple(d for d in yaml.load_all(out, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) if d)


def _deployed() -> list[dict[str, Any]]:
    """What `kubectl kustomize config/default` renders (the policy as users deploy it); a copy the
    caller may change."""
    return copy.deepcopy(list(_rendered()))


def _install_policy(kubectl: Kubectl, ns: str, *, operator_account: bool = True) -> Iterator[str]:
    """The deployed policy and binding, renamed for `ns` and bound to it only (so no other test is
    subject to them). The operator's namespace and ServiceAccount are applied first, as config/default
    does; without `operator_account` that ServiceAccount is deleted instead."""
    docs = _deployed()
    [vap] = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and d["metadata"]["name"] == POLICY]
    [binding] = [
        d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding" and d["metadata"]["name"] == POLICY
    ]
    operator = [
        d
        for d in docs
        if (d["kind"], d["metadata"]["name"])
        in (("Namespace", OPERATOR_NAMESPACE), ("ServiceAccount", OPERATOR_SA))
        and (operator_account or d["kind"] == "Namespace")
    ]
    name = f"{vap['metadata']['name']}-{ns}"[:63]
    vap["metadata"]["name"] = binding["metadata"]["name"] = binding["spec"]["policyName"] = name
    binding["spec"]["matchResources"] = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}
    }
    if not operator_account:
        kubectl("delete", "serviceaccount", "-n", OPERATOR_NAMESPACE, OPERATOR_SA, "--ignore-not-found")
    try:
        for doc in (*operator, vap, binding):
            kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(doc))
        yield name
    finally:
        kubectl("delete", "validatingadmissionpolicybinding", name, "--ignore-not-found", check=False)
        kubectl("delete", "validatingadmissionpolicy", name, "--ignore-not-found", check=False)


@pytest.fixture
def policy(kubectl: Kubectl, ns: str) -> Iterator[str]:
    """The policy of config/default, bound to `ns` only."""
    yield from _install_policy(kubectl, ns)


@pytest.fixture
def policy_without_operator_account(kubectl: Kubectl, ns: str) -> Iterator[str]:
    """The same policy, the operator's ServiceAccount absent (not installed yet, or deleted)."""
    yield from _install_policy(kubectl, ns, operator_account=False)


@pytest.fixture
def graph(crds: None, kubectl: Kubectl, ns: str) -> str:
    """The scaling-adapter sample, and RBAC letting the user and every service account the tests
    impersonate (trusted or not) edit graphs."""
    sample = convert(yaml.safe_load(SAMPLE.read_text()), V1BETA1)
    kubectl("apply", "--server-side", "-n", ns, "-f", "-", stdin=json.dumps(sample))
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "dgd-editor"},
        "rules": [
            {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeployments"], "verbs": ["get", "patch"]}
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "dgd-editor"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "dgd-editor"},
        "subjects": [
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": USER},
            {"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": OPERATOR_NAMESPACE},
            {"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": ns},
            # Same names, other namespaces: impostors.
            {"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": ns},
            {"kind": "ServiceAccount", "name": "planner-serviceaccount", "namespace": OTHER_NAMESPACE},
        ],
    }
    for doc in (role, binding):
        kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(doc))
    return "dynamographdeployments.v1beta1.nvidia.com/vllm-autoscale"


def _graph_path(ns: str, resource: str) -> str:
    """`dynamographdeployments.v1beta1.nvidia.com/<name>` as an API path."""
    kind, name = resource.split("/")
    plural, version, group = kind.split(".", 2)
    return f"/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}"


def _component(kubectl: Kubectl, ns: str, resource: str, name: str) -> tuple[int, dict[str, Any]]:
    """The index and body of the named component in `spec.components`."""
    if (direct := kubectl.direct) is None:
        graph = kubectl.json("get", "-n", ns, resource)
    else:
        status, body = direct.request("GET", _graph_path(ns, resource))
        assert status == 200, body
        graph = json.loads(body)
    components = graph["spec"]["components"]
    return next((i, c) for i, c in enumerate(components) if c["name"] == name)


def _patch_component(
    kubectl: Kubectl,
    ns: str,
    resource: str,
    name: str,
    change: tuple[str, Any],
    *,
    as_user: str,
    dry_run: bool = False,
) -> str:
    """Set one field (`change`: field, value) of the named component, as `as_user`. Straight to the API
    server where the kubeconfig allows it (the policy's refusal is the server's message either way):
    the wait for the policy to load polled with two kubectl processes a round."""
    index, _ = _component(kubectl, ns, resource, name)
    field, value = change
    body = [{"op": "add", "path": f"/spec/components/{index}/{field}", "value": value}]
    if (direct := kubectl.direct) is None:
        extra = ["--dry-run=server"] if dry_run else []
        return kubectl(
            "patch", "-n", ns, resource, "--type=json", "-p", json.dumps(body), f"--as={as_user}", *extra
        )
    path = _graph_path(ns, resource) + ("?dryRun=All" if dry_run else "")
    argv = ["patch", resource, f"--as={as_user}"]
    return direct.kubectl_like(
        argv, "PATCH", path, body, content_type="application/json-patch+json", as_user=as_user
    )


def _set_replicas(
    kubectl: Kubectl,
    ns: str,
    resource: str,
    service: str,
    replicas: int,
    *,
    as_user: str,
    dry_run: bool = False,
) -> str:
    return _patch_component(
        kubectl, ns, resource, service, ("replicas", replicas), as_user=as_user, dry_run=dry_run
    )


def _replicas(kubectl: Kubectl, ns: str, resource: str, service: str) -> int:
    return int(_component(kubectl, ns, resource, service)[1].get("replicas", 1))


def _user_refused_once_policy_is_active(kubectl: Kubectl, ns: str, resource: str) -> str:
    """The user's replica edit of the adapter-managed service, retried until the policy has loaded.
    Server-side dry runs: admission judges them as it judges a write, and an edit let through
    before the policy loaded changes nothing (a stored one would scale the graph's workers, and the
    session operator would reconcile each)."""
    deadline = time.monotonic() + POLICY_ACTIVE_WITHIN
    replicas = 10
    while True:
        replicas += 1
        try:
            _set_replicas(kubectl, ns, resource, "VllmDecodeWorker", replicas, as_user=USER, dry_run=True)
        except KubectlError as refused:
            return refused.stderr
        if time.monotonic() > deadline:
            raise AssertionError(f"the policy did not refuse the user's edit within {POLICY_ACTIVE_WITHIN} s")
        time.sleep(0.2)


def test_user_may_not_change_adapter_managed_replicas(
    kubectl: Kubectl, ns: str, graph: str, policy: str
) -> None:
    """The refusal names the service and the field and tells the user what to do instead."""
    error = _user_refused_once_policy_is_active(kubectl, ns, graph)
    assert (
        "spec.components[VllmDecodeWorker].replicas is managed by a DynamoGraphDeploymentScalingAdapter"
        in error
    )
    assert "kubectl scale dgdsa" in error
    assert policy in error


@pytest.mark.parametrize(
    "identity",
    [
        pytest.param(OPERATOR, id="operator-service-account"),
        pytest.param("system:serviceaccount:{ns}:planner-serviceaccount", id="planner-service-account"),
    ],
)
def test_operator_and_planner_may_change_adapter_managed_replicas(
    kubectl: Kubectl, ns: str, graph: str, policy: str, identity: str
) -> None:
    _user_refused_once_policy_is_active(kubectl, ns, graph)
    before = _replicas(kubectl, ns, graph, "VllmDecodeWorker")
    _set_replicas(kubectl, ns, graph, "VllmDecodeWorker", before + 1, as_user=identity.format(ns=ns))
    assert _replicas(kubectl, ns, graph, "VllmDecodeWorker") == before + 1


def test_user_may_still_edit_everything_else(kubectl: Kubectl, ns: str, graph: str, policy: str) -> None:
    """Replicas of services without an adapter, and other fields of the adapter's service, stay editable."""
    _user_refused_once_policy_is_active(kubectl, ns, graph)
    _set_replicas(kubectl, ns, graph, "Frontend", 2, as_user=USER)
    assert _replicas(kubectl, ns, graph, "Frontend") == 2
    _patch_component(kubectl, ns, graph, "VllmDecodeWorker", ("sharedMemorySize", "2Gi"), as_user=USER)
    assert _component(kubectl, ns, graph, "VllmDecodeWorker")[1]["sharedMemorySize"] == "2Gi"


def test_other_service_accounts_are_refused(kubectl: Kubectl, ns: str, graph: str, policy: str) -> None:
    """Only the exact operator and planner account names are trusted, not any service account."""
    _user_refused_once_policy_is_active(kubectl, ns, graph)
    kubectl(
        "create",
        "rolebinding",
        "-n",
        ns,
        "other-sa",
        "--role=dgd-editor",
        f"--serviceaccount={ns}:dynamo-operator",
    )
    with pytest.raises(KubectlError, match="managed by a DynamoGraphDeploymentScalingAdapter"):
        _set_replicas(
            kubectl, ns, graph, "VllmDecodeWorker", 7, as_user=f"system:serviceaccount:{ns}:dynamo-operator"
        )


def test_deployed_policy_trusts_the_operator_service_account_by_namespace_and_name() -> None:
    """config/default's namespace and namePrefix reach the policy's identity variables: the exact
    identity, and no param the binding would have to find."""
    docs = _deployed()
    [vap] = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy" and d["metadata"]["name"] == POLICY]
    [binding] = [
        d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding" and d["metadata"]["name"] == POLICY
    ]
    [sa] = [d for d in docs if d["kind"] == "ServiceAccount"]
    variables = {v["name"]: v["expression"] for v in vap["spec"]["variables"]}
    assert (variables["operatorNs"], variables["operatorSa"]) == (
        f"'{OPERATOR_NAMESPACE}'",
        f"'{OPERATOR_SA}'",
    )
    assert "paramKind" not in vap["spec"]
    assert "paramRef" not in binding["spec"]
    assert (sa["metadata"]["namespace"], sa["metadata"]["name"]) == (OPERATOR_NAMESPACE, OPERATOR_SA)


@pytest.mark.parametrize(
    "identity",
    [
        pytest.param(f"system:serviceaccount:{{ns}}:{OPERATOR_SA}", id="operator-name-in-graph-namespace"),
        pytest.param(
            f"system:serviceaccount:{OTHER_NAMESPACE}:planner-serviceaccount", id="planner-of-other-namespace"
        ),
    ],
)
def test_same_named_service_accounts_elsewhere_are_refused(
    kubectl: Kubectl, ns: str, graph: str, policy: str, identity: str
) -> None:
    """Trust is bound to the operator's namespace and to the planner of the graph's own namespace:
    an account merely named like them is an ordinary user."""
    _user_refused_once_policy_is_active(kubectl, ns, graph)
    with pytest.raises(KubectlError, match="managed by a DynamoGraphDeploymentScalingAdapter"):
        _set_replicas(kubectl, ns, graph, "VllmDecodeWorker", 7, as_user=identity.format(ns=ns))


def test_without_the_operator_service_account_users_replica_edits_are_still_refused(
    kubectl: Kubectl, ns: str, graph: str, policy_without_operator_account: str
) -> None:
    """The policy reads no object to decide: with the operator's ServiceAccount absent, a user's
    replica edit of an adapter-managed service is refused as before (it once depended on that
    ServiceAccount as the binding's param)."""
    error = _user_refused_once_policy_is_active(kubectl, ns, graph)
    assert policy_without_operator_account in error
    assert "replicas is managed by a DynamoGraphDeploymentScalingAdapter" in error


@pytest.mark.parametrize("identity", [pytest.param(USER, id="user"), pytest.param(OPERATOR, id="operator")])
def test_without_the_operator_service_account_other_graph_edits_go_through(
    kubectl: Kubectl, ns: str, graph: str, policy_without_operator_account: str, identity: str
) -> None:
    """Only what the policy is about is refused: replicas of services without an adapter, and other
    fields of the adapter's service, stay editable (with that ServiceAccount as a param and
    parameterNotFoundAction Deny, every update of the graph was refused)."""
    _user_refused_once_policy_is_active(kubectl, ns, graph)
    _set_replicas(kubectl, ns, graph, "Frontend", 3, as_user=identity)
    assert _replicas(kubectl, ns, graph, "Frontend") == 3
    _patch_component(kubectl, ns, graph, "VllmDecodeWorker", ("sharedMemorySize", "3Gi"), as_user=identity)
    assert _component(kubectl, ns, graph, "VllmDecodeWorker")[1]["sharedMemorySize"] == "3Gi"
