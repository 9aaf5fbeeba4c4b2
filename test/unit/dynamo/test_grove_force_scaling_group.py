"""v1beta1's `experimental.grove.forceScalingGroup` is not implemented: a graph asking for it is refused,
naming the field, instead of running a standalone PodClique it did not ask for
(internal/dynamo/common/not_implemented.py). `false` asks for the automatic shape, which runs."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import convert
from dynamo_operator.internal.dynamo.common.errors import FieldNotImplementedError
from dynamo_operator.internal.dynamo.common.not_implemented import check_graph, graph_uses


def _read(force: bool) -> dict[str, Any]:
    graph = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {
            "components": [
                {
                    "name": "W",
                    "type": "worker",
                    "experimental": {"grove": {"forceScalingGroup": force}},
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img"}]}},
                }
            ]
        },
    }
    return dict(convert(graph, "nvidia.com/v1alpha1"))


def test_a_forced_scaling_group_refuses_the_graph_naming_the_field() -> None:
    with pytest.raises(FieldNotImplementedError) as err:
        check_graph(_read(force=True))
    assert err.value.field == "spec.services.W.experimental.grove.forceScalingGroup"
    assert "Grove scaling group is not implemented" in str(err.value)


def test_false_is_the_automatic_shape_and_runs() -> None:
    assert graph_uses(_read(force=False)) == []
