"""Every path that shows a graph's workers names them with the graph reconciler's own decision
(graph/workernames.py): `dynamo-operator render`, `desired_graph_objects` and the reconciler's
rollout step agree, a new graph gets the v2 hash, and a graph recording a v1 generation of its
unchanged spec keeps the v1 name."""

from __future__ import annotations

import copy
from typing import Any

import yaml
from dynamo_operator.controllers.dynamographdeployment.rollout import WorkerRoller
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects, graph_worker_hash
from dynamo_operator.internal.dynamo.graph.workernames import first_worker_generation
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, render_objects
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2

NS = "ns1"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.5.0"


def graph(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS, "annotations": dict(annotations or {})},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "extraPodSpec": {"mainContainer": {"image": IMAGE}},
                },
                "Worker": {
                    "componentType": "worker",
                    "resources": {"limits": {"gpu": "1"}},
                    "extraPodSpec": {
                        "mainContainer": {"image": IMAGE, "command": ["python3", "-m", "dynamo.vllm"]}
                    },
                },
            },
        },
    }


def worker_dcd_names(objects: list[dict[str, Any]]) -> set[str]:
    return {
        o["metadata"]["name"]
        for o in objects
        if o["kind"] == "DynamoComponentDeployment" and o["spec"].get("componentType") == "worker"
    }


def render(g: dict[str, Any]) -> list[dict[str, Any]]:
    options = RenderOptions(namespace=NS, capabilities=Capabilities(), operator_version="")
    return render_objects(yaml.safe_dump(g), options)


class _Nothing:
    """The reconciler's collaborators, unused by `WorkerRoller.generation`."""


def test_new_graph_worker_dcds_are_named_with_the_v2_hash() -> None:
    g = graph()
    assert worker_dcd_names(desired_graph_objects(g, GenContext(namespace=NS))) == {
        f"g-worker-{worker_hash_v2(g, NS)}"
    }


def test_render_names_workers_as_the_reconciler_names_a_new_graph() -> None:
    g = graph()
    roller = WorkerRoller(client=_Nothing(), cache=_Nothing(), recorder=_Nothing())  # type: ignore[arg-type]
    reconciler = roller.generation(f"{NS}/g", copy.deepcopy(g), children=[], previous=None)
    assert reconciler == first_worker_generation(g, NS)
    assert worker_dcd_names(render(g)) == {f"g-worker-{reconciler.active}"}


def test_graph_recording_v1_generation_of_its_spec_keeps_v1_names() -> None:
    v1 = graph_worker_hash(graph())
    g = graph({c.ANNOTATION_CURRENT_WORKER_HASH: v1})
    assert worker_dcd_names(render(g)) == {f"g-worker-{v1}"}
