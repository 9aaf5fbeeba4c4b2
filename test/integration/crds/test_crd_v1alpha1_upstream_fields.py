"""A v1alpha1 client keeps the fields upstream's v1alpha1 gained after v1beta1 appeared (issue #36).

Written as nvidia.com/v1alpha1 with strict field validation, stored as v1beta1 through the conversion
webhook, read back as v1alpha1: each field the client wrote is there with its value (the API server
may add defaults beside them). Before, the v1alpha1 schema lacked them: a strict write was refused as
an unknown field, and a lenient one lost them silently. The graphs are reconciled by the session
operator, which refuses those fields it does not implement; that is not what these tests look at.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from testsupport.cluster import Kubectl

pytestmark = pytest.mark.cluster

Obj = dict[str, Any]
_OVERRIDE = {"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {"packDomain": "rack"}}}
_COMPONENT_FIELDS: Obj = {
    "minAvailable": 1,
    "runtimeVersionOverride": "1.4.0",
    "topologyConstraint": {"packDomain": "rack"},
    "checkpoint": {"enabled": False, "checkpointRef": "warm-start"},
}


def _missing(written: Any, read: Any, path: str = "") -> list[str]:
    """Paths of what was written that reads back absent or different."""
    if isinstance(written, dict) and isinstance(read, dict):
        return [m for key, value in written.items() for m in _missing(value, read.get(key), f"{path}.{key}")]
    return [] if written == read else [f"{path}: wrote {written!r}, read {read!r}"]


def _round_trip(kubectl: Kubectl, ns: str, obj: Obj) -> Obj:
    kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(obj))
    short = {"DynamoGraphDeployment": "dgd", "DynamoComponentDeployment": "dcd"}.get(obj["kind"], "dgdr")
    read: Obj = json.loads(kubectl("get", "-n", ns, f"{short}/{obj['metadata']['name']}", "-o", "json"))
    assert read["apiVersion"] == "nvidia.com/v1alpha1"
    return read


def test_graph_fields_written_as_v1alpha1_read_back(crds: None, kubectl: Kubectl, ns: str) -> None:
    spec: Obj = {
        "backendFramework": "vllm",
        "priorityClassName": "high",
        "providerOverride": _OVERRIDE,
        "topologyConstraint": {"topologyProfile": "dc", "packDomain": "zone"},
        "experimental": {"kvTransferPolicy": {"labelKey": "topology.kubernetes.io/zone", "domain": "zone"}},
        "services": {
            "Frontend": {"componentType": "frontend", "replicas": 1},
            "Worker": {
                "componentType": "worker",
                "replicas": 1,
                "providerOverride": _OVERRIDE,
                "multinode": {"nodeCount": 2, "leader": {"providerOverride": _OVERRIDE}},
                **_COMPONENT_FIELDS,
            },
        },
    }
    obj = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"}
    read = _round_trip(kubectl, ns, {**obj, "metadata": {"name": "caught-up"}, "spec": spec})
    assert _missing(spec, read["spec"]) == []


def test_component_fields_written_as_v1alpha1_read_back(crds: None, kubectl: Kubectl, ns: str) -> None:
    spec: Obj = {
        "backendFramework": "vllm",
        "componentType": "worker",
        "replicas": 1,
        "resources": {"limits": {"gpu": "1"}},
        "gpuMemoryService": {"enabled": True, "extraClientContainers": ["loader"]},
        **_COMPONENT_FIELDS,
    }
    obj = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment"}
    read = _round_trip(kubectl, ns, {**obj, "metadata": {"name": "caught-up"}, "spec": spec})
    assert _missing(spec, read["spec"]) == []


def test_request_fields_written_as_v1alpha1_read_back(crds: None, kubectl: Kubectl, ns: str) -> None:
    spec: Obj = {
        "model": "Qwen/Qwen3-0.6B",
        "backend": "vllm",
        "runtimeVersionOverride": "1.4.0",
        "profilingConfig": {"profilerImage": "registry.example/p:latest", "nodeSelector": {"pool": "gpu"}},
    }
    obj = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeploymentRequest"}
    read = _round_trip(kubectl, ns, {**obj, "metadata": {"name": "caught-up"}, "spec": spec})
    assert _missing(spec, read["spec"]) == []
