"""Grove wiring: `--enable-grove` decides whether generation may use a served Grove API; Grove's own
objects (PodCliques, scaling groups) are watched, not owned, and find their graph; `render --with-grove`."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from dynamo_operator.context import settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal import kinds
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, render_documents
from dynamo_operator.internal.optional_api_table import GROVE_OBJECT_CHANGED, Owner, graph_of_grove_object
from dynamo_operator.internal.settings import Settings
from dynamo_operator.optional_ownership import OptionalOwnership
from dynamo_operator.registration import optional_kinds
from unit.controllers.test_optional_ownership import Cache, OwnerController, Reconciler


def grove_for(served: bool, *argv: str) -> bool:
    options = options_from_args(build_parser().parse_args(list(argv)), environ={})
    return settings_from(options, Capabilities(grove=served)).gen_context("team").capabilities.grove


@pytest.mark.parametrize(
    ("argv", "served", "expected"),
    [
        pytest.param((), True, False, id="default-off-even-when-served"),
        pytest.param(("--enable-grove=auto",), True, True, id="auto-served"),
        pytest.param(("--enable-grove=auto",), False, False, id="auto-not-served"),
        pytest.param(("--enable-grove",), True, True, id="bare-flag-means-true"),
        pytest.param(("--enable-grove=true",), True, True, id="true-served"),
        pytest.param(("--enable-grove=false",), True, False, id="false"),
    ],
)
def test_enable_grove_flag_gates_a_served_grove(argv: tuple[str, ...], served: bool, expected: bool) -> None:
    assert grove_for(served, *argv) is expected


def test_enable_grove_refuses_unknown_values() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--enable-grove=maybe"])


def _obj(labels: dict[str, str] | None = None, owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "g-0-x", "namespace": "ns", "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": "PodCliqueSet", "name": owner, "controller": True}]
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("obj", "keys"),
    [
        pytest.param(_obj({"nvidia.com/dynamo-graph-deployment-name": "g"}), ["ns/g"], id="graph-label"),
        pytest.param(_obj(owner="g"), ["ns/g"], id="owned-by-the-set"),
        pytest.param(_obj({"app.kubernetes.io/part-of": "g"}), ["ns/g"], id="part-of-label"),
        pytest.param(_obj(), [], id="unrelated"),
    ],
)
def test_grove_objects_map_to_their_graph(obj: dict[str, Any], keys: list[str]) -> None:
    assert graph_of_grove_object(obj) == keys


def test_pod_cliques_are_watched_but_only_the_set_is_owned() -> None:
    cache, controller, reconciler = Cache([]), OwnerController(), Reconciler()
    ownership = OptionalOwnership(
        cache=cache,  # type: ignore[arg-type]
        reconciler=reconciler,
        controller=controller,
        owner=kinds.DGD,
        namespace="ns",
        kinds=optional_kinds(Owner.GRAPH, Settings(grove="auto")),
    )
    ownership.start(Capabilities(grove=True))
    assert reconciler.owned[-1] == kinds.POD_CLIQUE_SET
    assert kinds.POD_CLIQUE not in reconciler.owned
    assert {r for r, _ in cache.informers} == {
        kinds.POD_CLIQUE_SET,
        kinds.POD_CLIQUE,
        kinds.POD_CLIQUE_SCALING_GROUP,
    }
    [handler] = cache.informers[(kinds.POD_CLIQUE, "ns")].handlers
    handler.on_add(_obj({"nvidia.com/dynamo-graph-deployment-name": "g"}))  # Grove made it: news
    assert controller.added == ["ns/g"]


GRAPH = """
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: g}
spec:
  backendFramework: sglang
  services:
    Frontend: {componentType: frontend, extraPodSpec: {mainContainer: {image: img}}}
    Worker:
      componentType: worker
      multinode: {nodeCount: 2}
      extraPodSpec:
        mainContainer: {image: img, command: [python3, -m, dynamo.sglang], args: [--tp, "2"]}
"""


def test_render_with_grove_shows_the_pod_clique_set_instead_of_dcds() -> None:
    docs = list(
        yaml.safe_load_all(
            render_documents(GRAPH, RenderOptions(namespace="ns", capabilities=Capabilities(grove=True)))
        )
    )
    kinds_rendered = {d["kind"] for d in docs}
    assert "PodCliqueSet" in kinds_rendered
    assert not kinds_rendered & {"DynamoComponentDeployment", "Deployment", "LeaderWorkerSet"}


def test_render_with_grove_respects_the_graphs_opt_out() -> None:
    opted_out = GRAPH.replace(
        "metadata: {name: g}", "metadata: {name: g, annotations: {nvidia.com/enable-grove: 'false'}}"
    )
    docs = list(
        yaml.safe_load_all(
            render_documents(
                opted_out, RenderOptions(namespace="ns", capabilities=Capabilities(lws=True, grove=True))
            )
        )
    )
    assert "PodCliqueSet" not in {d["kind"] for d in docs}


def _clique(**status: Any) -> dict[str, Any]:
    base = {"replicas": 1, "readyReplicas": 0, "updatedReplicas": 1, "observedGeneration": 1}
    return {
        "metadata": {"name": "g-0-worker", "generation": 1},
        "spec": {"replicas": 1},
        "status": base | status,
    }


@pytest.mark.parametrize(
    ("change", "wakes"),
    [
        pytest.param({"readyReplicas": 1}, True, id="ready-count"),
        pytest.param({"availableReplicas": 1}, True, id="available-count"),
        pytest.param({"updatedReplicas": 0}, True, id="updated-count"),
        pytest.param({"replicas": 2}, True, id="replica-count"),
        pytest.param({"observedGeneration": 2}, True, id="observed-generation"),
        pytest.param({"scheduledReplicas": 1}, True, id="scheduled-count"),
        pytest.param({"scheduleGatedReplicas": 1}, True, id="gated-count"),
        pytest.param({"currentPodTemplateHash": "abc"}, False, id="template-hash"),
        pytest.param({"updateProgress": {"podTemplateHash": "abc"}}, False, id="update-progress"),
        pytest.param(
            {
                "conditions": [
                    {"type": "PodCliqueScheduled", "status": "False", "reason": "InsufficientScheduledPods"}
                ]
            },
            True,
            id="condition-verdict",
        ),
    ],
)
def test_a_grove_object_wakes_its_graph_only_for_what_readiness_reads(
    change: dict[str, Any], wakes: bool
) -> None:
    old = _clique()
    new = _clique(**change)
    assert GROVE_OBJECT_CHANGED.update(old, new) is wakes


def test_a_grove_object_does_not_wake_its_graph_for_a_condition_time_alone() -> None:
    cond = {"type": "PodCliqueScheduled", "status": "True", "reason": "SufficientScheduledPods"}
    old = _clique(conditions=[cond | {"lastTransitionTime": "2026-01-01T00:00:00Z"}])
    new = _clique(conditions=[cond | {"lastTransitionTime": "2026-01-01T00:05:00Z"}])
    assert not GROVE_OBJECT_CHANGED.update(old, new)


def test_a_grove_object_wakes_its_graph_on_a_spec_change() -> None:
    old = _clique()
    scaled = _clique()
    scaled["spec"]["replicas"] = 2
    regenerated = _clique()
    regenerated["metadata"]["generation"] = 2
    assert GROVE_OBJECT_CHANGED.update(old, scaled)
    assert GROVE_OBJECT_CHANGED.update(old, regenerated)
