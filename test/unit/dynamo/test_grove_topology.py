"""Topology placement on the Grove pathway (internal/dynamo/grove/topology.py), pinned to upstream
2a6da14c: the typed `topologyConstraint`s as its graph generator renders them (graph_test.go
TestGenerateGrovePodCliqueSet_TopologyConstraints), the `providerOverride` fragments at graph,
component and multinode leader/worker level as its Grove composer places them (provideroverride
grove_test.go TestComposeGroveOverrides), and what its admission refuses, refused here as a
GenerationError naming the field. Graphs are written as v1beta1 and read through the operator's
v1alpha1 view, as the reconciler reads them."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.api.conversion import convert, preserve
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_pod_clique_set
from dynamo_operator.internal.dynamo.grove.topology import (
    MAX_FRAGMENT_DEPTH,
    read_placement,
    repair_legacy_constraints,
)
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2

CTX = GenContext(namespace="default", capabilities=Capabilities(grove=True))
GROVE = "grove.io/v1alpha1"
_MAIN = {"name": "main", "image": "img:1.5.0", "command": ["python3", "-m", "dynamo.vllm"]}

Obj = dict[str, Any]


def _component(name: str, **fields: Any) -> Obj:
    return {"name": name, "type": "worker", "podTemplate": {"spec": {"containers": [dict(_MAIN)]}}, **fields}


def _graph(*components: Obj, **spec: Any) -> Obj:
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "test-deploy", "namespace": "default", "uid": "u"},
        "spec": {"components": list(components), **spec},
    }
    return dict(convert(beta, "nvidia.com/v1alpha1"))


def _override(target: str, value: Any) -> Obj:
    return {"apiVersion": GROVE, "target": target, "value": value}


def _placed(graph: Obj) -> tuple[Obj | None, dict[str, Obj | None], dict[str, Obj | None]]:
    """(set template's constraint, per clique, per scaling group)."""
    template = desired_pod_clique_set(graph, CTX)["spec"]["template"]
    cliques = {k["name"]: k.get("topologyConstraint") for k in template["cliques"]}
    groups = {g["name"]: g.get("topologyConstraint") for g in template.get("podCliqueScalingGroups", [])}
    return template.get("topologyConstraint"), cliques, groups


def _pack(domain: str, name: str = "") -> Obj:
    return {**({"topologyName": name} if name else {}), "pack": {"required": domain}}


# --- typed constraints: upstream's five cases -------------------------------------------------------


def test_a_graph_without_constraints_gets_none() -> None:
    assert _placed(_graph(_component("Worker", replicas=2))) == (None, {"worker": None}, {})


def test_graph_and_single_node_component_constraints_land_on_the_template_and_the_clique() -> None:
    graph = _graph(
        _component("Worker", replicas=2, topologyConstraint={"packDomain": "rack"}),
        topologyConstraint={"clusterTopologyName": "test-topology", "packDomain": "zone"},
    )
    assert _placed(graph) == (_pack("zone", "test-topology"), {"worker": _pack("rack")}, {})


def test_a_component_names_the_topology_itself_when_the_graph_packs_nothing() -> None:
    graph = _graph(
        _component("Worker", replicas=2, topologyConstraint={"packDomain": "rack"}),
        topologyConstraint={"clusterTopologyName": "test-topology"},
    )
    assert _placed(graph) == (None, {"worker": _pack("rack", "test-topology")}, {})


def test_a_multinode_components_constraint_lands_on_its_scaling_group_not_its_cliques() -> None:
    graph = _graph(
        _component(
            "Worker", replicas=2, multinode={"nodeCount": 4}, topologyConstraint={"packDomain": "block"}
        ),
        topologyConstraint={"clusterTopologyName": "test-topology", "packDomain": "zone"},
    )
    assert _placed(graph) == (
        _pack("zone", "test-topology"),
        {"worker-ldr": None, "worker-wkr": None},
        {"worker": _pack("block")},
    )


def test_a_multinode_component_names_the_topology_on_its_group_when_the_graph_packs_nothing() -> None:
    graph = _graph(
        _component(
            "Worker", replicas=2, multinode={"nodeCount": 4}, topologyConstraint={"packDomain": "block"}
        ),
        topologyConstraint={"clusterTopologyName": "test-topology"},
    )
    assert _placed(graph) == (
        None,
        {"worker-ldr": None, "worker-wkr": None},
        {"worker": _pack("block", "test-topology")},
    )


def test_a_forced_scaling_groups_constraint_lands_on_the_group() -> None:
    graph = _graph(
        _component(
            "w",
            topologyConstraint={"packDomain": "rack"},
            experimental={"grove": {"forceScalingGroup": True}},
        ),
        topologyConstraint={"clusterTopologyName": "t", "packDomain": "zone"},
    )
    assert _placed(graph)[1:] == ({"w": None}, {"w": _pack("rack")})


def test_a_graph_written_as_v1alpha1_reads_its_topology_profile() -> None:
    """v1alpha1 calls the binding `topologyProfile`; the operator's view keeps that name."""
    graph = _graph(_component("w"))
    graph["spec"]["topologyConstraint"] = {"topologyProfile": "legacy", "packDomain": "zone"}
    assert _placed(graph)[0] == _pack("zone", "legacy")


# --- provider-native fragments ------------------------------------------------------------------------


def test_fragments_reach_the_set_a_clique_a_scaling_group_and_each_multinode_role() -> None:
    """Upstream's TestComposeGroveOverrides: every context, unknown Grove fields and nulls kept."""
    root_tc = {
        "topologyName": "cluster",
        "pack": {"required": "rack"},
        "futureProviderField": {"enabled": True},
    }
    root_tc["nullableProviderField"] = None
    host = {"topologyName": "cluster", "pack": {"required": "host"}}
    graph = _graph(
        _component(
            "frontend",
            type="frontend",
            providerOverride=_override("PodCliqueTemplateSpec", {"topologyConstraint": host}),
        ),
        _component(
            "worker",
            providerOverride=_override(
                "PodCliqueScalingGroupConfig",
                {"topologyConstraint": {"topologyName": "cluster", "pack": {"required": "rack"}}},
            ),
            multinode={
                "nodeCount": 2,
                "leader": {
                    "providerOverride": _override("PodCliqueTemplateSpec", {"topologyConstraint": host})
                },
                "worker": {
                    "providerOverride": _override(
                        "PodCliqueTemplateSpec",
                        {"topologyConstraint": {**host, "newProviderField": "preserved"}},
                    )
                },
            },
        ),
        providerOverride=_override("PodCliqueSet", {"spec": {"template": {"topologyConstraint": root_tc}}}),
    )
    template_tc, cliques, groups = _placed(graph)
    assert template_tc == root_tc
    assert cliques == {
        "frontend": host,
        "worker-ldr": host,
        "worker-wkr": {**host, "newProviderField": "preserved"},
    }
    assert groups == {"worker": {"topologyName": "cluster", "pack": {"required": "rack"}}}


def test_a_role_fragment_leaves_the_other_role_alone() -> None:
    graph = _graph(
        _component(
            "w",
            multinode={
                "nodeCount": 3,
                "worker": {
                    "providerOverride": _override(
                        "PodCliqueTemplateSpec", {"topologyConstraint": _pack("host")}
                    )
                },
            },
        )
    )
    assert _placed(graph)[1:] == ({"w-ldr": None, "w-wkr": _pack("host")}, {"w": None})


def test_a_fragment_without_a_target_takes_the_one_its_place_allows() -> None:
    """Upstream's admission fills an empty target in; there is none here, so generation resolves it."""
    override = {"apiVersion": GROVE, "value": {"topologyConstraint": _pack("rack")}}
    graph = _graph(_component("w", multinode={"nodeCount": 2}, providerOverride=override))
    assert _placed(graph)[2] == {"w": _pack("rack")}


def test_fragments_kept_only_in_the_spec_payload_are_read_from_there() -> None:
    """A graph stored through a schema that prunes the fields keeps them in `nvidia.com/dgd-spec`."""
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("host")})
    graph = _graph(_component("w", multinode={"nodeCount": 2, "leader": {"providerOverride": fragment}}))
    service = graph["spec"]["services"]["w"]
    del service["multinode"]["leader"]
    payload = {"components": [{"name": "w", "multinode": {"leader": {"providerOverride": fragment}}}]}
    graph["metadata"]["annotations"] = {preserve.DGD_SPEC: preserve.encode_spec(payload)}
    assert _placed(graph)[1]["w-ldr"] == _pack("host")


