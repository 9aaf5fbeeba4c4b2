"""Grove pathway generation (internal/dynamo/grove/podcliqueset.py): the PodCliqueSet and Services of every
upstream example, shape by shape against the PodCliqueSets upstream's operator made (golden-grove), plus the
pathway choice and the multinode addressing rules as tables.

Pod specs are compared field by field by the compat suite (test/unit/compat); here the set's own
structure is pinned: cliques, roles, replicas, startup order, scaling groups, clique metadata.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from compat.generate import SHAPES, generate
from compat.goldens import SET_2A6DA14C, GoldensMissing, discover, load_golden
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.component.backends import grove_addressing
from dynamo_operator.internal.dynamo.graph.generate import missing_apis
from dynamo_operator.internal.dynamo.grove.podcliqueset import (
    GroveNameTooLongError,
    desired_grove_objects,
    desired_pod_clique_set,
    grove_name_problems,
    grove_object_name,
    grove_services,
    pod_clique_set_name,
    takes_grove,
    uses_grove,
)

GROVE = next(s for s in SHAPES if s.name == "golden-grove")


def _examples_with_a_pod_clique_set() -> list[Any]:
    """Upstream 2a6da14c's examples that it made a PodCliqueSet of (2a6da14c is what this operator
    generates; the df888f68 comparison lives in `make compat`)."""
    try:
        examples = discover(tuple(s.name for s in SHAPES), SET_2A6DA14C)
    except GoldensMissing:
        return []
    return [
        pytest.param(ex, id=ex.name)
        for ex in examples
        if any(k.startswith("PodCliqueSet/") for k in load_golden(ex, GROVE.name))
    ]


EXAMPLES = _examples_with_a_pod_clique_set()


# Not compared here: the termination delay, a setting (upstream's chart ran 4h, its operator's
# default is 15m). The worker hash's value is compared as present or not: upstream hashed in its own
# namespace (`ux<N>`), the goldens and `generate` write `<ns>` (test_grove_worker_hash.py pins it).
HASHED = "<worker hash>"


def _unhashed(labels: dict[str, str] | None) -> dict[str, str]:
    out = dict(labels or {})
    if consts.LABEL_WORKER_HASH in out:
        out[consts.LABEL_WORKER_HASH] = HASHED
    return out


def _structure(pcs: dict[str, Any]) -> dict[str, Any]:
    """The set without pod specs, lists keyed by name (upstream's order follows a Go map)."""
    template = copy.deepcopy(pcs["spec"]["template"])
    template.pop("terminationDelay", None)
    cliques = {}
    for clique in template.pop("cliques"):
        clique["spec"].pop("podSpec")
        if "labels" in clique:
            clique["labels"] = _unhashed(clique["labels"])
        cliques[clique["name"]] = clique
    groups = {g["name"]: g for g in template.pop("podCliqueScalingGroups", [])}
    return {"replicas": pcs["spec"]["replicas"], "template": template, "cliques": cliques, "groups": groups}


def _ours(example: Any) -> dict[str, dict[str, Any]]:
    return generate(example, GROVE).objects


def test_the_golden_grove_examples_are_found() -> None:
    """Guards the tables below: without the goldens they would test nothing."""
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize("example", EXAMPLES)
def test_pod_clique_set_structure_matches_upstream(example: Any) -> None:
    """Cliques (names, roles, replicas, minAvailable, startsAfter, labels, annotations), scaling
    groups and the set's template settings are upstream's, for every graph shape and backend."""
    golden = load_golden(example, GROVE.name)
    [key] = [k for k in golden if k.startswith("PodCliqueSet/")]
    ours = _ours(example)
    assert key in ours, f"no {key} generated"
    assert _structure(ours[key]) == _structure(golden[key])


@pytest.mark.parametrize("example", EXAMPLES)
def test_component_services_match_upstream(example: Any) -> None:
    """Per-service Services `<dgd>-<lower(svc)>`: same names, selectors, ports and labels (a
    worker's carries the graph's v2 worker hash)."""
    golden = load_golden(example, GROVE.name)
    ours = _ours(example)
    wanted = {k for k, v in golden.items() if k.startswith("Service/") and "dynamo-model-" not in k}
    assert wanted <= set(ours)
    for key in wanted:
        assert ours[key]["spec"]["selector"] == golden[key]["spec"]["selector"]
        assert ours[key]["spec"]["ports"] == golden[key]["spec"]["ports"]
        assert _unhashed(ours[key]["metadata"].get("labels")) == _unhashed(
            golden[key]["metadata"].get("labels")
        )


@pytest.mark.parametrize("example", EXAMPLES)
def test_no_dcd_or_deployment_under_grove(example: Any) -> None:
    ours = _ours(example)
    assert not [k for k in ours if k.startswith(("DynamoComponentDeployment/", "Deployment/"))]


# --- pathway choice ---------------------------------------------------------------------------------


def _graph(annotation: str | None = None, *, multinode: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g", "namespace": "ns", "uid": "u1"}
    if annotation is not None:
        meta["annotations"] = {consts.ANNOTATION_ENABLE_GROVE: annotation}
    worker: dict[str, Any] = {
        "componentType": "worker",
        "extraPodSpec": {
            "mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.sglang"], "args": ["--x"]}
        },
    }
    if multinode:
        worker["multinode"] = {"nodeCount": 3}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {
            "backendFramework": "sglang",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "extraPodSpec": {"mainContainer": {"image": "img"}},
                },
                "Worker": worker,
            },
        },
    }


