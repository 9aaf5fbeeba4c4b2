"""The `nvidia.com/dcd-spec` text upstream's generator (2a6da14c) writes on a DCD it makes from a graph
component, byte for byte. Pure.

Upstream makes it by converting a v1alpha1 DCD that holds the graph's v1alpha1 component to v1beta1.
Its conversion records ("saves") v1alpha1-only fields by one rule per field and, for an object first
written as v1alpha1, also how the main container's fields were split between the component and the
container ("origin splits": envs, envFrom, resources, volume mounts, probes). Go's encoding/json then
writes the save: struct field order, omitempty, the zero value of a struct field (a saved main
container always shows `"name":""` and `"resources":{}`).

Our conversion (api/conversion) records a sparse difference instead: it reads back to the same
v1alpha1 view, but it is other text. A generated DCD carries this one, so a graph's DCDs are the
objects upstream's operator stores (test/compat), and either operator reads them alike.

Fields upstream saves but no graph component of ours can hold in a way that matters here
(autoscaling, multinode, the disabled features, a provider override) are written as sorted JSON, not
in Go's field order.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from dynamo_operator.api.conversion.shared_spec import ORIGIN_SPLITS
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.rollout import gojson
from dynamo_operator.internal.dynamo.rollout.gojson import Field

_S, _B, _I, _Q = "string", "bool", "int", "quantity"
_CONTAINER = "core/v1.Container"
_PROBE = "core/v1.Probe"
_ENV = "core/v1.EnvVar"
_POD_SPEC = "core/v1.PodSpec"
_SPEC = "v1alpha1.DynamoComponentDeploymentSpec"
_EMPTY_SERVICE_NAME = ',"rawJSON":[{"path":"serviceName","nil":true}]'
_DISAGGREGATED = ("prefill", "decode")


_opt, _req, _ptr = gojson.optional, gojson.required, gojson.pointer_to


_RAW = {"ptr": "raw"}
# upstream api/v1alpha1 at 2a6da14c: the DCD spec with its shared spec inlined, declaration order.
V1ALPHA1_STRUCTS: dict[str, tuple[Field, ...]] = {
    _SPEC: (
        _opt("backendFramework", _S),
        _opt("providerOverride", _RAW),
        _opt("annotations", {"map": _S}),
        _opt("labels", {"map": _S}),
        _opt("serviceName", _S),
        _opt("componentType", _S),
        _opt("subComponentType", _S),
        _opt("runtimeVersionOverride", _S),
        _opt("dynamoNamespace", {"ptr": _S}),
        _opt("globalDynamoNamespace", _B),
        _opt("resources", _ptr("v1alpha1.Resources")),
        _opt("autoscaling", _RAW),
        _opt("envs", {"slice": {"struct": _ENV}}),
        _opt("envFromSecret", {"ptr": _S}),
        _opt("volumeMounts", {"slice": {"struct": "v1alpha1.VolumeMount"}}),
        _opt("ingress", _ptr("v1alpha1.IngressSpec")),
        _opt("modelRef", _ptr("v1alpha1.ModelReference")),
        _opt("sharedMemory", _ptr("v1alpha1.SharedMemorySpec")),
        _opt("extraPodMetadata", _ptr("v1alpha1.ExtraPodMetadata")),
        _opt("extraPodSpec", {"ptr": "extraPodSpec"}),  # encoded by `_extra_pod_spec`
        _opt("livenessProbe", _ptr(_PROBE)),
        _opt("readinessProbe", _ptr(_PROBE)),
        _opt("replicas", {"ptr": _I}),
        _opt("minAvailable", {"ptr": _I}),
        _opt("multinode", _RAW),
        _opt("scalingAdapter", _RAW),
        _opt("eppConfig", _RAW),
        _opt("frontendSidecar", _RAW),
        _opt("checkpoint", _RAW),
        _opt("topologyConstraint", _RAW),
        _opt("gpuMemoryService", _RAW),
        _opt("failover", _RAW),
    ),
    "v1alpha1.Resources": (
        _opt("requests", _ptr("v1alpha1.ResourceItem")),
        _opt("limits", _ptr("v1alpha1.ResourceItem")),
        _opt("claims", {"slice": {"struct": "core/v1.ResourceClaim"}}),
    ),
    "v1alpha1.ResourceItem": (
        _opt("cpu", _S),
        _opt("memory", _S),
        _opt("gpu", _S),
        _opt("gpuType", _S),
        _opt("custom", {"map": _S}),
    ),
    "v1alpha1.VolumeMount": (_opt("name", _S), _opt("mountPoint", _S), _opt("useAsCompilationCache", _B)),
    "v1alpha1.IngressSpec": (
        _opt("enabled", _B),
        _opt("host", _S),
        _opt("useVirtualService", _B),
        _opt("virtualServiceGateway", {"ptr": _S}),
        _opt("hostPrefix", {"ptr": _S}),
        _opt("annotations", {"map": _S}),
        _opt("labels", {"map": _S}),
        _opt("tls", _ptr("v1alpha1.IngressTLSSpec")),
        _opt("hostSuffix", {"ptr": _S}),
        _opt("ingressControllerClassName", {"ptr": _S}),
    ),
    "v1alpha1.IngressTLSSpec": (_opt("secretName", _S),),
    "v1alpha1.ModelReference": (_req("name", _S), _opt("revision", _S)),
    "v1alpha1.SharedMemorySpec": (_opt("disabled", _B), _opt("size", _Q)),
    "v1alpha1.ExtraPodMetadata": (_opt("annotations", {"map": _S}), _opt("labels", {"map": _S})),
}


@functools.cache
def _structs() -> dict[str, tuple[Field, ...]]:
    return {**gojson.core_v1_structs(), **V1ALPHA1_STRUCTS}


# --- what upstream's conversion saves -----------------------------------------------------------------


def _empty(value: Any) -> bool:
    return value is None or value in ({}, [], "")


def _resources_survive_native(resources: Mapping[str, Any]) -> bool:
    """v1alpha1 resources come back unchanged through a container's requirements: no GPU type (it
    renames the GPU resource), no custom entry shadowing a named one, no empty side."""
    for side in ("requests", "limits"):
        item = resources.get(side)
        if item is None:
            continue
        if not item or item.get("gpuType") or any(k in (item.get("custom") or {}) for k in ("cpu", "memory")):
            return False
    return not resources.get("claims")


def _shared_memory_kept(shared_memory: Mapping[str, Any]) -> bool:
    size = str(shared_memory.get("size") or "0")
    zero = size.strip() in ("0", "")
    return (not zero) if shared_memory.get("disabled") else zero


def _extra_pod_spec_kept(eps: Mapping[str, Any]) -> bool:
    """Saved whole when empty or when it says nothing but the main container's name."""
    rest = {k: v for k, v in eps.items() if k != "mainContainer" and not _empty(v)}
    main = eps.get("mainContainer")
    if rest:
        return False
    if main is None:
        return True
    others = {k: v for k, v in main.items() if k != "name" and not _empty(v)}
    return not others


