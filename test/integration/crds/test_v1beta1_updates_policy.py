"""The v1beta1 update policy of config/admission, bound to one namespace, on a real API server.

The v1alpha1 CRDs refuse some changes in CEL; the v1beta1 CRDs are upstream's and leave them to
upstream's webhook. The policy refuses the same changes of a v1beta1 write: a graph's or component's
`backendFramework`, a component switching between single-node and multinode, a graph's restart id
while a rolling update runs, a request's spec once profiling started. Other updates pass.

Two rules read the status, which the session operator also writes; those tests set it and update at
once, and try again when the operator rewrote the status in between (the refusal names the phase it
read, so an admitted update can only mean that race).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from testsupport import eventually_sync
from testsupport.admission import namespace_binding
from testsupport.cluster import Kubectl, KubectlError

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[3]
POLICY_FILE = REPO / "config" / "admission" / "v1beta1_updates_policy.yaml"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"
POLICY_ACTIVE_WITHIN = 30.0  # seconds: the API server loads a new policy asynchronously
ATTEMPTS = 5


def graph(name: str, *, multinode: bool = False) -> dict[str, Any]:
    main = {"name": "main", "image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}
    worker: dict[str, Any] = {
        "name": "worker",
        "type": "worker",
        "podTemplate": {"spec": {"containers": [main]}},
    }
    if multinode:
        worker["multinode"] = {"nodeCount": 2}
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "components": [worker]},
    }


def component(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "vllm",
            "type": "frontend",
            "podTemplate": {"spec": {"containers": [{"name": "main", "image": IMAGE}]}},
        },
    }


def request(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name},
        "spec": {"model": "Qwen/Qwen3-0.6B", "backend": "vllm", "image": "registry.example/planner:1.5.0"},
    }


def write(kubectl: Kubectl, ns: str, obj: dict[str, Any]) -> str:
    """Replace (or create) `obj` as a user would; the refusal's text, "" when admitted."""
    try:
        kubectl("apply", "--server-side", "--force-conflicts", "-n", ns, "-f", "-", stdin=json.dumps(obj))
    except KubectlError as err:
        return str(err)
    return ""


def set_status(kubectl: Kubectl, ns: str, resource: str, name: str, status: dict[str, Any]) -> None:
    patch = json.dumps({"status": status})
    kubectl("patch", "-n", ns, resource, name, "--subresource=status", "--type=merge", "-p", patch)


@pytest.fixture
def policy(crds: None, kubectl: Kubectl, ns: str) -> Iterator[None]:
    """The shipped policy under a name of its own, bound to `ns` only, in force once yielded (a
    backendFramework change of a probe graph is refused)."""
    vap = yaml.safe_load(POLICY_FILE.read_text())
    name = f"{vap['metadata']['name']}-{ns}"[:63].rstrip("-.")
    vap["metadata"]["name"] = name
    for doc in (vap, namespace_binding(name, ns)):
        kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(doc))
    try:
        probe = graph("probe")
        changed = copy.deepcopy(probe)
        changed["spec"]["backendFramework"] = "sglang"

        def refused() -> str:
            # Back and forth: each write changes the framework, whichever it holds now.
            return write(kubectl, ns, probe) or write(kubectl, ns, changed)

        eventually_sync(refused, until=bool, timeout=POLICY_ACTIVE_WITHIN)
        yield
    finally:
        kubectl("delete", "validatingadmissionpolicybinding", name, "--ignore-not-found", check=False)
        kubectl("delete", "validatingadmissionpolicy", name, "--ignore-not-found", check=False)


def test_a_graphs_backend_framework_cannot_change(kubectl: Kubectl, ns: str, policy: None) -> None:
    original = graph("g")
    assert write(kubectl, ns, original) == ""
    changed = copy.deepcopy(original)
    changed["spec"]["backendFramework"] = "sglang"
    assert 'spec.backendFramework: is immutable and cannot be changed after creation (was "vllm")' in write(
        kubectl, ns, changed
    )


def test_other_graph_updates_pass(kubectl: Kubectl, ns: str, policy: None) -> None:
    original = graph("g")
    assert write(kubectl, ns, original) == ""
    changed = copy.deepcopy(original)
    changed["spec"]["components"][0]["replicas"] = 3
    changed["spec"]["components"].append({**copy.deepcopy(changed["spec"]["components"][0]), "name": "more"})
    assert write(kubectl, ns, changed) == ""


@pytest.mark.parametrize("multinode_before", [False, True])
def test_a_component_cannot_switch_between_single_node_and_multinode(
    kubectl: Kubectl, ns: str, policy: None, multinode_before: bool
) -> None:
    assert write(kubectl, ns, graph("g", multinode=multinode_before)) == ""
    refused = write(kubectl, ns, graph("g", multinode=not multinode_before))
    assert "spec.components: a component cannot switch between single-node and multinode (worker)" in refused


def test_a_components_backend_framework_cannot_change(kubectl: Kubectl, ns: str, policy: None) -> None:
    original = component("c")
    assert write(kubectl, ns, original) == ""
    changed = copy.deepcopy(original)
    changed["spec"]["backendFramework"] = "trtllm"
    assert "spec.backendFramework: is immutable" in write(kubectl, ns, changed)


def refused_in_phase(attempt: Callable[[], str], expected: str) -> str:
    """`attempt()` (set the status, then update) until refused with `expected` in the text."""
    told = ""
    for _ in range(ATTEMPTS):
        told = attempt()
        if expected in told:
            return told
    return told


def test_a_graphs_restart_id_cannot_change_while_a_rolling_update_runs(
    kubectl: Kubectl, ns: str, policy: None
) -> None:
    original = graph("g")
    assert write(kubectl, ns, original) == ""
    restarted = copy.deepcopy(original)
    restarted["spec"]["restart"] = {"id": "r1"}

    def attempt() -> str:
        set_status(
            kubectl,
            ns,
            "dynamographdeployments.v1beta1.nvidia.com",
            "g",
            {"rollingUpdate": {"phase": "InProgress"}},
        )
        return write(kubectl, ns, restarted)

    expected = "spec.restart.id: cannot be changed while a rolling update is InProgress"
    assert expected in refused_in_phase(attempt, expected)


def test_a_requests_spec_cannot_change_once_profiling_started(
    kubectl: Kubectl, ns: str, policy: None
) -> None:
    original = request("r")
    assert write(kubectl, ns, original) == ""
    changed = copy.deepcopy(original)
    changed["spec"]["searchStrategy"] = "thorough"

    def attempt() -> str:
        set_status(
            kubectl, ns, "dynamographdeploymentrequests.v1beta1.nvidia.com", "r", {"phase": "Profiling"}
        )
        return write(kubectl, ns, changed)

    expected = "spec: updates are forbidden while the request is in phase Profiling"
    assert expected in refused_in_phase(attempt, expected)
