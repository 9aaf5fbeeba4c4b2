"""A generated DCD stored as v1beta1 (graph/stored_dcd.py) and the DCD reconciler reading it.

The operator writes a graph's DCDs in the version their CRD stores. In v1beta1 they take upstream's
form: what the graph adds to a component sits in the pod template's metadata and on the object, and
the reserved payload is made from the graph's v1alpha1 component. Whatever the form, the DCD
reconciler makes the same children of it: an upgrade rewrites each DCD once and no pod template.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from compat import generate as compat
from compat.goldens import SET_2A6DA14C, SET_DF888F68, Example, GoldenSet, discover, load_golden
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, preserve
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import GenContext, IngressDefaults
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds, desired_graph_objects
from dynamo_operator.internal.dynamo.graph.meta import origin_version, with_origin_version
from dynamo_operator.internal.dynamo.graph.stored_dcd import carrier_annotations
from dynamo_operator.internal.dynamo.graph.workernames import first_worker_generation
from dynamo_operator.internal.dynamo.grove.podcliqueset import takes_grove
from dynamo_operator.internal.dynamo.rollout.restart import dcd_restart_id

Obj = dict[str, Any]
SHAPES = {s.name: s for s in compat.SHAPES if s.name != "golden-grove"}  # the DCD pathway's shapes


def _examples(golden_set: GoldenSet) -> list[Any]:
    return [
        pytest.param(ex, shape, id=f"{golden_set.name}:{ex.name}:{shape}")
        for ex in discover(tuple(SHAPES), golden_set)
        for shape in SHAPES
    ]


def _graphs(example: Example) -> list[Obj]:
    import yaml

    out = []
    for doc in yaml.safe_load_all(example.yaml_path.read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment":
            generated = compat.Generated()
            out.append(compat._stored(compat._as_read(doc, generated), "dynamographdeployments"))
    return out


def _view(dcd: Obj) -> Obj:
    """A DCD as its reconciler reads it: as stored, in v1beta1."""
    return dict(convert(dcd, V1BETA1))


def _children(dcd: Obj, ctx: GenContext) -> list[Obj]:
    return desired_component_objects(_view(dcd), ctx)


def _dcds(graph: Obj, ctx: GenContext, **kwargs: Any) -> dict[str, Obj]:
    objects = desired_graph_objects(graph, ctx, **kwargs)
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == c.KIND_DCD}


def _both_forms(graph: Obj, ctx: GenContext, **kwargs: Any) -> list[tuple[Obj, Obj]]:
    alpha = _dcds(graph, dataclasses.replace(ctx, dcd_api_version=V1ALPHA1), **kwargs)
    beta = _dcds(graph, dataclasses.replace(ctx, dcd_api_version=V1BETA1), **kwargs)
    assert sorted(alpha) == sorted(beta)
    return [(alpha[name], beta[name]) for name in sorted(alpha)]


@pytest.mark.parametrize(("example", "shape"), _examples(SET_2A6DA14C) + _examples(SET_DF888F68))
def test_a_dcd_stored_as_v1beta1_makes_the_children_one_written_as_v1alpha1_makes(
    example: Example, shape: str
) -> None:
    ctx = compat.gen_context(SHAPES[shape], example.golden_set)
    compared = refused = 0
    graphs = _graphs(example)
    for stored in graphs:
        graph = with_origin_version(stored, origin_version(stored, [], ctx.operator_version))
        if takes_grove(graph, ctx, has_dcds=False, has_pod_clique_set=False):
            continue
        workers = first_worker_generation(graph, compat.deployed_namespace(example))
        try:
            pairs = _both_forms(graph, ctx, worker_hash=workers.active)
        except ValueError:  # refused graphs (GenerationError) write no DCD in either form
            refused += 1
            continue
        for old, new in pairs:
            assert new["apiVersion"] == V1BETA1
            try:
                expected = _children(old, ctx)
            except ValueError:  # a DCD its reconciler refuses (a missing API) is refused in both forms
                with pytest.raises(ValueError):
                    _children(new, ctx)
                refused += 1
                continue
            assert _children(new, ctx) == expected, old["metadata"]["name"]
            compared += 1
    assert compared or refused or not graphs, "nothing compared"  # (an example of DynamoModels only)


def _graph(**spec: Any) -> Obj:
    return {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u", "annotations": spec.pop("annotations", {})},
        "spec": spec,
    }


MAIN = {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0", "command": ["python3", "-m", "dynamo.vllm"]}
BUSY_GRAPH = _graph(
    annotations={
        c.ANNOTATION_ENABLE_METRICS: "false",
        c.ANNOTATION_DISCOVERY_BACKEND: "etcd",
        c.ANNOTATION_DISABLE_IMAGE_PULL_SECRET_DISCOVERY: "true",
    },
    labels={"team": "graph", "shared": "from-graph"},
    annotations_unused=None,
    services={
        "Frontend": {
            "componentType": "frontend",
            "extraPodSpec": {"mainContainer": {"image": MAIN["image"]}},
        },
        "VllmWorker": {
            "componentType": "worker",
            "labels": {"own": "label", "shared": "from-service"},
            "annotations": {"owner": "me", c.ANNOTATION_DEPLOYMENT_STRATEGY: "Recreate"},
            "extraPodMetadata": {"annotations": {"pod": "annotation"}, "labels": {"pod": "label"}},
            "extraPodSpec": {"mainContainer": dict(MAIN)},
        },
        "Planner": {"componentType": "planner", "extraPodSpec": {"mainContainer": {"image": MAIN["image"]}}},
    },
)
BUSY_GRAPH["spec"].pop("annotations_unused")
BUSY_GRAPH["spec"]["annotations"] = {"graph-wide": "annotation", "owner": "graph"}


@pytest.mark.parametrize(
    "ingress",
    [IngressDefaults(), IngressDefaults(controller_class_name="nginx", host_suffix="example.com")],
    ids=["no-ingress-class", "ingress-class"],
)
def test_graph_labels_annotations_and_restarts_reach_the_same_children_in_both_forms(
    ingress: IngressDefaults,
) -> None:
    ctx = GenContext(namespace="ns", ingress=ingress)
    restart = {"VllmWorker": "2026-11-28T00:00:00Z"}
    for old, new in _both_forms(copy.deepcopy(BUSY_GRAPH), ctx, restart_at=restart):
        assert _children(new, ctx) == _children(old, ctx), old["metadata"]["name"]


def _stored_worker(graph: Obj, ctx: GenContext, **kwargs: Any) -> Obj:
    beta = dataclasses.replace(ctx, dcd_api_version=V1BETA1)
    [worker] = [d for d in desired_dcds(graph, beta, **kwargs) if "vllmworker" in d["metadata"]["name"]]
    return worker


def test_the_stored_payload_is_made_from_the_graphs_v1alpha1_component() -> None:
    graph = copy.deepcopy(BUSY_GRAPH)
    worker = _stored_worker(graph, GenContext(namespace="ns"))
    expected = carrier_annotations(graph["spec"]["services"]["VllmWorker"])
    assert worker["metadata"]["annotations"][preserve.DCD_SPEC] == expected[preserve.DCD_SPEC]
    saved = json.loads(expected[preserve.DCD_SPEC])["spec"]
    assert saved["annotations"] == {"owner": "me", c.ANNOTATION_DEPLOYMENT_STRATEGY: "Recreate"}
    assert "dynamoNamespace" not in saved


def test_what_the_graph_adds_goes_to_the_pod_template_and_the_components_own_values_win() -> None:
    worker = _stored_worker(
        copy.deepcopy(BUSY_GRAPH), GenContext(namespace="ns"), restart_at={"VllmWorker": "r1"}
    )
    template = worker["spec"]["podTemplate"]["metadata"]
    assert template["annotations"]["graph-wide"] == "annotation"
    assert template["annotations"][c.ANNOTATION_ENABLE_METRICS] == "false"
    assert template["annotations"][c.ANNOTATION_RESTART_AT] == "r1"
    assert template["annotations"]["pod"] == "annotation"
    assert "owner" not in template["annotations"]  # the component's own: in the payload
    assert template["labels"]["team"] == "graph"
    assert template["labels"]["pod"] == "label"
    assert worker["metadata"]["labels"]["own"] == "label"


def _written_as_v1alpha1(spec: Obj) -> Any:
    """A DCD an older release wrote as v1alpha1, as the operator reads it now (v1beta1)."""
    alpha = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "w"},
        "spec": spec,
    }
    return convert(alpha, V1BETA1)


def test_a_restart_id_is_read_from_the_pod_template_first() -> None:
    dcd = _written_as_v1alpha1(
        {
            "annotations": {c.ANNOTATION_RESTART_AT: "old"},
            "extraPodMetadata": {"annotations": {c.ANNOTATION_RESTART_AT: "new"}},
        }
    )
    assert dcd_restart_id(dcd) == "new"


def test_a_restart_id_only_v1alpha1_held_is_read_from_the_reserved_annotation() -> None:
    """v1alpha1's `spec.annotations` has no v1beta1 field: the conversion keeps it in the payload."""
    dcd = _written_as_v1alpha1({"annotations": {c.ANNOTATION_RESTART_AT: "old"}})
    assert "nvidia.com/dcd-spec" in dcd["metadata"]["annotations"]
    assert dcd_restart_id(dcd) == "old"


