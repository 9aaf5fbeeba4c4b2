"""The worker hash on the Grove pathway (internal/dynamo/grove/workerhash.py, podcliqueset.py): worker
cliques and their Services labelled with the graph's v2 worker hash, the workers' Dynamo namespace
suffixed with it (DYN_NAMESPACE_WORKER_SUFFIX), as upstream 2a6da14c writes them (golden-grove), and
when a running set gets them.

Upstream hashed each graph in its own namespace `ux<N>` (N: the example's 1-based position among the
sorted applied files, goldens' README), which is part of the hash; the values are compared there."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from compat.generate import SHAPES, gen_context
from compat.goldens import SET_2A6DA14C, discover, load_golden
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects
from dynamo_operator.internal.dynamo.grove.workerhash import NO_HASH, grove_worker_hash
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2

Obj = dict[str, Any]
REPO = Path(__file__).resolve().parents[3]
UPSTREAM = REPO.parent / "shared" / "upstream-examples-2a6da14c"
GROVE = next(s for s in SHAPES if s.name == "golden-grove")
SUFFIX = consts.ENV_DYN_NAMESPACE_WORKER_SUFFIX
# Our v1alpha1 -> v1beta1 conversion loses a volumeMount's readOnly/subPath for these, so their v2
# hash differs (test_workerhash_v2.py KNOWN_CONVERSION_LOSSES, the same list).
CONVERSION_LOSSES = {"backends_trtllm_agg-with-config", "backends_trtllm_disagg-multinode"}


def _upstream_graphs() -> list[Any]:
    """(example, namespace, upstream's graph read as v1alpha1 there) for each example upstream made
    a PodCliqueSet of."""
    out = []
    for n, path in enumerate(sorted((UPSTREAM / "examples-applied").glob("*.yaml")), start=1):
        grove = UPSTREAM / "golden-grove" / f"{path.stem}.json"
        view = UPSTREAM / "golden-conversion" / f"{path.stem}.json"
        if not grove.exists() or not view.exists() or path.stem in CONVERSION_LOSSES:
            continue
        if not any(k.startswith("PodCliqueSet/") for k in json.loads(grove.read_text())):
            continue
        namespace = f"ux{n}"
        for key, obj in json.loads(view.read_text().replace("<ns>", namespace)).items():
            if key.startswith("DynamoGraphDeployment/"):
                obj["metadata"]["namespace"] = namespace
                out.append(pytest.param(path.stem, namespace, obj, id=path.stem))
    return out


UPSTREAM_GRAPHS = _upstream_graphs()


def _golden(example: str) -> dict[str, Obj]:
    [ex] = [e for e in _examples() if e.name == example]
    return load_golden(ex, GROVE.name)


def _examples() -> list[Any]:
    return discover(tuple(s.name for s in SHAPES), SET_2A6DA14C)


def _main_env(clique: Obj) -> dict[str, Any]:
    [main] = [k for k in clique["spec"]["podSpec"]["containers"] if k["name"] == "main"]
    return {e["name"]: e.get("value") for e in main.get("env") or ()}


def _hash_marks(objects: dict[str, Obj] | list[Obj]) -> dict[str, Any]:
    """Where a set of objects carries the worker hash: per clique its label and suffix env, per
    Service its label."""
    items = objects.values() if isinstance(objects, dict) else objects
    marks: dict[str, Any] = {}
    for obj in items:
        if obj["kind"] == "PodCliqueSet":
            for clique in obj["spec"]["template"]["cliques"]:
                marks[f"clique/{clique['name']}"] = (
                    (clique.get("labels") or {}).get(consts.LABEL_WORKER_HASH),
                    _main_env(clique).get(SUFFIX),
                )
        elif obj["kind"] == "Service" and "dynamo-model-" not in obj["metadata"]["name"]:
            labels = obj["metadata"].get("labels") or {}
            marks[f"service/{obj['metadata']['name']}"] = labels.get(consts.LABEL_WORKER_HASH)
    return marks


def test_upstream_graphs_are_there() -> None:
    """Guards the table below: without ../shared it would test nothing."""
    assert len(UPSTREAM_GRAPHS) >= 20


@pytest.mark.parametrize(("example", "namespace", "graph"), UPSTREAM_GRAPHS)
def test_worker_cliques_and_services_carry_upstreams_worker_hash(
    example: str, namespace: str, graph: Obj
) -> None:
    """Generated in upstream's namespace, the worker cliques carry the label and the suffix env
    with the very value upstream wrote, and the worker Services the label; nothing else does."""
    ctx = dataclasses.replace(gen_context(GROVE, SET_2A6DA14C), namespace=namespace)
    ours = desired_grove_objects(graph, ctx)
    golden = json.loads(json.dumps(_golden(example)).replace("<ns>", namespace))
    assert _hash_marks(ours) == _hash_marks({k: v for k, v in golden.items() if k in _keys(ours)})


def _keys(objects: list[Obj]) -> set[str]:
    return {f"{o['kind']}/{o['metadata']['name']}" for o in objects}


@pytest.mark.parametrize(("example", "namespace", "graph"), UPSTREAM_GRAPHS)
def test_the_hash_is_the_graphs_v2_worker_hash(example: str, namespace: str, graph: Obj) -> None:
    """What the cliques carry is what the graph records (`current-worker-hash-v2`), upstream's and ours."""
    ctx = dataclasses.replace(gen_context(GROVE, SET_2A6DA14C), namespace=namespace)
    values = {v for mark in _hash_marks(desired_grove_objects(graph, ctx)).values() for v in _flat(mark)}
    recorded = graph["metadata"]["annotations"]["nvidia.com/current-worker-hash-v2"]
    assert values <= {None, recorded, worker_hash_v2(graph, namespace)}


def _flat(mark: Any) -> tuple[Any, ...]:
    return mark if isinstance(mark, tuple) else (mark,)


# --- which hash this round ------------------------------------------------------------------------


def _set(*cliques: tuple[str, str | None]) -> Obj:
    out = []
    for component, value in cliques:
        labels = {consts.LABEL_COMPONENT: component}
        if value:
            labels[consts.LABEL_WORKER_HASH] = value
        out.append({"name": component.lower(), "labels": labels})
    return {"spec": {"template": {"cliques": out}}}


@pytest.mark.parametrize(
    ("workers", "live", "recorded", "expected"),
    [
        pytest.param(set(), None, None, NO_HASH, id="no-workers"),
        pytest.param({"W"}, None, None, "new", id="new-set"),
        pytest.param({"W"}, _set(("W", "old")), "old", "new", id="labelled-set-follows-the-spec"),
        pytest.param({"W"}, _set(("F", None), ("W", None)), None, NO_HASH, id="unlabelled-set-unrecorded"),
        pytest.param({"W"}, _set(("W", None)), "new", NO_HASH, id="unlabelled-set-same-spec"),
        pytest.param({"W"}, _set(("W", None)), "old", "new", id="unlabelled-set-workers-changed"),
        pytest.param({"W", "P"}, _set(("W", "x"), ("P", None)), None, NO_HASH, id="partly-labelled"),
        pytest.param({"W", "P"}, _set(("W", "x")), None, NO_HASH, id="a-worker-without-clique"),
    ],
)
def test_which_hash_the_worker_cliques_carry(
    workers: set[str], live: Obj | None, recorded: str | None, expected: str
) -> None:
    assert grove_worker_hash("new", workers=workers, live=live, recorded=recorded) == expected


def _graph() -> Obj:
    container = {"image": "img", "command": ["python3", "-m", "dynamo.sglang"], "args": ["--x"]}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u1"},
        "spec": {
            "backendFramework": "sglang",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "extraPodSpec": {"mainContainer": {"image": "img"}},
                },
                "Worker": {"componentType": "worker", "extraPodSpec": {"mainContainer": container}},
            },
        },
    }