GROVE_CTX = GenContext(namespace="ns", capabilities=Capabilities(grove=True))
NO_GROVE_CTX = GenContext(namespace="ns", capabilities=Capabilities())


@pytest.mark.parametrize(
    ("annotation", "ctx", "expected"),
    [
        pytest.param(None, GROVE_CTX, True, id="grove-served-no-annotation"),
        pytest.param("true", GROVE_CTX, True, id="annotated-true"),
        pytest.param("false", GROVE_CTX, False, id="opted-out"),
        pytest.param("FALSE", GROVE_CTX, False, id="opted-out-any-case"),
        pytest.param(" False ", GROVE_CTX, False, id="opted-out-with-spaces"),
        pytest.param("no", GROVE_CTX, True, id="only-false-opts-out"),
        pytest.param(None, NO_GROVE_CTX, False, id="grove-not-served-or-disabled"),
        pytest.param("true", NO_GROVE_CTX, False, id="annotation-cannot-conjure-grove"),
    ],
)
def test_uses_grove(annotation: str | None, ctx: GenContext, expected: bool) -> None:
    assert uses_grove(_graph(annotation), ctx) is expected


@pytest.mark.parametrize(
    ("annotation", "has_dcds", "has_pcs", "ctx", "expected"),
    [
        pytest.param(None, False, False, GROVE_CTX, True, id="new-graph-takes-grove"),
        pytest.param(None, False, True, GROVE_CTX, True, id="graph-on-grove-stays"),
        pytest.param(None, True, False, GROVE_CTX, False, id="running-dcd-graph-stays-on-dcds"),
        pytest.param("true", True, False, GROVE_CTX, True, id="running-dcd-graph-moves-when-asked"),
        pytest.param("false", False, True, GROVE_CTX, False, id="grove-graph-opting-out-moves-to-dcds"),
        pytest.param(None, False, True, NO_GROVE_CTX, False, id="grove-gone-graph-falls-back-to-dcds"),
        pytest.param(None, False, False, NO_GROVE_CTX, False, id="no-grove-new-graph-dcds"),
    ],
)
def test_takes_grove(
    annotation: str | None, has_dcds: bool, has_pcs: bool, ctx: GenContext, expected: bool
) -> None:
    got = takes_grove(_graph(annotation), ctx, has_dcds=has_dcds, has_pod_clique_set=has_pcs)
    assert got is expected


def test_multinode_needs_no_leader_worker_set_under_grove() -> None:
    """A cluster with Grove and no LWS runs multinode services (as scaling groups)."""
    graph = _graph(multinode=True)
    assert missing_apis(graph, GROVE_CTX, grove=True) == []
    assert [e.field for e in missing_apis(graph, GROVE_CTX)] == ["spec.services.Worker.multinode"]
    pcs = desired_pod_clique_set(graph, GROVE_CTX)
    assert pcs["spec"]["template"]["podCliqueScalingGroups"] == [
        {"name": "worker", "cliqueNames": ["worker-ldr", "worker-wkr"], "replicas": 1, "minAvailable": 1}
    ]
    cliques = {c["name"]: c["spec"] for c in pcs["spec"]["template"]["cliques"]}
    assert (cliques["worker-ldr"]["replicas"], cliques["worker-ldr"]["minAvailable"]) == (1, 1)
    assert (cliques["worker-wkr"]["replicas"], cliques["worker-wkr"]["minAvailable"]) == (2, 2)


def test_grove_objects_are_named_after_replica_zero_of_the_set() -> None:
    assert grove_object_name("g", "VllmWorker") == "g-0-vllmworker"
    assert grove_object_name("g", "Cache.A") == "g-0-cache-a"


