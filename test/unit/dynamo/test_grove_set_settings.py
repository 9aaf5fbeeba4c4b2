"""Graph-level settings that reach the PodCliqueSet (internal/dynamo/grove/podcliqueset.py): v1beta1's
`priorityClassName` (the set's template, so every pod of it), and the
`nvidia.com/grove-update-strategy` annotation (the set's `updateStrategy`), as upstream 2a6da14c
writes them."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import convert
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph.children import grove_children
from dynamo_operator.internal.dynamo.graph.view import read_graph
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set

CTX = GenContext(namespace="ns", capabilities=Capabilities(grove=True))
STRATEGY = "nvidia.com/grove-update-strategy"


def _graph(annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    """A v1beta1 graph as the operator reads it (converted to v1alpha1)."""
    container = {"name": "main", "image": "img", "command": ["python3", "-m", "dynamo.vllm"]}
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u", "annotations": annotations or {}},
        "spec": {
            "components": [
                {"name": "W", "type": "worker", "podTemplate": {"spec": {"containers": [container]}}}
            ],
            **spec,
        },
    }
    return dict(convert(graph, "nvidia.com/v1alpha1"))


def test_the_graphs_priority_class_reaches_the_sets_template() -> None:
    pcs = desired_pod_clique_set(_graph(priorityClassName="high-priority"), CTX)
    assert pcs["spec"]["template"]["priorityClassName"] == "high-priority"


def test_without_a_priority_class_the_template_has_none() -> None:
    assert "priorityClassName" not in desired_pod_clique_set(_graph(), CTX)["spec"]["template"]


@pytest.mark.parametrize("value", ["RollingRecreate", "OnDelete"])
def test_the_update_strategy_annotation_sets_the_sets_strategy(value: str) -> None:
    pcs = desired_pod_clique_set(_graph({STRATEGY: value}), CTX)
    assert pcs["spec"]["updateStrategy"] == {"type": value}


def test_without_the_annotation_grove_keeps_its_default() -> None:
    assert "updateStrategy" not in desired_pod_clique_set(_graph(), CTX)["spec"]


@pytest.mark.parametrize("value", ["ondelete", " OnDelete ", "BlueGreen", ""])
def test_another_strategy_refuses_the_graph_naming_the_annotation(value: str) -> None:
    """Exact values only, as upstream; the graph's condition names the annotation and the choices."""
    graph = _graph({STRATEGY: value})
    with pytest.raises(GenerationError, match="supported: RollingRecreate, OnDelete") as err:
        grove_children(read_graph(graph, children=[], operator_version=""), CTX, restart_at={})
    assert err.value.field == f"metadata.annotations[{STRATEGY}]"
