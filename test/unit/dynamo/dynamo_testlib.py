"""Builders shared by the generation tests (imported as `unit.dynamo.dynamo_testlib`)."""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.internal.dynamo import (
    Capabilities,
    GenContext,
    desired_component_objects,
    desired_dcds,
)

Obj = dict[str, Any]
NS = "ns1"
IMAGE = "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"
CTX = GenContext(namespace=NS, capabilities=Capabilities(lws=True))

WORKER_COMMANDS = {
    "vllm": (["python3", "-m", "dynamo.vllm"], ["--model", "Qwen/Qwen3-0.6B"]),
    "sglang": (["python3", "-m", "dynamo.sglang"], ["--model-path", "Qwen/Qwen3-0.6B"]),
    "trtllm": (["python3", "-m", "dynamo.trtllm"], ["--model-path", "Qwen/Qwen3-0.6B"]),
}


def service(component_type: str, backend: str = "vllm", **extra: Any) -> Obj:
    """A service spec with an image and, for worker types, the backend's command line."""
    main: Obj = {"image": IMAGE}
    if component_type in ("worker", "prefill", "decode"):
        command, args = WORKER_COMMANDS[backend]
        main |= {"command": command, "args": args}
    elif component_type == "planner":
        main |= {"command": ["python3", "-m", "planner"], "args": ["--backend", backend]}
    spec: Obj = {"componentType": component_type, "extraPodSpec": {"mainContainer": main}}
    for key, value in extra.items():
        if key == "extraPodSpec":
            spec["extraPodSpec"] = {**spec["extraPodSpec"], **value}
            if "mainContainer" in value:
                spec["extraPodSpec"]["mainContainer"] = {**main, **value["mainContainer"]}
        else:
            spec[key] = value
    return spec


def dgd(
    services: dict[str, Obj],
    *,
    name: str = "g",
    backend: str = "vllm",
    uid: str | None = "uid-1",
    **spec: Any,
) -> Obj:
    """A DGD dict as the API server would hold it."""
    meta: Obj = {"name": name, "namespace": NS}
    if uid:
        meta["uid"] = uid
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": meta,
        "spec": {"backendFramework": backend, "services": copy.deepcopy(services), **spec},
    }


def dcd_of(graph: Obj, svc: str, ctx: GenContext = CTX) -> Obj:
    """The generated DCD of one service, with a uid as if it had been created."""
    [found] = [d for d in desired_dcds(graph, ctx) if d["spec"]["serviceName"] == svc]
    found = copy.deepcopy(found)
    found["metadata"]["uid"] = f"dcd-uid-{svc}"
    return found


def objects_of(graph: Obj, svc: str, ctx: GenContext = CTX) -> list[Obj]:
    """Children of one service's DCD."""
    return desired_component_objects(dcd_of(graph, svc, ctx), ctx)


def kind(objs: list[Obj], k: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == k]


def pod_template(graph: Obj, svc: str, ctx: GenContext = CTX, *, role: str = "main") -> Obj:
    """Pod template of a service: the Deployment's, or the LWS leader/worker template."""
    objs = objects_of(graph, svc, ctx)
    if role == "main":
        [dep] = kind(objs, "Deployment")
        return dep["spec"]["template"]  # type: ignore[no-any-return]
    lws = kind(objs, "LeaderWorkerSet")[0]
    return lws["spec"]["leaderWorkerTemplate"][f"{role}Template"]  # type: ignore[no-any-return]


def main_container(template: Obj) -> Obj:
    [main] = [x for x in template["spec"]["containers"] if x["name"] == "main"]
    return main  # type: ignore[no-any-return]


def env_map(container: Obj) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}
