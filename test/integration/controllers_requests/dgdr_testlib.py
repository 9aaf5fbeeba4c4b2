"""DGDR helpers shared by the request tests (not a test module): the test plays the profiler, finishing
(or failing) the Job's pod through kwok and writing the output ConfigMap the sidecar would: the
profiler's steps while it runs (`report_step`), then the results (`write_output`)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, EVENT, POD
from testsupport.api import eventually
from testsupport.cluster import Kubectl
from testsupport.graphs import IMAGE

TIMEOUT = 120.0
WORKERS_IMAGE = "registry.example/ai-dynamo/vllm-runtime:9.9.9"


def request(name: str, namespace: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "profilingConfig": {
                "profilerImage": "registry.example/ai-dynamo/profiler:1",
                "config": {"sla": {"isl": 3000, "osl": 150, "ttft": 200, "itl": 20}},
            },
            **spec,
        },
    }


def generated_graph(name: str) -> dict[str, Any]:
    """What the profiler would write: a small valid graph."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "labels": {"from": "profiler"}},
        "spec": {
            "backendFramework": "vllm",
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "replicas": 1,
                    "extraPodSpec": {"mainContainer": {"image": IMAGE}},
                },
                "VllmWorker": {
                    "componentType": "worker",
                    "replicas": 1,
                    "extraPodSpec": {
                        "mainContainer": {
                            "image": IMAGE,
                            "command": ["python3"],
                            "args": ["-m", "dynamo.vllm"],
                        }
                    },
                },
            },
        },
    }


PLANNER_DATA = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "planner-profile-data"},
    "data": {"k": "v"},
}


async def write_output(
    api: Client, dgdr: str, namespace: str, *, real: str, mocker: str, step: str = "", message: str = ""
) -> None:
    """The output ConfigMap as the sidecar writes it: both DGDs, each with the planner ConfigMap (and
    the last step relayed, when given)."""
    real_doc = yaml.safe_dump(PLANNER_DATA) + "---\n" + yaml.safe_dump(generated_graph(real))
    mocker_doc = yaml.safe_dump(generated_graph(mocker)) + "---\n" + yaml.safe_dump(PLANNER_DATA)
    await write_output_text(api, dgdr, namespace, real_doc, mocker=mocker_doc, step=step, message=message)


async def write_output_text(
    api: Client, dgdr: str, namespace: str, text: str, *, mocker: str = "", step: str = "", message: str = ""
) -> None:
    """The output ConfigMap with `text` as the profiler's result (the key the request reads without
    useMocker), as the sidecar labels it; `step`/`message`: the last step it relayed, kept beside."""
    data = {"config_with_planner.yaml": text, "profiler_status.yaml": "status: success\n"}
    if mocker:
        data["mocker_config_with_planner.yaml"] = mocker
    if step:
        data |= {"phase": step, "message": message}
    await _publish(api, dgdr, namespace, data)


async def report_step(api: Client, dgdr: str, namespace: str, step: str, message: str) -> None:
    """The sidecar relaying a step the profiler wrote to its status file: the output ConfigMap's
    `phase` and `message` keys, the ConfigMap created by the first one."""
    await _publish(api, dgdr, namespace, {"phase": step, "message": message})


async def _publish(api: Client, dgdr: str, namespace: str, data: dict[str, str]) -> None:
    """Create the output ConfigMap, or add `data` to it (the sidecar's `kubectl apply` of each write)."""
    name = f"dgdr-output-{dgdr}"
    try:
        await api.create(
            CONFIG_MAP,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {"dgdr.nvidia.com/name": dgdr, "nvidia.com/managed-by": "dynamo-operator"},
                },
                "data": data,
            },
        )
    except errors.AlreadyExists:
        await api.patch(CONFIG_MAP, name, {"data": data}, namespace=namespace)


async def job_pods(api: Client, namespace: str, job: str) -> list[dict[str, Any]]:
    return await api.list(POD, namespace=namespace, label_selector=f"batch.kubernetes.io/job-name={job}")


def running(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get(
        "deletionTimestamp"
    )


async def finish_pod(
    api: Client,
    kubectl: Kubectl,
    namespace: str,
    job: str,
    *,
    phase: str,
    message: str = "",
    skip: Collection[str] = (),
) -> str:
    """Wait for a Running pod of the Job (not one named in `skip`) and finish it through kwok;
    returns its name."""

    def fresh(pod: dict[str, Any]) -> bool:
        return running(pod) and pod["metadata"]["name"] not in skip

    pods = await eventually(
        lambda: job_pods(api, namespace, job), until=lambda ps: any(map(fresh, ps)), timeout=TIMEOUT
    )
    pod = next(p for p in pods if fresh(p))["metadata"]["name"]
    args = ["annotate", f"pod/{pod}", "-n", namespace, f"kwok.dynamo.test/phase={phase}"]
    if message:
        args.append(f"kwok.dynamo.test/message={message}")
    kubectl(*args)
    return str(pod)


async def state_of(api: Client, namespace: str, name: str) -> dict[str, Any]:
    return await api.get(kinds.DGDR, name, namespace=namespace)


async def wait_state(
    api: Client,
    namespace: str,
    name: str,
    state: str,
    timeout: float = TIMEOUT,  # noqa: ASYNC109 - a polling bound
) -> dict[str, Any]:
    return await eventually(
        lambda: state_of(api, namespace, name),
        until=lambda d: (d.get("status") or {}).get("state") == state,
        timeout=timeout,
        interval=0.25,
    )


async def event_reasons(api: Client, namespace: str, name: str) -> list[str]:
    events = await api.list(EVENT, namespace=namespace, field_selector=f"involvedObject.name={name}")
    return [e.get("reason", "") for e in events]