# --- refused, as upstream's admission refuses ---------------------------------------------------------


def _refusal(graph: Obj) -> GenerationError:
    with pytest.raises(GenerationError) as err:
        desired_pod_clique_set(graph, CTX)
    return err.value


def test_a_role_fragment_on_a_single_node_component_is_refused() -> None:
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("host")})
    graph = _graph(_component("w"))
    graph["spec"]["services"]["w"]["multinode"] = {"nodeCount": 1, "leader": {"providerOverride": fragment}}
    assert _refusal(graph).field == "spec.services.w.multinode.leader.providerOverride"


def test_a_target_that_does_not_fit_the_components_shape_is_refused() -> None:
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("rack")})
    error = _refusal(_graph(_component("w", multinode={"nodeCount": 2}, providerOverride=fragment)))
    assert error.field == "spec.services.w.providerOverride.target"
    assert "PodCliqueScalingGroupConfig" in error.message


def test_another_providers_api_version_is_refused() -> None:
    fragment = {"apiVersion": "example.com/v1", "value": {"topologyConstraint": _pack("rack")}}
    assert _refusal(_graph(_component("w", providerOverride=fragment))).field == (
        "spec.services.w.providerOverride.apiVersion"
    )


@pytest.mark.parametrize(
    ("value", "field"),
    [
        pytest.param(
            {"topologyConstraint": _pack("rack"), "spec": {}},
            "spec.services.w.providerOverride.value.spec",
            id="other-field",
        ),
        pytest.param({}, "spec.services.w.providerOverride.value.topologyConstraint", id="no-constraint"),
        pytest.param(
            {"topologyConstraint": {"pack": {"required": 3}}},
            "spec.services.w.providerOverride.value.topologyConstraint.pack.required",
            id="wrong-type",
        ),
        pytest.param(["topologyConstraint"], "spec.services.w.providerOverride.value", id="not-an-object"),
    ],
)
def test_a_fragment_writing_more_or_other_than_a_topology_constraint_is_refused(
    value: Any, field: str
) -> None:
    fragment = _override("PodCliqueTemplateSpec", value)
    assert _refusal(_graph(_component("w", providerOverride=fragment))).field == field


