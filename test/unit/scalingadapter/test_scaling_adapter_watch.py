"""Which graph events re-trigger the adapters: creation, deletion, and updates that change the replica
picture (replicas, multinode shape, running replicas, whether the service has an adapter)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeploymentscalingadapter import (
    adapter_target_changed,
    graph_replicas_changed,
    replica_picture,
)
from testsupport.dcd_view import stored_graph

# Written in v1alpha1 for brevity; every graph the predicate sees is the stored (v1beta1) form.
ALPHA: dict[str, Any] = {
    "metadata": {"name": "g", "namespace": "ns", "generation": 1},
    "spec": {"services": {"W": {"replicas": 2}, "F": {}}},
    "status": {"services": {"W": {"replicas": 2}}, "conditions": [{"type": "Ready", "status": "True"}]},
}
BASE = stored_graph(ALPHA)


def _edit(path: list[str], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(ALPHA)
    node = out
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return stored_graph(out)


def test_picture_defaults_nil_replicas_to_one_and_counts_running() -> None:
    assert replica_picture(BASE) == {"W": (2, 1, 2, False), "F": (1, 1, 0, False)}


@pytest.mark.parametrize(
    ("new", "fires"),
    [
        pytest.param(_edit(["spec", "services", "W", "replicas"], 3), True, id="replicas-edited"),
        pytest.param(_edit(["status", "services", "W", "replicas"], 3), True, id="running-changed"),
        pytest.param(_edit(["spec", "services", "W", "multinode"], {"nodeCount": 2}), True, id="multinode"),
        pytest.param(_edit(["spec", "services", "X"], {}), True, id="service-added"),
        pytest.param(
            _edit(["spec", "services", "W", "scalingAdapter"], {"enabled": True}), True, id="adapter-enabled"
        ),
        pytest.param(_edit(["spec", "services", "F", "replicas"], 1), False, id="explicit-default"),
        pytest.param(_edit(["status", "conditions"], []), False, id="status-noise"),
        pytest.param(
            _edit(["spec", "services", "W", "envs"], [{"name": "A", "value": "1"}]), False, id="other-spec"
        ),
    ],
)
def test_graph_update_filter(new: dict[str, Any], fires: bool) -> None:
    assert graph_replicas_changed.update(BASE, new) is fires


def test_graph_create_and_delete_pass() -> None:
    """Creation can make an adapter Ready; deletion makes one the graph does not own GraphNotFound."""
    assert graph_replicas_changed.create(BASE) is True
    assert graph_replicas_changed.delete(BASE) is True


ADAPTER: dict[str, Any] = {
    "metadata": {"name": "a", "namespace": "ns", "generation": 1},
    "spec": {"replicas": 1, "dgdRef": {"name": "g", "componentName": "W"}},
}


def test_rival_adapters_recheck_when_an_adapter_appears_vanishes_or_retargets() -> None:
    """Which adapter drives a service can change then; a scale request or a status write cannot."""
    retargeted = copy.deepcopy(ADAPTER)
    retargeted["spec"]["dgdRef"]["componentName"] = "F"
    scaled = copy.deepcopy(ADAPTER)
    scaled["spec"]["replicas"] = 3
    reported = {**copy.deepcopy(ADAPTER), "status": {"replicas": 1}}
    assert adapter_target_changed.create(ADAPTER) is True
    assert adapter_target_changed.delete(ADAPTER) is True
    assert adapter_target_changed.update(ADAPTER, retargeted) is True
    assert adapter_target_changed.update(ADAPTER, scaled) is False
    assert adapter_target_changed.update(ADAPTER, reported) is False