def _sidecar_conflict(spec: Mapping[str, Any]) -> bool:
    if spec.get("frontendSidecar") is None:
        return False
    containers = (spec.get("extraPodSpec") or {}).get("containers") or ()
    return any(c.get("name") == "sidecar-frontend" for c in containers)


def spoke_save(spec: Mapping[str, Any]) -> Obj:
    """What upstream's conversion records of a v1alpha1 component (`spec`) first written as v1alpha1."""
    save: Obj = {}
    sub = spec.get("subComponentType")
    if sub and not (spec.get("componentType") == "worker" and sub in _DISAGGREGATED):
        save["subComponentType"] = sub
    for key in ("dynamoNamespace", "autoscaling", "ingress", "envFromSecret"):
        if spec.get(key) is not None:
            save[key] = spec[key]
    for key in ("annotations", "labels"):
        if spec.get(key):
            save[key] = spec[key]
    resources = spec.get("resources")
    if resources is not None and not _resources_survive_native(resources):
        save["resources"] = resources
    mounts = spec.get("volumeMounts") or []
    if sum(1 for m in mounts if m.get("useAsCompilationCache")) > 1:
        save["volumeMounts"] = mounts
    if spec.get("sharedMemory") is not None and _shared_memory_kept(spec["sharedMemory"]):
        save["sharedMemory"] = spec["sharedMemory"]
    metadata = spec.get("extraPodMetadata")
    if metadata is not None and not metadata.get("annotations") and not metadata.get("labels"):
        save["extraPodMetadata"] = metadata
    eps = spec.get("extraPodSpec")
    if eps is not None and (_extra_pod_spec_kept(eps) or _sidecar_conflict(spec)):
        save["extraPodSpec"] = dict(eps)
    for key in ("scalingAdapter", "gpuMemoryService", "failover"):
        value = spec.get(key)
        if value is not None and not value.get("enabled"):
            save[key] = value
    if spec.get("frontendSidecar") is not None:
        save["frontendSidecar"] = spec["frontendSidecar"]
    _save_main_container_origins(spec, save)
    return save


