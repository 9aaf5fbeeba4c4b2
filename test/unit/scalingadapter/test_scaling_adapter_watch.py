"""Which graph updates re-trigger the adapters: only a change of the replica picture."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeploymentscalingadapter import (
    graph_replicas_changed,
    replica_picture,
)

BASE: dict[str, Any] = {
    "metadata": {"name": "g", "namespace": "ns", "generation": 1},
    "spec": {"services": {"W": {"replicas": 2}, "F": {}}},
    "status": {"services": {"W": {"replicas": 2}}, "conditions": [{"type": "Ready", "status": "True"}]},
}


def _edit(path: list[str], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(BASE)
    node = out
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return out


def test_picture_defaults_nil_replicas_to_one_and_counts_running() -> None:
    assert replica_picture(BASE) == {"W": (2, 1, 2), "F": (1, 1, 0)}


@pytest.mark.parametrize(
    ("new", "fires"),
    [
        pytest.param(_edit(["spec", "services", "W", "replicas"], 3), True, id="replicas-edited"),
        pytest.param(_edit(["status", "services", "W", "replicas"], 3), True, id="running-changed"),
        pytest.param(_edit(["spec", "services", "W", "multinode"], {"nodeCount": 2}), True, id="multinode"),
        pytest.param(_edit(["spec", "services", "X"], {}), True, id="service-added"),
        pytest.param(_edit(["spec", "services", "F", "replicas"], 1), False, id="explicit-default"),
        pytest.param(_edit(["status", "conditions"], []), False, id="status-noise"),
        pytest.param(
            _edit(["spec", "services", "W", "envs"], [{"name": "A", "value": "1"}]), False, id="other-spec"
        ),
    ],
)
def test_graph_update_filter(new: dict[str, Any], fires: bool) -> None:
    assert graph_replicas_changed.update(BASE, new) is fires


def test_graph_create_passes_and_delete_does_not() -> None:
    assert graph_replicas_changed.create(BASE) is True
    assert graph_replicas_changed.delete(BASE) is False
