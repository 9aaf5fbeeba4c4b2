"""The API server's verdict on frontendSidecar, gpuMemoryService and failover: upstream's admission
defaults are stored, upstream's webhook rules are CEL rules naming the field, upstream's examples pass.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from testsupport.cluster import Kubectl, KubectlError

pytestmark = pytest.mark.cluster

Obj = dict[str, Any]
EXAMPLES = Path(__file__).resolve().parents[4] / "shared" / "upstream-examples"
GMS = {"enabled": True}
GPUS = {"limits": {"gpu": "2"}}


def create(kubectl: Kubectl, ns: str, obj: Obj) -> str:
    return kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(obj))


def graph(name: str = "addons", **worker: Any) -> Obj:
    """A frontend and a vLLM worker; `worker` fields are set on the worker."""
    spec: Obj = {
        "componentType": "worker",
        "extraPodSpec": {
            "mainContainer": {"image": "r.example/w:1", "command": ["python3", "-m", "dynamo.vllm"]}
        },
        **copy.deepcopy(worker),
    }
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "annotations": {"nvidia.com/dynamo-kube-discovery-mode": "container"}},
        "spec": {"services": {"Frontend": {"componentType": "frontend"}, "Worker": spec}},
    }


def component(**spec: Any) -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "component"},
        "spec": {"componentType": "worker", **spec},
    }


INVALID = [
    pytest.param(
        graph(resources=GPUS, failover={"enabled": True}),
        "failover",
        "requires gpuMemoryService.enabled",
        id="failover-without-gms",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService={"enabled": False}, failover={"enabled": True}),
        "failover",
        "requires gpuMemoryService.enabled",
        id="failover-with-gms-off",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService={"enabled": True, "mode": "interPod"}),
        "gpuMemoryService.mode",
        'mode "interPod" is not supported yet',
        id="gms-inter-pod",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService=GMS, failover={"enabled": True, "mode": "interPod"}),
        "failover.mode",
        "must match gpuMemoryService.mode",
        id="failover-mode-mismatch",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService={"enabled": True, "mode": "remote"}),
        "gpuMemoryService.mode",
        "Unsupported value",
        id="gms-mode-enum",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService={}),
        "gpuMemoryService.enabled",
        "Required value",
        id="gms-enabled-required",
    ),
    pytest.param(
        graph(failover={"mode": "intraPod"}),
        "failover.enabled",
        "Required value",
        id="failover-enabled-required",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService=GMS, failover={"enabled": True, "numShadows": 2}),
        "failover.numShadows",
        "less than or equal to 1",
        id="num-shadows-above-1",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService=GMS, failover={"enabled": True, "numShadows": 0}),
        "failover.numShadows",
        "greater than or equal to 1",
        id="num-shadows-below-1",
    ),
    pytest.param(
        graph(resources=GPUS, gpuMemoryService=GMS, componentType="frontend"),
        "gpuMemoryService",
        "only supported for worker components",
        id="gms-on-a-frontend",
    ),
    pytest.param(
        graph(gpuMemoryService=GMS), "resources", "requires a GPU count", id="gms-without-resources"
    ),
    pytest.param(
        graph(gpuMemoryService=GMS, resources={"limits": {"cpu": "4"}}),
        "resources",
        "requires a GPU count",
        id="gms-without-gpus",
    ),
    pytest.param(
        graph(frontendSidecar={}), "frontendSidecar.image", "Required value", id="sidecar-image-required"
    ),
    pytest.param(
        graph(frontendSidecar={"image": "fe:1", "imag": "x"}),
        "frontendSidecar.imag",
        "unknown field",
        id="sidecar-typo",
    ),
    pytest.param(
        component(gpuMemoryService=GMS), "spec.resources", "requires a GPU count", id="dcd-gms-without-gpus"
    ),
    pytest.param(
        component(resources=GPUS, failover={"enabled": True}),
        "spec.failover",
        "requires gpuMemoryService.enabled",
        id="dcd-failover-without-gms",
    ),
]


@pytest.mark.parametrize(("obj", "field", "message"), INVALID)
def test_invalid_add_on_is_refused_naming_the_field(
    *, crds: None, kubectl: Kubectl, ns: str, obj: Obj, field: str, message: str
) -> None:
    with pytest.raises(KubectlError) as refused:
        create(kubectl, ns, obj)
    error = refused.value.stderr
    assert field in error, error
    assert message in error, error


VALID = [
    pytest.param(graph(resources=GPUS, gpuMemoryService=GMS), id="gms-limits"),
    pytest.param(graph(resources={"requests": {"gpu": "1"}}, gpuMemoryService=GMS), id="gms-requests-only"),
    pytest.param(graph(resources=GPUS, gpuMemoryService=GMS, failover={"enabled": True}), id="failover"),
    pytest.param(graph(gpuMemoryService={"enabled": False}), id="gms-off-needs-nothing"),
    pytest.param(graph(failover={"enabled": False}), id="failover-off-needs-nothing"),
    pytest.param(
        graph(
            frontendSidecar={
                "image": "fe:1",
                "args": ["-m", "dynamo.frontend"],
                "envFromSecret": "s",
                "envs": [{"name": "X", "value": "1"}],
            }
        ),
        id="sidecar-every-field",
    ),
    pytest.param(
        graph(
            frontendSidecar={"image": "fe:1"}, extraPodSpec={"containers": [{"name": "other", "image": "x"}]}
        ),
        id="sidecar-beside-another-container",
    ),
]


@pytest.mark.parametrize("obj", VALID)
def test_valid_add_on_is_accepted(crds: None, kubectl: Kubectl, ns: str, obj: Obj) -> None:
    create(kubectl, ns, obj)


@pytest.mark.parametrize(
    "example",
    [
        "backends_vllm_agg_gms",
        "backends_vllm_agg_failover",
        "backends_vllm_gaie_agg",
        "backends_vllm_gaie_disagg",
    ],
)
def test_upstreams_examples_are_accepted_unchanged(
    crds: None, kubectl: Kubectl, ns: str, example: str
) -> None:
    """The manifests upstream publishes for these fields pass `kubectl create` (strict validation)."""
    kubectl("create", "-n", ns, "-f", str(EXAMPLES / f"{example}.yaml"))


def test_upstreams_admission_defaults_are_stored(crds: None, kubectl: Kubectl, ns: str) -> None:
    """`{enabled: true}` is stored as upstream stores it (so the worker hash is upstream's)."""
    create(kubectl, ns, graph("defaults", resources=GPUS, gpuMemoryService=GMS, failover={"enabled": True}))
    worker = kubectl.json("get", "-n", ns, "dgd", "defaults")["spec"]["services"]["Worker"]
    assert worker["gpuMemoryService"] == {
        "enabled": True,
        "mode": "intraPod",
        "deviceClassName": "gpu.nvidia.com",
    }
    assert worker["failover"] == {"enabled": True, "mode": "intraPod", "numShadows": 1}


def test_example_files_parse() -> None:
    """Guard: the examples this suite applies are where the goldens' README says."""
    for name in ("backends_vllm_agg_gms", "backends_vllm_gaie_agg"):
        [doc] = list(yaml.safe_load_all((EXAMPLES / f"{name}.yaml").read_text()))
        assert doc["kind"] == "DynamoGraphDeployment"
