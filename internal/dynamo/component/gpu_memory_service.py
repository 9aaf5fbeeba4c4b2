"""`gpuMemoryService`: the pod's GPUs claimed once through Dynamic Resource Allocation and shared
between the engine (`containers[0]`) and a `gms-server` sidecar that holds the model's memory.

What it adds: a ResourceClaimTemplate `<graph>-<service>-gpu` asking for exactly the component's GPU
count of the configured DeviceClass; in the pod, a claim from that template replacing the main
container's `nvidia.com/gpu` resources, a toleration of the `nvidia.com/gpu` taint (DRA skips the
device plugin's), an emptyDir for the sidecar's sockets, and the sidecar itself as a restartable init
container whose startup probe waits for its ready file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.common.inputs import ServiceSpec
from dynamo_operator.internal.dynamo.common.objects import Obj, envelope
from dynamo_operator.internal.dynamo.pod.merge import env
from dynamo_operator.internal.dynamo.pod.user_pod import UserPod

CLAIM_NAME = "intrapod-shared-gpu"
SERVER_CONTAINER_NAME = "gms-server"
SERVER_MODULE = "gpu_memory_service.cli.server"
SHARED_VOLUME_NAME = "gms-intrapod-control"
SHARED_MOUNT_PATH = "/gms-intrapod-control"
ENV_SOCKET_DIR = "GMS_SOCKET_DIR"
DEFAULT_DEVICE_CLASS_NAME = "gpu.nvidia.com"
DRA_API_VERSION = "resource.k8s.io/v1"
DRA_API = f"{DRA_API_VERSION} ResourceClaimTemplate"


def gms_enabled(spec: ServiceSpec) -> bool:
    """Whether the component runs the GPU Memory Service."""
    return bool(spec.get("gpuMemoryService", {}).get("enabled"))


def claim_template_name(parent: str, service: str) -> str:
    """`<parent>-<lower(service)>-gpu`: the ResourceClaimTemplate a component's pods claim from."""
    return f"{parent}-{service.lower()}-gpu"


def missing_dra(field: str) -> MissingAPIError:
    """The error of a GMS component on a cluster without the DRA API (nothing of it is written)."""
    return MissingAPIError(
        field,
        DRA_API,
        "gpuMemoryService needs Dynamic Resource Allocation: the resource.k8s.io/v1 API is not "
        "served by this cluster (Kubernetes 1.34+, or DRA enabled); no workload is created until it is",
    )


def claimed_gpus(pod: UserPod) -> int:
    """GPUs the claim asks for: the limit, else the request; 0 when that is no whole number."""
    for side in ("limits", "requests"):
        value = pod.gpus(side)
        if value:
            return int(value) if value.isascii() and value.isdigit() else 0
    return 0


def check_gpu_memory_service(spec: ServiceSpec, pod: UserPod, field: str) -> None:
    """A GMS component is a worker, and its claim needs a whole number of GPUs of at least 1.
    v1alpha1's CRD states the first and the presence of a count; v1beta1's (upstream's) leaves both
    to upstream's webhook, and a pattern over an unbounded string exceeds CEL's cost budget."""
    if not gms_enabled(spec):
        return
    if spec.get("componentType") not in c.WORKER_COMPONENT_TYPES:
        raise GenerationError(
            f"{field}gpuMemoryService",
            "gpuMemoryService is only supported for worker components (worker, prefill or decode)",
        )
    if claimed_gpus(pod) < 1:
        raise GenerationError(
            f"{field}resources",
            "gpuMemoryService needs a whole number of GPUs of at least 1 in the main container's limits "
            "(or requests)",
        )


def desired_claim_template(
    *,
    parent: str,
    service: str,
    namespace: str,
    spec: ServiceSpec,
    pod: UserPod,
    owner: Mapping[str, Any] | None,
) -> Obj:
    """The ResourceClaimTemplate of a GMS component: exactly N devices of the configured class."""
    gms = spec.get("gpuMemoryService", {})
    obj = envelope(
        DRA_API_VERSION,
        "ResourceClaimTemplate",
        claim_template_name(parent, service),
        namespace,
        owner=owner,
    )
    obj["spec"] = {
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpus",
                        "exactly": {
                            "deviceClassName": str(gms.get("deviceClassName") or DEFAULT_DEVICE_CLASS_NAME),
                            "allocationMode": "ExactCount",
                            "count": claimed_gpus(pod),
                        },
                    }
                ]
            }
        }
    }
    return obj


def _append_missing(items: list[Obj], item: Obj, key: str = "name") -> list[Obj]:
    return items if any(x.get(key) == item[key] for x in items) else [*items, item]


def _claim_gpus(main: Obj) -> None:
    """Swap the main container's device-plugin GPUs for the shared claim."""
    resources = dict(main.get("resources") or {})
    for side in ("limits", "requests"):
        values = {k: v for k, v in (resources.get(side) or {}).items() if k != c.DEFAULT_GPU_RESOURCE}
        if values:
            resources[side] = values
        else:
            resources.pop(side, None)
    resources["claims"] = _append_missing(list(resources.get("claims") or []), {"name": CLAIM_NAME})
    main["resources"] = resources


def server_container(image: str | None) -> Obj:
    """The `gms-server` init sidecar (restartPolicy Always), on the engine's image."""
    container: Obj = {
        "name": SERVER_CONTAINER_NAME,
        "command": ["python3", "-m", SERVER_MODULE],
        "env": [env(ENV_SOCKET_DIR, SHARED_MOUNT_PATH)],
        "volumeMounts": [{"name": SHARED_VOLUME_NAME, "mountPath": SHARED_MOUNT_PATH}],
        "resources": {"claims": [{"name": CLAIM_NAME}]},
        # No startupProbe (as upstream since 2a6da14c): the sidecar counts as started once its
        # process runs, and clients retry their connect through the short socket bind.
        "restartPolicy": "Always",
    }
    if image:
        container["image"] = image
    return container


def apply_gpu_memory_service(pod: Obj, *, claim_template: str) -> None:
    """Rewrite a pod spec (in place) for GMS; `containers[0]` is the engine. Idempotent."""
    main = pod["containers"][0]
    if any(rc.get("name") == CLAIM_NAME for rc in pod.get("resourceClaims") or []):
        return
    _claim_gpus(main)
    pod["tolerations"] = [
        *(pod.get("tolerations") or []),
        {"key": c.DEFAULT_GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule"},
    ]
    pod["resourceClaims"] = [
        *(pod.get("resourceClaims") or []),
        {"name": CLAIM_NAME, "resourceClaimTemplateName": claim_template},
    ]
    pod["volumes"] = _append_missing(
        list(pod.get("volumes") or []), {"name": SHARED_VOLUME_NAME, "emptyDir": {}}
    )
    main["volumeMounts"] = _append_missing(
        list(main.get("volumeMounts") or []), {"name": SHARED_VOLUME_NAME, "mountPath": SHARED_MOUNT_PATH}
    )
    main["env"] = _append_missing(list(main.get("env") or []), env(ENV_SOCKET_DIR, SHARED_MOUNT_PATH))
    pod["initContainers"] = _append_missing(
        list(pod.get("initContainers") or []), server_container(main.get("image"))
    )