def test_a_dcd_without_a_restart_id_has_none() -> None:
    assert dcd_restart_id(_written_as_v1alpha1({"annotations": {"other": "x"}})) is None
    assert dcd_restart_id({"spec": {}}) is None


def test_the_stored_dcd_names_its_restart_id_for_the_graph() -> None:
    worker = _stored_worker(
        copy.deepcopy(BUSY_GRAPH), GenContext(namespace="ns"), restart_at={"VllmWorker": "r2"}
    )
    assert dcd_restart_id(_view(worker)) == "r2"


def _golden_dcds() -> list[Any]:
    cases = []
    for ex in discover(("golden", "golden-lws-gaie"), SET_2A6DA14C):
        for shape in ("golden", "golden-lws-gaie"):
            golden = load_golden(ex, shape)
            for key in sorted(k for k in golden if k.startswith("DynamoComponentDeployment/")):
                cases.append(pytest.param(ex, shape, key, id=f"{ex.name}:{shape}:{key.split('/')[1]}"))
    return cases


@pytest.mark.parametrize(("example", "shape", "key"), _golden_dcds())
def test_a_dcd_upstream_stored_gets_upstreams_workload_labels(example: Example, shape: str, key: str) -> None:
    """Taking over a graph: until the graph's reconciler rewrites them, its DCDs are upstream's."""
    golden = load_golden(example, shape)
    dcd = copy.deepcopy(golden[key])
    dcd["metadata"].update(uid="u", namespace=compat.NAMESPACE)  # the goldens write no namespace
    ctx = compat.gen_context(SHAPES[shape], SET_2A6DA14C)
    for child in desired_component_objects(dict(convert(dcd, V1ALPHA1)), ctx):
        theirs = golden.get(f"{child['kind']}/{child['metadata']['name']}")
        if theirs is None or child["kind"] not in ("Deployment", "Service"):
            continue
        assert child["metadata"].get("labels") == theirs["metadata"].get("labels")
        if child["kind"] == "Deployment":
            labels = child["spec"]["template"]["metadata"]["labels"]
            assert labels == theirs["spec"]["template"]["metadata"]["labels"]


