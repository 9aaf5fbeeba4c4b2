"""Fields only the Grove pathway implements are refused on the component pathway, naming the field and
why the graph is not on Grove (graph/grove_only.py)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import Capabilities, GenContext, desired_graph_objects
from dynamo_operator.internal.dynamo.graph.grove_only import GroveOnlyFieldError, grove_only_fields
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
NO_GROVE = GenContext(namespace=NS, capabilities=Capabilities(lws=True))
GROVE = GenContext(namespace=NS, capabilities=Capabilities(lws=True, grove=True))
PACK = {"packDomain": "rack"}
FRAGMENT = {"apiVersion": "grove.io/v1alpha1", "value": {"topologyConstraint": {"packDomain": "rack"}}}


@pytest.mark.parametrize(
    ("graph", "field"),
    [
        pytest.param(
            dgd({"F": service("frontend")}, priorityClassName="high"), "spec.priorityClassName", id="priority"
        ),
        pytest.param(
            dgd({"F": service("frontend")}, topologyConstraint=PACK),
            "spec.topologyConstraint",
            id="graph-topology",
        ),
        pytest.param(
            dgd({"F": service("frontend")}, providerOverride=FRAGMENT),
            "spec.providerOverride",
            id="graph-override",
        ),
        pytest.param(
            dgd({"W": service("worker", topologyConstraint=PACK)}),
            "spec.services.W.topologyConstraint",
            id="service-topology",
        ),
        pytest.param(
            dgd({"W": service("worker", providerOverride=FRAGMENT)}),
            "spec.services.W.providerOverride",
            id="service-override",
        ),
        pytest.param(
            dgd(
                {"W": service("worker", multinode={"nodeCount": 2, "worker": {"providerOverride": FRAGMENT}})}
            ),
            "spec.services.W.multinode.worker.providerOverride",
            id="role-override",
        ),
    ],
)
def test_a_grove_only_field_refuses_a_graph_on_the_component_pathway(graph: Obj, field: str) -> None:
    assert grove_only_fields(graph) == [field]
    with pytest.raises(GroveOnlyFieldError) as raised:
        desired_graph_objects(graph, NO_GROVE)
    assert raised.value.field == field
    assert raised.value.reason == "GrovePathwayRequired"
    assert "requires the Grove pathway" in raised.value.message


def test_a_graph_without_grove_only_fields_is_not_refused() -> None:
    assert grove_only_fields(dgd({"F": service("frontend"), "W": service("worker")})) == []


@pytest.mark.parametrize(
    ("annotations", "ctx", "says"),
    [
        pytest.param(
            {consts.ANNOTATION_WORKLOAD_PROVIDER: "component"},
            GROVE,
            "records workload provider",
            id="recorded",
        ),
        pytest.param(
            {consts.ANNOTATION_ENABLE_GROVE: "false"}, GROVE, "remove or unset annotation", id="opted-out"
        ),
        pytest.param({}, NO_GROVE, "Grove is not available", id="no-grove"),
    ],
)
def test_the_refusal_says_why_the_graph_is_not_on_grove(
    annotations: dict[str, str], ctx: GenContext, says: str
) -> None:
    graph = dgd({"F": service("frontend")}, priorityClassName="high")
    graph["metadata"]["annotations"] = annotations
    with pytest.raises(GroveOnlyFieldError) as raised:
        desired_graph_objects(graph, ctx)
    assert says in raised.value.message


def test_every_grove_only_field_is_named_in_one_message() -> None:
    graph = dgd(
        {"W": service("worker", topologyConstraint=PACK)}, priorityClassName="high", topologyConstraint=PACK
    )
    with pytest.raises(GroveOnlyFieldError) as raised:
        desired_graph_objects(graph, NO_GROVE)
    assert raised.value.field == "spec.priorityClassName"
    assert (
        "spec.topologyConstraint" in raised.value.message
        and "spec.services.W.topologyConstraint" in raised.value.message
    )


def test_the_grove_pathway_takes_the_same_fields() -> None:
    """On Grove they are written into the PodCliqueSet, not refused."""
    graph = dgd({"F": service("frontend")}, priorityClassName="high")
    [pcs] = [o for o in desired_grove_objects(graph, GROVE) if o["kind"] == "PodCliqueSet"]
    assert pcs["spec"]["template"]["priorityClassName"] == "high"
