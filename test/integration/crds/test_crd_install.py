"""Installing and using the operator's manifests the way users do: apply, get, explain."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from testsupport.cluster import Kubectl
from testsupport.webhook import route_session_webhook

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "config" / "samples"
OPERATOR_NAMESPACE = "dynamo-system"
POLICY = "dynamo-operator-adapter-managed-replicas"
NAMESPACE_POLICY = "dynamo-operator-dgdr-own-namespace"


@pytest.fixture
def deployed(kubectl: Kubectl) -> Iterator[str]:
    """`kubectl apply --server-side -k config/default`; afterwards the cluster-wide admission policies and
    the operator Deployment are removed again so that other suites' controllers (running as admin) are
    not subject to them. Yields the apply output."""
    try:
        yield kubectl(
            "apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "default"), timeout=120
        )
    finally:
        for policy in (POLICY, NAMESPACE_POLICY):
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


def test_crds_apply_client_side_too(crds: None, kubectl: Kubectl) -> None:
    """A plain `kubectl apply` (last-applied annotation, 256 KiB limit) works, not only --server-side."""
    out = kubectl("apply", "-k", str(REPO / "config" / "crd"), timeout=120)
    assert out.count("customresourcedefinition.apiextensions.k8s.io/") == 5, out
    # Leave the CRDs owned by server-side apply again, as every other suite installs them.
    kubectl("apply", "--server-side", "--force-conflicts", "-k", str(REPO / "config" / "crd"), timeout=120)


def test_every_sample_applies(crds: None, kubectl: Kubectl, ns: str) -> None:
    """`kubectl apply --server-side -k config/samples` creates every sample object."""
    out = kubectl("apply", "--server-side", "-n", ns, "-k", str(SAMPLES), timeout=120)
    listed = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())["resources"]
    assert out.count("serverside-applied") == len(listed)
    names = kubectl("get", "-n", ns, "dgd,dgdr,dm", "-o", "name").split()
    assert len(names) == len(listed)


def test_get_prints_the_printer_columns(crds: None, kubectl: Kubectl, ns: str) -> None:
    """`kubectl get dgd,dcd,dgdr,dgdsa,dm` shows each kind's columns."""
    kubectl("apply", "--server-side", "-n", ns, "-k", str(SAMPLES), timeout=120)
    component = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "vllm-agg-frontend"},
        "spec": {"backendFramework": "vllm", "componentType": "frontend", "serviceName": "Frontend"},
    }
    adapter = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "vllm-autoscale-vllmdecodeworker"},
        "spec": {"replicas": 1, "dgdRef": {"name": "vllm-autoscale", "serviceName": "VllmDecodeWorker"}},
    }
    for obj in (component, adapter):
        kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(obj))
    kubectl(
        "patch",
        "-n",
        ns,
        "dgdsa/vllm-autoscale-vllmdecodeworker",
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"replicas": 1, "selector": "a=b"}}),
    )
    out = kubectl("get", "-n", ns, "dgd,dcd,dgdr,dgdsa,dm")
    for header in (
        "READY   STATE   REASON   BACKEND   AGE",
        "COMPONENT   AVAILABLE   BACKEND   AGE",
        "MODEL             BACKEND   STATE   DGD-STATE   AGE",
        "DGD              SERVICE            REPLICAS   READY   REASON   AGE",
        "BASEMODEL         TYPE   READY   TOTAL   AGE",
    ):
        assert header in out, out
    assert "vllm-autoscale-vllmdecodeworker   vllm-autoscale   VllmDecodeWorker   1" in out, out


def test_scale_subresource_drives_the_adapter(crds: None, kubectl: Kubectl, ns: str) -> None:
    """`kubectl scale dgdsa` writes spec.replicas through /scale, as HPA and KEDA do."""
    adapter = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": "a"},
        "spec": {"replicas": 1, "dgdRef": {"name": "g", "serviceName": "Worker"}},
    }
    kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(adapter))
    kubectl("scale", "-n", ns, "dgdsa/a", "--replicas=3")
    assert kubectl.json("get", "-n", ns, "dgdsa", "a")["spec"]["replicas"] == 3


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        pytest.param("dynamographdeployment.spec.services", "componentType", id="services"),
        pytest.param(
            "dynamographdeployment.spec.services.extraPodSpec", "mainContainer", id="extra-pod-spec"
        ),
        pytest.param(
            "dynamographdeployment.spec.services.extraPodSpec.tolerations", "effect", id="pod-field"
        ),
        pytest.param("dgd.spec.pvcs", "storageClass", id="short-name"),
        pytest.param("dynamographdeploymentrequest.spec.profilingConfig", "profilerImage", id="dgdr"),
        pytest.param("dgdsa.spec.dgdRef", "serviceName", id="dgdsa"),
        pytest.param("dm.spec.source", "hf://", id="dm"),
    ],
)
def test_explain_documents_the_fields(crds: None, kubectl: Kubectl, field: str, expected: str) -> None:
    out = kubectl("explain", field, timeout=60)
    assert "DESCRIPTION" in out or "FIELDS" in out, out
    assert expected in out, out
