"""The table of optional APIs (internal/optional_api_table.py) is what the rest reads: the RBAC written
from it is current, and every entry's names resolve where they are used."""

from __future__ import annotations

import dataclasses

import cluster_addons
import gen_rbac
import pytest
import yaml
from dynamo_operator.internal import kinds, optional_api_table
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.needs import NEEDS
from dynamo_operator.internal.dynamo.graph.generate import missing_apis
from dynamo_operator.internal.optional_api_table import (
    OPTIONAL_APIS,
    OptionalApi,
    Owner,
    Rule,
    capabilities,
    rbac_rules,
)
from dynamo_operator.optional_apis import capabilities_from_crds
from unit.controllers.optional_apis_testlib import crd

CHART_ROLE = gen_rbac.REPO / "deploy" / "helm" / "dynamo-operator" / "files" / "manager-role.yaml"


def test_committed_role_holds_the_tables_rbac() -> None:
    """`make manifests` was run after the last change to the table (else: run it and commit)."""
    assert gen_rbac.main(["--check"]) == 0, "stale config/rbac/role.yaml, run `make manifests`"


def test_the_charts_role_holds_every_rule_of_the_table() -> None:
    granted = yaml.safe_load(CHART_ROLE.read_text())["rules"]
    for rule in rbac_rules():
        as_written = {"apiGroups": [rule.group], "resources": list(rule.resources), "verbs": list(rule.verbs)}
        assert as_written in granted, rule


def test_a_rules_reason_wraps_into_comment_lines_above_it() -> None:
    rule = Rule("g.io", ("things", "things/scale"), ("get",), why="word " * 40)
    lines = gen_rbac.render_rule(rule)
    rule_lines = ["  - apiGroups: [g.io]", "    resources: [things, things/scale]", "    verbs: [get]"]
    assert lines[-3:] == rule_lines
    assert all(line.startswith("  # ") and len(line) <= gen_rbac.WIDTH for line in lines[:-3])


def test_generation_refuses_a_role_without_the_markers() -> None:
    with pytest.raises(ValueError, match="marker"):
        gen_rbac.generated("rules: []\n")


def test_each_entry_names_one_capabilities_field_and_every_field_has_one() -> None:
    names = [api.name for api in OPTIONAL_APIS]
    assert sorted(names) == sorted(f.name for f in dataclasses.fields(Capabilities))


def test_an_accessor_reading_no_field_is_refused() -> None:
    with pytest.raises(TypeError, match="one Capabilities field"):
        OptionalApi(capability=lambda c: True, probe=kinds.LWS)


def test_capabilities_switch_on_exactly_the_apis_given() -> None:
    lws, istio = (next(a for a in OPTIONAL_APIS if a.name == n) for n in ("lws", "istio"))
    assert capabilities([lws, istio]) == Capabilities(lws=True, istio=True)


def test_owned_kinds_are_kinds_generation_may_emit() -> None:
    """A generated object of an owned optional kind is applied through `kinds.resource_of`."""
    for api in OPTIONAL_APIS:
        for kind in api.kinds:
            if kind.owned:
                obj = {"apiVersion": kind.resource.api_version, "kind": kind.resource.kind}
                assert kinds.resource_of(obj) == kind.resource


def test_apis_with_kinds_name_the_reconciler_that_watches_them() -> None:
    assert all(api.owner in (Owner.GRAPH, Owner.COMPONENT) for api in OPTIONAL_APIS if api.kinds)


def test_add_ons_are_exactly_the_tables() -> None:
    """hack/cluster_addons.py is standard library only and cannot read the table, so this is the check
    that keeps them one list: every add-on the table names exists, and every add-on serves an entry."""
    named = {api.addon for api in OPTIONAL_APIS if api.addon}
    assert named and named == set(cluster_addons.ADDONS)


def test_a_need_naming_another_api_than_its_entrys_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = dataclasses.replace(NEEDS[0], api="example.com/v1 Other")
    monkeypatch.setattr(optional_api_table, "NEEDS", (wrong,))
    with pytest.raises(TypeError, match=r"example\.com/v1 Other"):
        optional_api_table._check_needs()


# --- the entry added through the table alone: Grove's ClusterTopologyBinding ----------------------------

TOPOLOGY = next(api for api in OPTIONAL_APIS if api.name == "grove_cluster_topology")


def test_grove_cluster_topology_is_served_when_its_crd_is() -> None:
    assert TOPOLOGY.crd_name == "clustertopologybindings.grove.io"
    assert capabilities_from_crds({TOPOLOGY.crd_name: crd(TOPOLOGY)}) == Capabilities(
        grove_cluster_topology=True
    )


def test_grove_cluster_topology_is_granted_read_only() -> None:
    rules = yaml.safe_load(gen_rbac.ROLE.read_text())["rules"]
    granted = {
        verb
        for rule in rules
        if "grove.io" in rule["apiGroups"] and "clustertopologybindings" in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted == {"get", "list", "watch"}


# --- generation names the table's APIs ------------------------------------------------------------------
# Generation is pure and cannot import the table (import-linter), so `missing_apis` keeps its own words
# for each API a feature needs; these cases check that it names exactly the entry's resource.

FEATURES = [
    pytest.param("lws", {"componentType": "worker", "multinode": {"nodeCount": 2}}, id="multinode"),
    pytest.param(
        "istio",
        {"componentType": "frontend", "ingress": {"enabled": True, "host": "h", "useVirtualService": True}},
        id="virtual-service",
    ),
    pytest.param(
        "gateway_inference_extension", {"componentType": "epp", "eppConfig": {"config": {}}}, id="epp"
    ),
    pytest.param("dra", {"componentType": "worker", "gpuMemoryService": {"enabled": True}}, id="gpu-memory"),
]


@pytest.mark.parametrize(("name", "spec"), FEATURES)
def test_missing_apis_name_the_entrys_resource(name: str, spec: dict[str, object]) -> None:
    entry = next(api for api in OPTIONAL_APIS if api.name == name)
    every = {f.name: True for f in dataclasses.fields(Capabilities)}
    graph = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment"}
    graph |= {"metadata": {"name": "g", "namespace": "ns"}, "spec": {"services": {"S": spec}}}
    ctx = GenContext(namespace="ns", capabilities=Capabilities(**(every | {name: False})))
    [err] = missing_apis(graph, ctx)
    assert err.api == f"{entry.probe.api_version} {entry.probe.kind}"