CTX = GenContext(namespace="ns", capabilities=Capabilities(grove=True))


def test_a_set_kept_without_the_hash_has_no_label_and_no_suffix() -> None:
    marks = _hash_marks(desired_grove_objects(_graph(), CTX, worker_hash=NO_HASH))
    assert marks == {
        "clique/frontend": (None, None),
        "clique/worker": (None, None),
        "service/g-frontend": None,
        "service/g-worker": None,
    }


def test_a_new_set_labels_only_the_workers_with_the_graphs_v2_hash() -> None:
    value = worker_hash_v2(_graph(), "ns")
    assert _hash_marks(desired_grove_objects(_graph(), CTX)) == {
        "clique/frontend": (None, None),
        "clique/worker": (value, value),
        "service/g-frontend": None,
        "service/g-worker": value,
    }


def test_the_workers_dynamo_namespace_label_stays_unsuffixed() -> None:
    """Only the env says the suffix: the Dynamo namespace label and DYN_NAMESPACE are the graph's."""
    [pcs] = [o for o in desired_grove_objects(_graph(), CTX) if o["kind"] == "PodCliqueSet"]
    [worker] = [k for k in pcs["spec"]["template"]["cliques"] if k["name"] == "worker"]
    assert worker["labels"][consts.LABEL_DYNAMO_NAMESPACE] == "ns-g"
    assert _main_env(worker)[consts.ENV_DYN_NAMESPACE] == "ns-g"
