"""Small DynamoGraphDeployment manifests the integration tests and benchmarks share."""

from __future__ import annotations

from typing import Any

IMAGE = "registry.example/ai-dynamo/vllm-runtime:0.6.1"


def two_service_graph(
    name: str,
    namespace: str,
    *,
    worker_env: str | None = None,
    worker_replicas: int = 1,
    adapter: bool = False,
    model: str | None = None,
) -> dict[str, Any]:
    """A vLLM graph of a frontend and one worker service; the worker optionally carries an env var
    (`WORKER_FLAVOUR`, to force a rollout), a scaling adapter, or a `modelRef`."""
    main = {"image": IMAGE}
    worker: dict[str, Any] = {
        "componentType": "worker",
        "replicas": worker_replicas,
        "extraPodSpec": {
            "mainContainer": {**main, "command": ["python3", "-m", "dynamo.vllm"], "args": ["--model", "m"]}
        },
    }
    if worker_env is not None:
        worker["envs"] = [{"name": "WORKER_FLAVOUR", "value": worker_env}]
    if adapter:
        worker["scalingAdapter"] = {"enabled": True}
    if model:
        worker["modelRef"] = {"name": model}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "extraPodSpec": {"mainContainer": main},
                },
                "Worker": worker,
            },
        },
    }
