"""`kubectl apply --server-side -k config/default`, as users install the operator: every object accepted,
the CRDs Established, and the operator's ServiceAccount allowed what the controllers need. Applied once for
the module (an apply rewrites five large CRDs, which costs the API server seconds of CPU)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from testsupport.cluster import Kubectl
from testsupport.webhook import route_session_webhook

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
OPERATOR_NAMESPACE = "dynamo-system"
POLICY = "dynamo-operator-adapter-managed-replicas"
NAMESPACE_POLICY = "dynamo-operator-dgdr-own-namespace"
UPDATES_POLICY = "dynamo-operator-v1beta1-updates"


@pytest.fixture(scope="module")
def deployed(kubectl: Kubectl) -> Iterator[str]:
    """`kubectl apply --server-side -k config/default`; afterwards the cluster-wide admission policies and
    the operator Deployment are removed again so that other suites' controllers (running as admin) are
    not subject to them. Yields the apply output."""
    try:
        yield kubectl(
            "apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "default"), timeout=120
        )
    finally:
        for policy in (POLICY, NAMESPACE_POLICY, UPDATES_POLICY):
            kubectl("delete", "validatingadmissionpolicybinding", policy, "--ignore-not-found", check=False)
            kubectl("delete", "validatingadmissionpolicy", policy, "--ignore-not-found", check=False)
        kubectl(
            "delete",
            "-n",
            OPERATOR_NAMESPACE,
            "deployment",
            "dynamo-operator-controller-manager",
            "--ignore-not-found",
            "--wait=false",
            check=False,
        )
        # config/default's webhook Service replaced the session's route to its in-process operator.
        route_session_webhook(kubectl.kubeconfig)


def test_default_kustomization_applies_and_establishes_the_crds(kubectl: Kubectl, deployed: str) -> None:
    """Every object of config/default is accepted; the CRDs become Established; names are prefixed."""
    rendered = list(yaml.safe_load_all(kubectl("kustomize", str(REPO / "config" / "default"))))
    assert deployed.count("serverside-applied") == len(rendered)
    crds = [d["metadata"]["name"] for d in rendered if d["kind"] == "CustomResourceDefinition"]
    assert len(crds) == 5
    kubectl("wait", "--for=condition=Established", "--timeout=60s", *[f"crd/{n}" for n in crds], timeout=70)
    deployment = kubectl.json(
        "get", "-n", OPERATOR_NAMESPACE, "deployment", "dynamo-operator-controller-manager"
    )
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "dynamo-operator-controller-manager"
    assert pod["securityContext"]["runAsNonRoot"] is True
    [container] = pod["containers"]
    assert "--leader-elect" in container["args"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    binding = kubectl.json("get", "clusterrolebinding", "dynamo-operator-manager-rolebinding")
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": "dynamo-operator-controller-manager",
            "namespace": OPERATOR_NAMESPACE,
        }
    ]
    policy_binding = kubectl.json("get", "validatingadmissionpolicybinding", POLICY)
    assert policy_binding["spec"]["policyName"] == POLICY


def test_operator_service_account_may_do_what_the_controllers_need(kubectl: Kubectl, deployed: str) -> None:
    """The RBAC of config/rbac grants the verbs the reconcilers use, and secrets stay read-only."""
    sa = f"system:serviceaccount:{OPERATOR_NAMESPACE}:dynamo-operator-controller-manager"
    allowed = [
        ("patch", "dynamographdeployments.nvidia.com"),
        ("update", "dynamographdeployments.nvidia.com/status"),
        ("create", "dynamocomponentdeployments.nvidia.com"),
        ("create", "deployments.apps"),
        ("watch", "endpointslices.discovery.k8s.io"),
        ("list", "secrets"),
        ("create", "events"),
        ("create", "jobs.batch"),
    ]
    for verb, resource in allowed:
        assert (
            kubectl("auth", "can-i", verb, resource, "--as", sa, "-n", "default", check=False).strip()
            == "yes"
        ), (
            verb,
            resource,
        )
    # Secrets: create only (the MPI key), never changed or deleted.
    for verb, resource in [
        ("update", "secrets"),
        ("delete", "secrets"),
        ("delete", "pods"),
        ("create", "nodes"),
    ]:
        assert (
            kubectl("auth", "can-i", verb, resource, "--as", sa, "-n", "default", check=False).strip() == "no"
        )
    assert (
        kubectl(
            "auth", "can-i", "update", "leases.coordination.k8s.io", "--as", sa, "-n", OPERATOR_NAMESPACE
        ).strip()
        == "yes"
    )
