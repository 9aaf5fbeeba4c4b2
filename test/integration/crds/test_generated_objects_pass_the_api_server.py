"""What generation makes of any graph the API server admits as v1beta1, the API server admits too:
every object of the component pathway (DCDs against our own CRD and its rules, Deployments,
Services, RBAC, PVCs, adapters) passes a server-side dry run. A graph generation refuses is refused
before anything is written; one it accepts must not be refused halfway through its writes, which
would leave it partly applied (the label, probe and environment rules of pod/api_rules.py came
from this test).

The same holds for a DCD written on its own. Graphs and DCDs are drawn from our v1beta1 CRD schemas
(testsupport/schema_objects.py); one the API server
refuses (a CEL rule the drawing does not know) is skipped. Each component is given the image
generation requires, and the fields this pathway refuses outright (Grove-only, not implemented) are
dropped, so that most drawn graphs reach the API server. Each graph's children are dry-run applied
in one request."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.children import dcd_children
from dynamo_operator.internal.dynamo.graph.view import read_graph
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2
from hypothesis import HealthCheck, given, settings
from hypothesis.strategies import SearchStrategy
from testsupport.cluster import Kubectl, KubectlError
from testsupport.schema_objects import ALPHA_DGD, BETA_DCD, BETA_DGD

pytestmark = pytest.mark.cluster

Json = dict[str, Any]
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"
EXAMPLES = 40
# Drawn v1alpha1 graphs reach generation less often (their random flat probes are mostly refused).
ALPHA_EXAMPLES = 80
# Each test must have sent this many generated sets to the API server to say anything (about a
# quarter of the draws get there; far fewer would mean the drawing changed).
MIN_GENERATED = 3


# Refused on the component pathway whatever else the graph holds (tested elsewhere).
REFUSED_OUTRIGHT = ("experimental", "topologyConstraint", "providerOverride", "priorityClassName", "restart")
REFUSED_IN_COMPONENTS = ("experimental", "topologyConstraint", "providerOverride", "minAvailable")


def _as_stored(obj: Json, namespace: str) -> Json:
    out = json.loads(json.dumps(obj))
    out["metadata"] |= {"namespace": namespace, "uid": str(uuid.uuid4()), "generation": 1}
    return out


def _as_written(obj: Json) -> Json:
    """What a user applies: no uid or generation (the API server sets them)."""
    return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k not in ("uid", "generation")}}


def _deployable_component(component: Json) -> None:
    """Without the fields the component pathway refuses outright, every container given an image."""
    for field in REFUSED_IN_COMPONENTS:
        component.pop(field, None)
    for role in ("leader", "worker"):
        (component.get("multinode") or {}).pop(role, None)
    containers = component.setdefault("podTemplate", {}).setdefault("spec", {}).setdefault("containers", [])
    if not any(c.get("name") == consts.MAIN_CONTAINER_NAME for c in containers):
        containers.insert(0, {"name": consts.MAIN_CONTAINER_NAME})
    for container in containers:
        container.setdefault("image", IMAGE)


def _deployable(obj: Json, namespace: str) -> Json:
    graph = _as_stored(obj, namespace)
    for field in REFUSED_OUTRIGHT:
        graph["spec"].pop(field, None)
    for component in graph["spec"].get("components", []):
        _deployable_component(component)
    return graph


def _children(graph: Json, namespace: str) -> list[Json] | None:
    """Every object of the component pathway, or None when generation refuses the graph."""
    ctx = GenContext(namespace=namespace, dcd_api_version=consts.STORAGE_API_VERSION)
    try:
        view = read_graph(graph, children=[], operator_version="1.2.0")
        owned = dcd_children(view, ctx, restart_at={}, worker_hash=worker_hash_v2(view.stored, namespace))
        workloads = [
            obj
            for dcd in owned.owned
            if dcd["kind"] == consts.KIND_DCD
            for obj in desired_component_objects(component_view(dcd), ctx)
        ]
    except GenerationError:
        return None
    return [*owned.owned, *owned.shared, *workloads]


def _dry_run(kubectl: Kubectl, namespace: str, objects: list[Json]) -> bool:
    """Whether the API server admits `objects` (a server-side dry run: nothing is stored)."""
    doc = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects})
    try:
        kubectl(
            "apply",
            "--server-side",
            "--dry-run=server",
            "--field-manager=check",
            "-n",
            namespace,
            "-f",
            "-",
            stdin=doc,
        )
    except KubectlError as err:
        if (
            objects[0].get("kind") not in ("DynamoGraphDeployment", "DynamoComponentDeployment")
            or len(objects) > 1
        ):
            print(f"refused: {err}\n{doc}")  # shown with the failure
        return False
    return True


def _check_graphs(
    kubectl: Kubectl,
    ns: str,
    drawn: SearchStrategy[Json],
    deployable: Callable[[Json, str], Json],
    examples: int,
) -> None:
    """Each drawn graph, made `deployable` in `ns` and admitted by the API server, generates children
    the API server admits."""
    generated: list[int] = []

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(drawn)
    def check(obj: Json) -> None:
        graph = deployable(obj, ns)
        if not _dry_run(kubectl, ns, [_as_written(graph)]):
            return  # the API server refuses the graph itself
        objects = _children(graph, ns)
        if objects is None:
            return
        generated.append(len(objects))
        assert _dry_run(kubectl, ns, objects), "the API server refused what generation made"

    check()
    assert len(generated) >= MIN_GENERATED, "too few graphs were generated to say anything"


def test_generated_objects_pass_a_server_side_dry_run(crds: None, kubectl: Kubectl, ns: str) -> None:
    _check_graphs(kubectl, ns, BETA_DGD, _deployable, EXAMPLES)


# The v1alpha1 fields the component pathway refuses outright (tested elsewhere), and `multinode`
# (no LeaderWorkerSet here).
REFUSED_IN_SERVICES = (
    "checkpoint",
    "gpuMemoryService",
    "failover",
    "topologyConstraint",
    "providerOverride",
    "minAvailable",
    "multinode",
)


def _deployable_alpha(obj: Json, namespace: str) -> Json:
    """A v1alpha1 graph as the API server stores it (converted to v1beta1, as the webhook does), its
    containers given images, without the fields this pathway refuses outright."""
    graph = json.loads(json.dumps(obj))
    graph["metadata"]["namespace"] = namespace
    for field in REFUSED_OUTRIGHT:
        graph["spec"].pop(field, None)
    for service in (graph["spec"].get("services") or {}).values():
        for field in REFUSED_IN_SERVICES:
            service.pop(field, None)
        extra = service.setdefault("extraPodSpec", {})
        extra.setdefault("mainContainer", {}).setdefault("image", IMAGE)
        for container in extra.get("containers") or ():
            container.setdefault("image", IMAGE)
        if isinstance(service.get("frontendSidecar"), dict):
            service["frontendSidecar"].setdefault("image", IMAGE)
    return _as_stored(convert(graph, V1BETA1), namespace)


def test_what_a_v1alpha1_graph_makes_passes_a_server_side_dry_run(
    crds: None, kubectl: Kubectl, ns: str
) -> None:
    """The fields only v1alpha1 has (flat env, probes and `envFromSecret`, `ingress`, service labels)
    travel to generation in the reserved payload: drawn in v1alpha1, stored as the webhook stores them."""
    _check_graphs(kubectl, ns, ALPHA_DGD, _deployable_alpha, ALPHA_EXAMPLES)


def test_what_a_dcd_written_on_its_own_makes_passes_a_server_side_dry_run(
    crds: None, kubectl: Kubectl, ns: str
) -> None:
    generated: list[int] = []
    ctx = GenContext(namespace=ns)

    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(BETA_DCD)
    def check(obj: Json) -> None:
        dcd = _as_stored(obj, ns)
        _deployable_component(dcd["spec"])
        dcd["spec"].pop("multinode", None)  # no LeaderWorkerSet here
        if not _dry_run(kubectl, ns, [_as_written(dcd)]):
            return  # the API server refuses the DCD itself
        try:
            objects = desired_component_objects(component_view(dcd), ctx)
        except GenerationError:
            return
        generated.append(len(objects))
        assert _dry_run(kubectl, ns, objects), "the API server refused what generation made"

    check()
    assert len(generated) >= MIN_GENERATED, "too few DCDs were generated to say anything"