def test_a_fragment_nested_beyond_the_bound_is_refused() -> None:
    deep: Any = "x"
    for _ in range(MAX_FRAGMENT_DEPTH):
        deep = {"a": deep}
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": deep})
    error = _refusal(_graph(_component("w", providerOverride=fragment)))
    assert error.field == "spec.services.w.providerOverride.value"


def test_typed_constraints_and_fragments_together_are_refused() -> None:
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("host")})
    graph = _graph(
        _component("w", providerOverride=fragment),
        topologyConstraint={"clusterTopologyName": "t", "packDomain": "zone"},
    )
    assert _refusal(graph).field == "spec.services.w.providerOverride.value"


def test_a_component_constraint_without_the_graphs_is_refused() -> None:
    graph = _graph(_component("w", topologyConstraint={"packDomain": "rack"}))
    assert _refusal(graph).field == "spec.topologyConstraint"


def test_a_graph_constraint_packing_nothing_while_no_component_packs_is_refused() -> None:
    graph = _graph(_component("w"), topologyConstraint={"clusterTopologyName": "t"})
    assert _refusal(graph).field == "spec.topologyConstraint.packDomain"


def test_placement_reads_nothing_from_a_graph_that_asks_for_none() -> None:
    assert not read_placement(_graph(_component("w"))).any


