"""A component's `minAvailable` (v1beta1) on Grove (internal/dynamo/grove/podcliqueset.py): a single-node
component's clique takes it, a multinode component's scaling group takes it (its cliques need every
rank), and unset it is 1, the value upstream's defaulting webhook stores on Grove graphs. The graph is
read as the operator reads it: v1beta1 as stored, converted to v1alpha1 by api/conversion."""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import convert, sparse
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set

CTX = GenContext(namespace="ns", capabilities=Capabilities(grove=True))
CONTAINER = {
    "name": "main",
    "image": "img",
    "command": ["python3", "-m", "dynamo.vllm"],
    "args": ["--model", "m"],
}


def _component(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "type": "worker",
        "podTemplate": {"spec": {"containers": [dict(CONTAINER)]}},
        **fields,
    }


def _read(*components: dict[str, Any]) -> dict[str, Any]:
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u"},
        "spec": {"backendFramework": "vllm", "components": list(components)},
    }
    return dict(convert(graph, "nvidia.com/v1alpha1"))


def _minimums(graph: dict[str, Any]) -> dict[str, int]:
    template = desired_pod_clique_set(graph, CTX)["spec"]["template"]
    out = {f"clique/{c['name']}": c["spec"]["minAvailable"] for c in template["cliques"]}
    out.update({f"group/{g['name']}": g["minAvailable"] for g in template.get("podCliqueScalingGroups", [])})
    return out


def test_a_single_node_components_clique_takes_its_min_available() -> None:
    assert _minimums(_read(_component("W", replicas=3, minAvailable=2))) == {"clique/w": 2}


def test_a_multinode_components_scaling_group_takes_it_and_its_cliques_need_every_rank() -> None:
    graph = _read(_component("M", replicas=3, minAvailable=2, multinode={"nodeCount": 3}))
    assert _minimums(graph) == {"clique/m-ldr": 1, "clique/m-wkr": 2, "group/m": 2}


def test_unset_it_is_one() -> None:
    graph = _read(_component("W", replicas=3), _component("M", replicas=2, multinode={"nodeCount": 2}))
    assert _minimums(graph) == {"clique/w": 1, "clique/m-ldr": 1, "clique/m-wkr": 1, "group/m": 1}


def test_the_v1alpha1_view_keeps_it_through_a_round_trip() -> None:
    """What a v1alpha1 client reads and writes back still says the same minimum: v1alpha1's schema
    holds minAvailable on the service (as upstream's v1alpha1 does), so the API server keeps it."""
    alpha = _read(_component("W", replicas=3, minAvailable=2))
    written = {**alpha, "spec": sparse.prune(alpha["spec"], sparse.schema("alpha.dgd.spec"))}
    assert written["spec"]["services"]["W"]["minAvailable"] == 2
    back = convert(convert(written, "nvidia.com/v1beta1"), "nvidia.com/v1alpha1")
    assert _minimums(dict(back)) == {"clique/w": 2}
