"""Where a v1alpha1 field of a graph or component lives in v1beta1, as a path. Pure.

Generation reads a graph's or component's v1alpha1 view, so the errors it raises name v1alpha1 paths
(`spec.services.Worker.extraPodSpec.mainContainer.image`). The objects are stored and read as
v1beta1, and that is the form users copy from upstream's docs, so a refusal names the field the way
v1beta1 spells it (`spec.components[name=Worker].podTemplate.spec.containers[name=main].image`).

The mapping is the conversion's (shared_spec.py, graph.py), written here once per field; the tests
plant a value at each v1alpha1 path, convert, and find it at the v1beta1 path given here. A list
entry is addressed by its key, `[name=...]`: an index would be the v1alpha1 one, and the conversion
reorders some lists (the main container joins the pod's containers first).

Fields v1beta1 has no place for (a component's `ingress`, `labels`, `annotations`, `dynamoNamespace`,
the graph's `pvcs`) keep their v1alpha1 path: only an object written as v1alpha1 can set them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from .shared_spec import DEFAULT_GPU, FRONTEND_SIDECAR, MAIN

PathRewrite = Callable[[str], str]
"""Maps one path to another (`graph_path` with its services bound, `dcd_path`)."""

MAIN_CONTAINER = f"podTemplate.spec.containers[name={MAIN}]"
SIDECAR_CONTAINER = f"podTemplate.spec.containers[name={FRONTEND_SIDECAR}]"


@dataclass(frozen=True, slots=True)
class _Moved:
    """A v1alpha1 field (its leading path segments) and where v1beta1 holds it. `keeps_rest`: the
    sub-path below it carries over unchanged (False: v1beta1 holds the whole block as one field)."""

    alpha: tuple[str, ...]
    beta: str
    keeps_rest: bool = True


# Component-relative, longest prefix first where two share a start.
_COMPONENT_FIELDS: tuple[_Moved, ...] = (
    _Moved(("extraPodSpec", "mainContainer"), MAIN_CONTAINER),
    _Moved(("extraPodSpec",), "podTemplate.spec"),
    _Moved(("extraPodMetadata",), "podTemplate.metadata"),
    _Moved(("envs",), f"{MAIN_CONTAINER}.env"),
    _Moved(("envFromSecret",), f"{MAIN_CONTAINER}.envFrom"),
    _Moved(("livenessProbe",), f"{MAIN_CONTAINER}.livenessProbe"),
    _Moved(("readinessProbe",), f"{MAIN_CONTAINER}.readinessProbe"),
    _Moved(("volumeMounts",), f"{MAIN_CONTAINER}.volumeMounts"),
    # v1beta1 has no `enabled`: the block's presence turns the feature on.
    _Moved(("gpuMemoryService", "enabled"), "experimental.gpuMemoryService", keeps_rest=False),
    _Moved(("gpuMemoryService",), "experimental.gpuMemoryService"),
    _Moved(("failover", "enabled"), "experimental.failover", keeps_rest=False),
    _Moved(("failover",), "experimental.failover"),
    _Moved(("checkpoint",), "experimental.checkpoint"),
    _Moved(("scalingAdapter",), "scalingAdapter", keeps_rest=False),
    _Moved(("sharedMemory",), "sharedMemorySize", keeps_rest=False),
    _Moved(("componentType",), "type", keeps_rest=False),
    _Moved(("subComponentType",), "type", keeps_rest=False),
    _Moved(("serviceName",), "name", keeps_rest=False),
    _Moved(("frontendSidecar", "image"), f"{SIDECAR_CONTAINER}.image", keeps_rest=False),
    _Moved(("frontendSidecar", "args"), f"{SIDECAR_CONTAINER}.args"),
    _Moved(("frontendSidecar", "envs"), f"{SIDECAR_CONTAINER}.env"),
    _Moved(("frontendSidecar", "envFromSecret"), f"{SIDECAR_CONTAINER}.envFrom", keeps_rest=False),
)
_RESOURCE_SIDES = ("requests", "limits")
# Sub-fields renamed on the way: a flat volume mount's `mountPoint` is the container's `mountPath`.
_RENAMED = {"mountPoint": "mountPath"}


def _segments(path: str) -> list[str]:
    return path.split(".") if path else []


def _resources(rest: list[str]) -> str:
    """`resources...` of a v1alpha1 component: the main container's, its GPU and custom entries keyed
    by resource name (a custom name may itself hold dots, so everything after `custom` is the key)."""
    base = f"{MAIN_CONTAINER}.resources"
    if not rest or rest[0] not in _RESOURCE_SIDES:
        return ".".join([base, *rest])
    side, below = rest[0], rest[1:]
    if not below or below[0] == "gpuType":
        return f"{base}.{side}"
    if below[0] == "gpu":
        return f"{base}.{side}[{DEFAULT_GPU}]"
    if below[0] == "custom":
        return f"{base}.{side}[{'.'.join(below[1:])}]" if len(below) > 1 else f"{base}.{side}"
    return ".".join([base, side, *below])


def component_path(path: str) -> str:
    """The v1beta1 path, relative to a component's spec, of the v1alpha1 `path` relative to a
    service's (or a DCD's) spec."""
    segments = _segments(path)
    if not segments:
        return path
    # A segment may carry a list index or key (`volumeMounts[2]`): matched on its field name.
    head = [s.split("[", 1)[0] for s in segments]
    if head[0] == "resources":
        return _resources(segments[1:])
    for moved in _COMPONENT_FIELDS:
        width = len(moved.alpha)
        if tuple(head[:width]) == moved.alpha:
            own_key = segments[width - 1][len(head[width - 1]) :]  # `[...]` on the last matched segment
            rest = [_RENAMED.get(s, s) for s in segments[width:]] if moved.keeps_rest else []
            return ".".join([moved.beta + (own_key if moved.keeps_rest else ""), *rest])
    return path


def _service_and_rest(rest: str, services: Collection[str]) -> tuple[str, str]:
    """Split `<service>[.<path>]`: a v1alpha1 service key may hold dots, so the longest known name
    that fits wins; an unknown one runs to the first dot."""
    for name in sorted(services, key=len, reverse=True):
        if rest == name:
            return name, ""
        if rest.startswith(name + "."):
            return name, rest[len(name) + 1 :]
    name, _, below = rest.partition(".")
    return name, below


def graph_path(path: str, services: Collection[str] = ()) -> str:
    """The v1beta1 path of the v1alpha1 graph path `path` (from the object's root). `services`: the
    graph's service names, to split a path whose service name holds dots."""
    if path == "spec.services":
        return "spec.components"
    if path.startswith("spec.services."):
        name, below = _service_and_rest(path[len("spec.services.") :], services)
        component = f"spec.components[name={name}]"
        return f"{component}.{component_path(below)}" if below else component
    if path == "spec.envs" or path.startswith(("spec.envs.", "spec.envs[")):
        return "spec.env" + path[len("spec.envs") :]
    if path == "spec.topologyConstraint.topologyProfile":
        return "spec.topologyConstraint.clusterTopologyName"
    return path


def dcd_path(path: str) -> str:
    """The v1beta1 path of a DCD field given relative to its v1alpha1 spec (`extraPodSpec.…`) or from
    the object's root (`spec.…`, `metadata.…`)."""
    if path == "spec" or path.startswith("metadata"):
        return path
    relative = path[len("spec.") :] if path.startswith("spec.") else path
    return f"spec.{component_path(relative)}"


# A request's v1alpha1 fields v1beta1 holds elsewhere (api/conversion/request.py), rooted at the object.
_REQUEST_FIELDS: tuple[tuple[str, str], ...] = (
    ("spec.profilingConfig.profilerImage", "spec.image"),
    ("spec.profilingConfig.config.sla.isl", "spec.workload.isl"),
    ("spec.profilingConfig.config.sla.osl", "spec.workload.osl"),
    ("spec.profilingConfig.config.sla", "spec.sla"),
    ("spec.profilingConfig.config.deployment.modelCache.modelPathInPvc", "spec.modelCache.pvcModelPath"),
    ("spec.profilingConfig.config.deployment.modelCache", "spec.modelCache"),
    ("spec.profilingConfig.config.planner", "spec.features.planner"),
    ("spec.useMocker", "spec.features.mocker.enabled"),
)


def request_path(path: str) -> str:
    """The v1beta1 path of the v1alpha1 request path `path` (from the object's root); a field only
    v1alpha1 has (`enableGpuDiscovery`, `deploymentOverrides`, the rest of the profiling config)
    keeps its path."""
    for alpha, beta in _REQUEST_FIELDS:
        if path == alpha or path.startswith((alpha + ".", alpha + "[")):
            return beta + path[len(alpha) :]
    return path
