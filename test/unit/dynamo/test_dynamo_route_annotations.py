"""Component annotations on the Ingress and VirtualService (internal/dynamo/component/route_annotations.py):
the API says they reach "Pod, Service, and Ingress"; the operator's control keys do not."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import Capabilities, GenContext, desired_component_objects, desired_dcds
from dynamo_operator.internal.dynamo.component.route_annotations import (
    ROUTE_EXCLUDED_ANNOTATIONS,
    route_annotations,
)
from dynamo_operator.internal.dynamo.pod.template import CONTROL_ANNOTATIONS
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
INGRESS = {"enabled": True, "host": "chat", "ingressControllerClassName": "nginx"}
VIRTUAL_SERVICE = {"enabled": True, "host": "chat", "useVirtualService": True, "virtualServiceGateway": "gw"}
CTX = GenContext(namespace=NS, capabilities=Capabilities(istio=True))
USER = {"nginx.ingress.kubernetes.io/proxy-body-size": "64m", "team": "a"}


def route(
    ingress: Obj, *, annotations: dict[str, str], graph_annotations: dict[str, str] | None = None
) -> Obj:
    """The Ingress or VirtualService of a frontend in a graph (through the DCD, as the operator does)."""
    graph = dgd({"Frontend": service("frontend", ingress=ingress, annotations=annotations)})
    if graph_annotations:
        graph["metadata"]["annotations"] = graph_annotations
    [dcd] = desired_dcds(graph, CTX)
    [obj] = [o for o in desired_component_objects(dcd, CTX) if o["kind"] in ("Ingress", "VirtualService")]
    return obj


@pytest.mark.parametrize("ingress", [INGRESS, VIRTUAL_SERVICE], ids=["ingress", "virtualservice"])
def test_component_annotations_reach_the_route(ingress: Obj) -> None:
    assert USER.items() <= route(ingress, annotations=USER)["metadata"]["annotations"].items()


@pytest.mark.parametrize("ingress", [INGRESS, VIRTUAL_SERVICE], ids=["ingress", "virtualservice"])
@pytest.mark.parametrize("key", sorted(ROUTE_EXCLUDED_ANNOTATIONS - {consts.ANNOTATION_LAST_APPLIED_HASH}))
def test_operator_control_keys_stay_off_the_route(ingress: Obj, key: str) -> None:
    """Every control key, set on the component, is left out (the hash stamp is the route's own)."""
    annotations = route(ingress, annotations={**USER, key: "1"})["metadata"]["annotations"]
    assert key not in annotations and USER.items() <= annotations.items()


@pytest.mark.parametrize("ingress", [INGRESS, VIRTUAL_SERVICE], ids=["ingress", "virtualservice"])
def test_propagated_graph_annotations_stay_off_the_route(ingress: Obj) -> None:
    """Graph annotations the operator copies into each service (origin version, discovery backend)
    are control keys too."""
    annotations = route(
        ingress,
        annotations=USER,
        graph_annotations={
            consts.ANNOTATION_DISCOVERY_BACKEND: "kubernetes",
            consts.ANNOTATION_ORIGIN_VERSION: "1.0.0",
        },
    )["metadata"]["annotations"]
    assert not set(consts.PROPAGATED_DGD_ANNOTATIONS) & set(annotations)


@pytest.mark.parametrize("base", [INGRESS, VIRTUAL_SERVICE], ids=["ingress", "virtualservice"])
def test_ingress_block_annotations_win(base: Obj) -> None:
    ingress = {**base, "annotations": {"team": "b", "extra": "x"}}
    annotations = route(ingress, annotations=USER)["metadata"]["annotations"]
    assert (annotations["team"], annotations["extra"]) == ("b", "x")


def test_route_rule_covers_the_pod_rule_and_the_restart_id() -> None:
    """Whatever the pods leave out, the routes leave out too, and a restart never rewrites a route."""
    assert CONTROL_ANNOTATIONS <= ROUTE_EXCLUDED_ANNOTATIONS
    assert consts.ANNOTATION_RESTART_AT in ROUTE_EXCLUDED_ANNOTATIONS


def test_no_annotations_no_map() -> None:
    assert route_annotations({}, {}) == {}
