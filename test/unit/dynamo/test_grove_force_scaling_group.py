"""v1beta1's `experimental.grove.forceScalingGroup` (internal/dynamo/grove/podcliqueset.py), as upstream
2a6da14c renders it: a single-node component runs as a PodCliqueScalingGroup of one single-pod clique,
the group's replicas carrying the component's and its minAvailable the component's; status and scaling
then address the scaling group. v1alpha1 has no place for the field: the operator's view of a v1beta1
graph keeps it in the `nvidia.com/dgd-spec` payload, read from there."""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import convert
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.grove.podcliqueset import (
    desired_pod_clique_set,
    grove_name_problems,
    grove_services,
    pod_clique_set_name,
)

CTX = GenContext(namespace="ns", capabilities=Capabilities(grove=True))


def _read(force: bool, *, name: str = "g", service: str = "W", **component: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "img", "command": ["python3", "-m", "dynamo.vllm"]}
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": "ns", "uid": "u"},
        "spec": {
            "components": [
                {
                    "name": service,
                    "type": "worker",
                    "experimental": {"grove": {"forceScalingGroup": force}},
                    "podTemplate": {"spec": {"containers": [container]}},
                    **component,
                }
            ]
        },
    }
    return dict(convert(graph, "nvidia.com/v1alpha1"))


def _shape(graph: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    template = desired_pod_clique_set(graph, CTX)["spec"]["template"]
    cliques = {
        k["name"]: {x: k["spec"][x] for x in ("replicas", "minAvailable")} for k in template["cliques"]
    }
    return cliques, template.get("podCliqueScalingGroups", [])


def test_a_forced_component_is_a_scaling_group_of_one_single_pod_clique() -> None:
    cliques, groups = _shape(_read(True, replicas=3, minAvailable=2))
    assert cliques == {"w": {"replicas": 1, "minAvailable": 1}}
    assert groups == [{"name": "w", "cliqueNames": ["w"], "replicas": 3, "minAvailable": 2}]


def test_false_is_the_automatic_shape_a_standalone_clique() -> None:
    cliques, groups = _shape(_read(False, replicas=3, minAvailable=2))
    assert cliques == {"w": {"replicas": 3, "minAvailable": 2}}
    assert groups == []


def test_status_and_scaling_address_the_scaling_group() -> None:
    [gs] = grove_services(_read(True, replicas=3), CTX)
    assert (gs.kind, gs.object_name) == (consts.KIND_POD_CLIQUE_SCALING_GROUP, "g-0-w")


def test_the_group_and_its_clique_both_count_against_groves_name_budget() -> None:
    """Set + group + clique within 45: a 10-character service leaves a forced group's set 25
    characters (a standalone clique's 35), so a 30-character graph name is cut only when forced."""
    name = "a-graph-name-of-30-characters0"
    forced, standalone = (_read(f, name=name, service="w" * 10) for f in (True, False))
    assert len(pod_clique_set_name(forced)) == 25
    assert pod_clique_set_name(standalone) == name
    assert grove_name_problems(forced, CTX) == []
