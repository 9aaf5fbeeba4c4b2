"""The graph's `TopologyLevelsAvailable` condition (internal/dynamo/grove/topology_condition.py), as
upstream 2a6da14c projects Grove's `TopologyLevelsUnavailable` PodCliqueSet condition
(dgd_grove_topology_condition_reconciler.go): only for graphs that ask for placement, Unknown until
Grove reports, True when Grove reports no problem, False with a reason of its own and one Warning
Event when Grove reports one."""

from __future__ import annotations

from typing import Any

from dynamo_operator.api.conversion import convert
from dynamo_operator.internal.dynamo.grove.topology_condition import (
    CONDITION_TOPOLOGY_LEVELS_AVAILABLE,
    REASON_ALL_AVAILABLE,
    REASON_DEFINITION_NOT_FOUND,
    REASON_LEVELS_UNAVAILABLE,
    REASON_PENDING,
    topology_verdict,
)

Obj = dict[str, Any]
_MAIN = {"name": "main", "image": "img:1.5.0"}


def _graph(**spec: Any) -> Obj:
    component = {"name": "w", "type": "worker", "podTemplate": {"spec": {"containers": [_MAIN]}}}
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns"},
        "spec": {"components": [component], **spec},
    }
    return dict(convert(beta, "nvidia.com/v1alpha1"))


PLACED = _graph(topologyConstraint={"clusterTopologyName": "gpu", "packDomain": "rack"})


def _pcs(*conditions: Obj) -> Obj:
    return {"metadata": {"name": "g"}, "status": {"conditions": list(conditions)}}


def _grove(status: str, reason: str = "", message: str = "") -> Obj:
    return {"type": "TopologyLevelsUnavailable", "status": status, "reason": reason, "message": message}


def test_a_graph_asking_for_no_placement_gets_no_condition() -> None:
    assert topology_verdict(_graph(), _pcs(_grove("True")), None) is None


def test_nothing_is_said_before_the_set_exists() -> None:
    assert topology_verdict(PLACED, None, None) is None


def test_unknown_until_grove_reports() -> None:
    verdict = topology_verdict(PLACED, _pcs(), None)
    assert verdict is not None
    assert (verdict.condition.status, verdict.condition.reason, verdict.warning) == (
        "Unknown",
        REASON_PENDING,
        None,
    )


def test_true_when_grove_reports_every_level_available() -> None:
    verdict = topology_verdict(PLACED, _pcs(_grove("False", "AllClusterTopologyLevelsAvailable")), None)
    assert verdict is not None
    assert verdict.condition.type == CONDITION_TOPOLOGY_LEVELS_AVAILABLE
    assert (verdict.condition.status, verdict.condition.reason) == ("True", REASON_ALL_AVAILABLE)


def test_a_missing_binding_is_told_apart_and_warned_of() -> None:
    pcs = _pcs(_grove("True", "ClusterTopologyNotFound", 'ClusterTopologyBinding "gpu" not found'))
    verdict = topology_verdict(PLACED, pcs, None)
    assert verdict is not None
    assert (verdict.condition.status, verdict.condition.reason) == ("False", REASON_DEFINITION_NOT_FOUND)
    assert 'ClusterTopologyBinding "gpu" not found' in verdict.condition.message
    assert verdict.warning == verdict.condition.message


def test_a_level_gone_from_the_topology_is_unavailable() -> None:
    pcs = _pcs(_grove("True", "ClusterTopologyLevelsUnavailable", "level rack is missing"))
    verdict = topology_verdict(PLACED, pcs, None)
    assert verdict is not None
    assert verdict.condition.reason == REASON_LEVELS_UNAVAILABLE


def test_the_warning_is_not_repeated_while_nothing_changes() -> None:
    pcs = _pcs(_grove("True", "ClusterTopologyLevelsUnavailable", "level rack is missing"))
    first = topology_verdict(PLACED, pcs, None)
    assert first is not None
    previous = {"status": "False", "reason": first.condition.reason, "message": first.condition.message}
    again = topology_verdict(PLACED, pcs, previous)
    assert again is not None and again.warning is None
    changed = topology_verdict(PLACED, _pcs(_grove("True", "ClusterTopologyNotFound", "gone")), previous)
    assert changed is not None and changed.warning is not None


def test_grove_topology_fragments_count_as_asking_for_placement() -> None:
    fragment = {
        "apiVersion": "grove.io/v1alpha1",
        "value": {"spec": {"template": {"topologyConstraint": {"pack": {"required": "rack"}}}}},
    }
    verdict = topology_verdict(_graph(providerOverride=fragment), _pcs(), None)
    assert verdict is not None and verdict.condition.reason == REASON_PENDING


def test_groves_message_is_bounded() -> None:
    verdict = topology_verdict(PLACED, _pcs(_grove("True", "X", "m" * 100_000)), None)
    assert verdict is not None and len(verdict.condition.message) < 2_000