def _save_main_container_origins(spec: Mapping[str, Any], save: Obj) -> None:
    """The origin splits: where each of the main container's fields came from."""
    main = (spec.get("extraPodSpec") or {}).get("mainContainer")
    if main is None:
        return
    kept: Obj = {}
    if main.get("name"):
        kept["name"] = main["name"]
    for component_key, container_key in ORIGIN_SPLITS:
        own = spec.get(component_key)
        theirs = main.get(container_key)
        if (own is None or own == []) and _empty(theirs):
            continue
        if own is not None and own != []:
            save[component_key] = own
        else:
            save.pop(component_key, None)
        if not _empty(theirs):
            kept[container_key] = theirs
        else:
            kept.setdefault(container_key, None)
    if kept:
        eps = dict(save.get("extraPodSpec") or {})
        eps["mainContainer"] = {**(eps.get("mainContainer") or {}), **kept}
        save["extraPodSpec"] = eps


# --- Go's encoding ------------------------------------------------------------------------------------


def _extra_pod_spec(eps: Mapping[str, Any]) -> str:
    """`ExtraPodSpec`: an inlined *PodSpec (all its fields, or none when nothing of it is set) and the
    main container."""
    structs = _structs()
    parts: list[str] = []
    if any(k != "mainContainer" for k in eps):
        inner = gojson.encode_struct(eps, structs[_POD_SPEC], structs)
        if inner != "{}":
            parts.append(inner[1:-1])
    if eps.get("mainContainer") is not None:
        parts.append(
            '"mainContainer":' + gojson.encode(eps["mainContainer"], {"struct": _CONTAINER}, structs)
        )
    return "{" + ",".join(parts) + "}"


def encode_save(save: Mapping[str, Any]) -> str:
    """The save as Go marshals a v1alpha1 DynamoComponentDeploymentSpec holding it."""
    structs = _structs()
    parts = []
    for name, omitempty, desc in structs[_SPEC]:
        value = save.get(name)
        if name == "extraPodSpec":
            if value is not None:
                parts.append(f'"{name}":{_extra_pod_spec(value)}')
            continue
        if omitempty and gojson.is_empty(value, desc):
            continue
        parts.append(f'"{name}":{gojson.encode(value, desc, structs)}')
    return "{" + ",".join(parts) + "}"


def dcd_spec_payload(alpha_component: Mapping[str, Any]) -> str:
    """The `nvidia.com/dcd-spec` value upstream's generator writes for a DCD made from
    `alpha_component` (a graph component, v1alpha1), which names no serviceName of its own."""
    text = '{"version":1,"spec":' + encode_save(spoke_save(alpha_component))
    if not alpha_component.get("serviceName"):
        text += _EMPTY_SERVICE_NAME
    return text + "}"