# --- sets made against Grove before v0.1.0-alpha.9 ------------------------------------------------


def _legacy(domain: str) -> Obj:
    return {"packDomain": domain}


def test_a_legacy_constraint_gains_its_name_first_and_its_current_shape_next() -> None:
    """Upstream's TestPrepareGroveTopologyConstraintUpgrade: the first update keeps the live
    `packDomain` beside the new `topologyName`; one that inherits its name migrates at once; the next
    update, against the repaired set, writes the current shape everywhere."""
    modern = {
        "topologyConstraint": _pack("zone", "grove-topology"),
        "cliques": [
            {"name": "explicit", "topologyConstraint": _pack("rack", "grove-topology")},
            {"name": "inherited", "topologyConstraint": _pack("rack")},
        ],
        "podCliqueScalingGroups": [
            {"name": "workers", "topologyConstraint": _pack("block", "grove-topology")}
        ],
    }
    live = {
        "topologyConstraint": _legacy("zone"),
        "cliques": [
            {"name": "inherited", "topologyConstraint": _legacy("rack")},
            {"name": "explicit", "topologyConstraint": _legacy("rack")},
        ],
        "podCliqueScalingGroups": [{"name": "workers", "topologyConstraint": _legacy("block")}],
    }
    first = copy.deepcopy(modern)
    repair_legacy_constraints(first, live)
    assert first["topologyConstraint"] == {"topologyName": "grove-topology", "packDomain": "zone"}
    assert first["cliques"][0]["topologyConstraint"] == {
        "topologyName": "grove-topology",
        "packDomain": "rack",
    }
    assert first["cliques"][1]["topologyConstraint"] == _pack("rack")
    assert first["podCliqueScalingGroups"][0]["topologyConstraint"] == {
        "topologyName": "grove-topology",
        "packDomain": "block",
    }
    second = copy.deepcopy(modern)
    repair_legacy_constraints(second, first)
    assert second == modern


def test_the_set_of_a_graph_keeps_the_legacy_packing_of_its_live_set() -> None:
    graph = _graph(
        _component("Worker", topologyConstraint={"packDomain": "rack"}),
        topologyConstraint={"clusterTopologyName": "grove-topology"},
    )
    live = {"spec": {"template": {"cliques": [{"name": "worker", "topologyConstraint": _legacy("rack")}]}}}
    [clique] = desired_pod_clique_set(graph, CTX, live=live)["spec"]["template"]["cliques"]
    assert clique["topologyConstraint"] == {"topologyName": "grove-topology", "packDomain": "rack"}


def test_a_fragment_replaces_a_legacy_constraint_as_written() -> None:
    """Fragments are placed after the repair, as upstream composes them after rendering."""
    graph = _graph(
        _component(
            "w",
            providerOverride=_override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("host", "t")}),
        )
    )
    live = {"spec": {"template": {"cliques": [{"name": "w", "topologyConstraint": _legacy("rack")}]}}}
    [clique] = desired_pod_clique_set(graph, CTX, live=live)["spec"]["template"]["cliques"]
    assert clique["topologyConstraint"] == _pack("host", "t")


def test_a_workers_topology_fragment_is_part_of_its_worker_hash() -> None:
    """Upstream hashes the whole worker component, its provider fragments with it."""
    fragment = _override("PodCliqueTemplateSpec", {"topologyConstraint": _pack("host")})
    plain = _graph(_component("w", multinode={"nodeCount": 2}))
    placed = _graph(_component("w", multinode={"nodeCount": 2, "leader": {"providerOverride": fragment}}))
    assert worker_hash_v2(plain, "default") != worker_hash_v2(placed, "default")
