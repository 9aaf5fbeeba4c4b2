"""Installing and using the operator's manifests the way users do: apply, get, explain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from testsupport.cluster import Kubectl

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "config" / "samples"


def test_crds_apply_client_side_too(crds: None, kubectl: Kubectl) -> None:
    """A plain `kubectl apply` (last-applied annotation, 256 KiB limit) works, not only --server-side.
    A server-side dry run: the API server validates the patched CRDs, annotation size included, as for
    a real apply, and the installed CRDs stay as every suite installs them (rewriting five large CRDs
    twice cost the API server seconds each, and the conversion webhook's CA bundle its re-injection)."""
    out = kubectl("apply", "--dry-run=server", "-k", str(REPO / "config" / "crd"), timeout=120)
    assert out.count("customresourcedefinition.apiextensions.k8s.io/") == 5, out
    assert out.count("(server dry run)") == 5, out


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