def test_a_recorded_missing_service_name_gives_way_to_the_component_name() -> None:
    """Upstream's generator records "no serviceName" for every DCD it makes from a graph component;
    the DCD is named after the component, and the rest of the record (here the component's own
    v1alpha1 annotations) still applies."""
    payload = {
        "version": 1,
        "spec": {"annotations": {"owner": "me"}},
        "rawJSON": [{"path": "serviceName", "nil": True}],
    }
    stored = {
        "apiVersion": V1BETA1,
        "kind": c.KIND_DCD,
        "metadata": {"name": "g-worker-1234abcd", "annotations": {preserve.DCD_SPEC: json.dumps(payload)}},
        "spec": {"name": "worker", "type": "worker"},
    }
    alpha = convert(stored, V1ALPHA1)
    assert alpha["spec"]["serviceName"] == "worker"
    assert alpha["spec"]["annotations"] == {"owner": "me"}


@pytest.mark.parametrize(("example", "shape"), _examples(SET_2A6DA14C))
def test_a_generated_dcd_carries_upstreams_payload_text(example: Example, shape: str) -> None:
    """The `nvidia.com/dcd-spec` of each DCD is the text upstream's generator wrote for it: what its
    conversion saves of the graph's v1alpha1 component (its origin splits included), in Go's encoding."""
    golden = load_golden(example, shape)
    ours = compat.generate(example, SHAPES[shape]).objects
    compared = 0
    for key, theirs in golden.items():
        if not key.startswith("DynamoComponentDeployment/") or key not in ours:
            continue
        expected = (theirs["metadata"].get("annotations") or {}).get(preserve.DCD_SPEC)
        assert (ours[key]["metadata"].get("annotations") or {}).get(preserve.DCD_SPEC) == expected, key
        compared += 1
    assert compared or not any(k.startswith("DynamoComponentDeployment/") for k in golden)


def test_a_graph_not_yet_seen_stamped_takes_its_origin_version_from_a_stored_dcd() -> None:
    """The graph's origin-version stamp and its first DCDs are separate writes; a reconcile that sees
    the DCDs first must still read the graph's origin version (from the DCD's pod template), or the
    graph reads as older than the stamp, gets another worker hash and rolls its fresh workers."""
    graph = copy.deepcopy(BUSY_GRAPH)
    stamped = with_origin_version(graph, "1.5.0")
    worker = _stored_worker(stamped, GenContext(namespace="ns", operator_version="1.5.0"))
    assert origin_version(graph, [_view(worker)], "1.5.0") == "1.5.0"
    assert origin_version(graph, [_view(worker)], "9.9.9") == "1.5.0"


def test_a_form_json_cannot_hold_is_made_each_time_not_remembered() -> None:
    """A manifest read offline may hold an integer past 64 bits; the API server never sends one."""
    from dynamo_operator.internal.dynamo.graph import stored_dcd as module

    dcd = {
        "apiVersion": V1ALPHA1,
        "kind": c.KIND_DCD,
        "metadata": {"name": "g-worker", "namespace": "n"},
        "spec": {"componentType": "worker", "replicas": 2**70},
    }
    module._MEMO.clear()  # a cache: emptied, nothing is lost
    first = module.stored_dcd(dcd, alpha_component=None, graph_labels={})
    again = module.stored_dcd(dcd, alpha_component=None, graph_labels={})
    assert first == again
    assert first["spec"]["replicas"] == 2**70
    assert len(module._MEMO) == 0