def test_grove_objects_are_owned_by_the_graph() -> None:
    objects = desired_grove_objects(_graph(), GROVE_CTX)
    names = {(o["kind"], o["metadata"]["name"]) for o in objects}
    assert ("PodCliqueSet", "g") in names
    assert {("Service", "g-frontend"), ("Service", "g-worker")} <= names
    for obj in objects:
        [ref] = obj["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["uid"], ref["controller"]) == ("DynamoGraphDeployment", "u1", True)


def test_kai_scheduler_puts_cliques_in_the_graphs_queue() -> None:
    ctx = GenContext(namespace="ns", capabilities=Capabilities(grove=True, kai_scheduler=True))
    graph = _graph()
    graph["metadata"]["annotations"] = {consts.ANNOTATION_KAI_SCHEDULER_QUEUE: " team-a "}
    for clique in desired_pod_clique_set(graph, ctx)["spec"]["template"]["cliques"]:
        assert clique["labels"][consts.LABEL_KAI_SCHEDULER_QUEUE] == "team-a"
        assert clique["spec"]["podSpec"]["schedulerName"] == consts.KAI_SCHEDULER_NAME


def test_restart_id_reaches_only_the_cliques_of_the_restarted_service() -> None:
    pcs = desired_pod_clique_set(_graph(), GROVE_CTX, restart_at={"Worker": "r1"})
    annotations = {c["name"]: c.get("annotations", {}) for c in pcs["spec"]["template"]["cliques"]}
    assert annotations["worker"][consts.ANNOTATION_RESTART_AT] == "r1"
    assert consts.ANNOTATION_RESTART_AT not in annotations["frontend"]


# --- multinode addressing ---------------------------------------------------------------------------


@pytest.mark.parametrize("nodes", [2, 3, 5])
def test_grove_addressing_names_every_pod_of_the_group(nodes: int) -> None:
    addr = grove_addressing("Decode", nodes)
    base = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode"
    assert addr.leader_host == f"{base}-ldr-0.$(GROVE_HEADLESS_SERVICE)"
    assert addr.hosts == (
        addr.leader_host,
        *(f"{base}-wkr-{j}.$(GROVE_HEADLESS_SERVICE)" for j in range(nodes - 1)),
    )
    assert addr.rank == "$((GROVE_PCLQ_POD_INDEX + 1))"
    assert addr.rank_needs_shell and not addr.dns_wait
    assert (
        addr.leader_host_shell
        == "${GROVE_PCSG_NAME}-${GROVE_PCSG_INDEX}-decode-ldr-0.${GROVE_HEADLESS_SERVICE}"
    )


# --- Grove's pod-naming budget ----------------------------------------------------------------------


def _named(graph: str, services: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": graph, "namespace": "ns", "uid": "u1"},
        "spec": {"backendFramework": "sglang", "services": services},
    }


SINGLE = {"componentType": "frontend", "extraPodSpec": {"mainContainer": {"image": "img"}}}
MULTI = {
    "componentType": "worker",
    "multinode": {"nodeCount": 2},
    "extraPodSpec": {"mainContainer": {"image": "img", "command": ["python3", "-m", "dynamo.sglang"]}},
}


@pytest.mark.parametrize(
    ("graph", "services", "set_name"),
    [
        pytest.param("g" * 37, {"Frontend": SINGLE}, "g" * 37, id="single-node-at-the-limit"),
        pytest.param("g" * 29, {"Decode": MULTI}, "g" * 29, id="multinode-at-the-limit"),  # 29 + 6 + 10
        pytest.param("g" * 37, {"Cache.A": SINGLE}, "g" * 37, id="dotted-service-counts-as-dashed"),
    ],
)
def test_a_graph_name_that_fits_groves_budget_names_the_set(
    graph: str, services: dict[str, Any], set_name: str
) -> None:
    dgd = _named(graph, services)
    assert pod_clique_set_name(dgd) == set_name
    assert grove_name_problems(dgd, GROVE_CTX) == []


@pytest.mark.parametrize(
    ("graph", "services", "length"),
    [
        pytest.param("g" * 38, {"Frontend": SINGLE}, 37, id="single-node-one-over"),  # 45 - 8
        pytest.param("g" * 30, {"Decode": MULTI}, 29, id="multinode-one-over"),  # 45 - (6 + 10)
        pytest.param("g" * 39, {"Decode": MULTI, "Frontend": SINGLE}, 29, id="widest-service-decides"),
    ],
)
def test_a_graph_name_over_groves_budget_is_shortened_with_a_hash_not_refused(
    graph: str, services: dict[str, Any], length: int
) -> None:
    """Upstream 2a6da14c cuts the set name to the budget left by the widest service and ends it with
    `-` + 4 hex digits of the FNV-1a hash of the graph's name; the graph is generated, not refused."""
    dgd = _named(graph, services)
    name = pod_clique_set_name(dgd)
    suffix = f"{_fnv1a(graph) & 0xFFFF:04x}"
    assert name == graph[: length - 5] + "-" + suffix
    assert len(name) == length
    assert grove_name_problems(dgd, GROVE_CTX) == []
    objects = desired_grove_objects(dgd, GROVE_CTX)
    [pcs] = [o for o in objects if o["kind"] == "PodCliqueSet"]
    assert pcs["metadata"]["name"] == name


def _fnv1a(text: str) -> int:
    """FNV-1a 32, written out here so the test does not trust the code's own."""
    h = 2166136261
    for b in text.encode():
        h = ((h ^ b) * 16777619) % 2**32
    return h


def test_the_shortened_set_name_is_the_same_on_every_call_and_differs_between_graphs() -> None:
    a = _named("a" * 30 + "-x", {"Decode": MULTI})
    b = _named("a" * 30 + "-y", {"Decode": MULTI})
    assert pod_clique_set_name(a) == pod_clique_set_name(a)
    assert pod_clique_set_name(a) != pod_clique_set_name(b)


def test_status_and_scaling_address_the_shortened_sets_objects() -> None:
    dgd = _named("g" * 38, {"Frontend": SINGLE})
    name = pod_clique_set_name(dgd)
    [gs] = grove_services(dgd, GROVE_CTX)
    assert gs.object_name == grove_object_name(name, "Frontend") == f"{name}-0-frontend"


def test_a_service_name_too_long_even_for_the_shortest_set_is_refused() -> None:
    """The set is never cut below 8 characters: a service whose own names leave less is refused,
    per service, naming the parts and their lengths, and nothing is generated."""
    service = "S" * 38  # 8 + 38 = 46 > 45
    dgd = _named("g" * 20, {service: SINGLE})
    set_name = pod_clique_set_name(dgd)
    assert len(set_name) == 8
    [problem] = grove_name_problems(dgd, GROVE_CTX)
    assert problem.startswith(f"{service}: Grove names its pods from PodCliqueSet '{set_name}' (8)")
    assert "= 46 characters, more than the 45 Grove allows" in problem
    assert 'nvidia.com/enable-grove: "false"' in problem
    with pytest.raises(GroveNameTooLongError) as refused:
        desired_grove_objects(dgd, GROVE_CTX)
    assert problem in str(refused.value)


def test_grove_name_budget_names_the_scaling_group_and_leader_clique_of_a_multinode_service() -> None:
    [problem] = grove_name_problems(_named("g", {"D" * 30: MULTI}), GROVE_CTX)
    assert "PodCliqueScalingGroup '" + "d" * 30 + "' (30) + PodClique '" + "d" * 30 + "-ldr' (34)" in problem


def test_grove_name_budget_reports_every_service_over_it() -> None:
    dgd = _named("g" * 20, {"F" * 38: SINGLE, "P" * 20: MULTI, "W": SINGLE})
    assert [p.split(":")[0] for p in grove_name_problems(dgd, GROVE_CTX)] == ["F" * 38, "P" * 20]


@pytest.mark.parametrize("example", EXAMPLES)
def test_upstream_examples_fit_groves_name_budget(example: Any) -> None:
    """Every example upstream's operator turned into a PodCliqueSet fits (Grove admitted them)."""
    docs = [d for d in yaml.safe_load_all(example.yaml_path.read_text()) if d]
    for dgd in (d for d in docs if d.get("kind") == "DynamoGraphDeployment"):
        assert grove_name_problems(dgd, GROVE_CTX) == []


def test_a_dynamo_namespace_over_63_characters_is_shortened_on_every_clique() -> None:
    """`<namespace>-<graph>` (the Dynamo namespace) longer than a label value: the cliques (so Grove's
    pods) carry it shortened by the digest rule, the same on every clique; the env carries it whole."""
    namespace = "n" * 60
    ctx = GenContext(namespace=namespace, capabilities=Capabilities(grove=True))
    dgd = _graph(multinode=True)
    dgd["metadata"]["namespace"] = namespace
    full = f"{namespace}-g"
    cliques = desired_pod_clique_set(dgd, ctx)["spec"]["template"]["cliques"]
    values = {c["labels"][consts.LABEL_DYNAMO_NAMESPACE] for c in cliques}
    assert values == {naming.label_value(full)}
    assert len(naming.label_value(full)) <= 63
    for clique in cliques:
        env = {e["name"]: e.get("value") for e in clique["spec"]["podSpec"]["containers"][0].get("env") or ()}
        assert env["DYN_NAMESPACE"] == full
