"""The component spec both ways: v1alpha1's flat fields and `extraPodSpec` against v1beta1's `podTemplate`.

`to_hub` builds a v1beta1 component from a v1alpha1 service or DCD spec, `from_hub` the reverse; both
map only what the two versions hold natively, the way upstream's webhook does, so a converted object
reads the same here and there:

- the pod: v1alpha1's `resources`, `envs`, `envFromSecret`, probes and flat `volumeMounts` make the
  `main` container, over which `extraPodSpec.mainContainer` is laid (its env and volume mounts add to
  the flat ones); `extraPodSpec`'s other fields are the pod spec and `extraPodMetadata` the template's
  metadata. Back, `main`'s resources, env, probes and volume mounts return to the flat fields and the
  rest of it to `extraPodSpec.mainContainer`.
- `componentType: worker` with `subComponentType: prefill|decode` is the v1beta1 `type` prefill or
  decode; `sharedMemory` is `sharedMemorySize` ("0" when disabled); the mount flagged
  `useAsCompilationCache` is `compilationCache`; enabled `gpuMemoryService`, `failover` and
  `checkpoint` live under `experimental`; an enabled `scalingAdapter` is `scalingAdapter: {}`.

What a version cannot hold (a disabled feature, component labels, a second cache mount...) is left to
the caller's sparse difference (`sparse.carry_over`).
"""

from __future__ import annotations

import re
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

Json = dict[str, Any]

MAIN = "main"
FRONTEND_SIDECAR = "sidecar-frontend"
DEFAULT_GPU = "nvidia.com/gpu"

# Fields copied unchanged in both directions.
_SAME = (
    "providerOverride",
    "runtimeVersionOverride",
    "globalDynamoNamespace",
    "replicas",
    "minAvailable",
    "modelRef",
    "topologyConstraint",
    "eppConfig",
)
_GMS_MODE_TO_HUB = {"intraPod": "IntraPod", "interPod": "InterPod"}
_GMS_MODE_FROM_HUB = {hub: alpha for alpha, hub in _GMS_MODE_TO_HUB.items()}
_SPLIT_TYPES = ("prefill", "decode")
_ZERO_QUANTITY = re.compile(r"^[+-]?(0+(\.0*)?|\.0+)([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$")


def quantity_is_zero(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return value == 0
    return isinstance(value, str) and bool(_ZERO_QUANTITY.match(value.strip()))


def _copy(value: Any) -> Any:
    return copy_tree(value)


# --- v1alpha1 -> v1beta1 ------------------------------------------------------------------------


def to_hub(alpha: Json) -> Json:
    """The v1beta1 component for a v1alpha1 one (`name` from `serviceName`; callers may override)."""
    hub: Json = {key: _copy(alpha[key]) for key in _SAME if key in alpha}
    if alpha.get("serviceName"):
        hub["name"] = alpha["serviceName"]
    component_type = alpha.get("componentType")
    if component_type == "worker" and alpha.get("subComponentType") in _SPLIT_TYPES:
        hub["type"] = alpha["subComponentType"]
    elif component_type:
        hub["type"] = component_type
    if isinstance(alpha.get("multinode"), dict):
        hub["multinode"] = _copy(alpha["multinode"])
    shm = alpha.get("sharedMemory")
    if isinstance(shm, dict):
        if shm.get("disabled"):
            hub["sharedMemorySize"] = "0"
        elif "size" in shm and not quantity_is_zero(shm["size"]):
            hub["sharedMemorySize"] = _copy(shm["size"])
    for mount in alpha.get("volumeMounts") or ():
        if isinstance(mount, dict) and mount.get("useAsCompilationCache"):
            cache: Json = {"pvcName": mount.get("name", "")}
            if mount.get("mountPoint"):
                cache["mountPath"] = mount["mountPoint"]
            hub["compilationCache"] = cache
            break
    adapter = alpha.get("scalingAdapter")
    if isinstance(adapter, dict) and adapter.get("enabled"):
        hub["scalingAdapter"] = {}
    experimental = _experimental_to_hub(alpha)
    if experimental:
        hub["experimental"] = experimental
    pod_template = _pod_template_to_hub(alpha)
    if pod_template is not None:
        hub["podTemplate"] = pod_template
        if isinstance(alpha.get("frontendSidecar"), dict):
            hub["frontendSidecar"] = FRONTEND_SIDECAR
    return hub


def _experimental_to_hub(alpha: Json) -> Json:
    out: Json = {}
    gms = alpha.get("gpuMemoryService")
    if isinstance(gms, dict) and gms.get("enabled"):
        spec = {k: _copy(v) for k, v in gms.items() if k != "enabled"}
        if "mode" in spec:
            spec["mode"] = _GMS_MODE_TO_HUB.get(spec["mode"], spec["mode"])
        out["gpuMemoryService"] = spec
    failover = alpha.get("failover")
    if isinstance(failover, dict) and failover.get("enabled"):
        spec = {k: _copy(v) for k, v in failover.items() if k != "enabled"}
        if "mode" in spec:
            spec["mode"] = _GMS_MODE_TO_HUB.get(spec["mode"], spec["mode"])
        out["failover"] = spec
    if isinstance(alpha.get("checkpoint"), dict):
        out["checkpoint"] = _copy(alpha["checkpoint"])
    return out


def _resources_to_native(resources: Json) -> Json:
    out: Json = {}
    for side in ("requests", "limits"):
        item = resources.get(side)
        if not isinstance(item, dict):
            continue
        values: Json = {}
        for name in ("cpu", "memory"):
            if item.get(name):
                values[name] = item[name]
        if item.get("gpu"):
            values[item.get("gpuType") or DEFAULT_GPU] = item["gpu"]
        for name, value in (item.get("custom") or {}).items():
            values[name] = value
        if values:
            out[side] = values
    if resources.get("claims"):
        out["claims"] = _copy(resources["claims"])
    return out


def _has_pod_content(alpha: Json) -> bool:
    extra = alpha.get("extraPodSpec")
    return (
        "resources" in alpha
        or bool(alpha.get("envs"))
        or "envFromSecret" in alpha
        or any(
            isinstance(m, dict) and not m.get("useAsCompilationCache")
            for m in alpha.get("volumeMounts") or ()
        )
        or "livenessProbe" in alpha
        or "readinessProbe" in alpha
        or (isinstance(extra, dict) and any(value not in (None, {}, []) for value in extra.values()))
        or "extraPodMetadata" in alpha
        or "frontendSidecar" in alpha
    )


def _merge_envs(common: list[Any], specific: list[Any]) -> list[Any]:
    """`common` then `specific`, one entry per name, `specific` winning (the v1alpha1 renderer's rule)."""
    out: list[Any] = []
    index: dict[Any, int] = {}
    for env in [*common, *specific]:
        name = env.get("name") if isinstance(env, dict) else None
        if name in index:
            out[index[name]] = _copy(env)
            continue
        index[name] = len(out)
        out.append(_copy(env))
    return out


def _main_container(alpha: Json) -> Json:
    main: Json = {"name": MAIN}
    if isinstance(alpha.get("resources"), dict):
        native = _resources_to_native(alpha["resources"])
        if native:
            main["resources"] = native
    if alpha.get("envs"):
        main["env"] = _copy(alpha["envs"])
    if alpha.get("envFromSecret"):
        main["envFrom"] = [{"secretRef": {"name": alpha["envFromSecret"]}}]
    for probe in ("livenessProbe", "readinessProbe"):
        if probe in alpha:
            main[probe] = _copy(alpha[probe])
    mounts = [
        {"name": m.get("name", ""), "mountPath": m["mountPoint"]}
        if m.get("mountPoint")
        else {"name": m.get("name", "")}
        for m in alpha.get("volumeMounts") or ()
        if isinstance(m, dict)
    ]
    if mounts:
        main["volumeMounts"] = mounts
    extra = alpha.get("extraPodSpec")
    over = extra.get("mainContainer") if isinstance(extra, dict) else None
    if isinstance(over, dict):
        dedicated_env = main.get("env", [])
        dedicated_mounts = main.get("volumeMounts", [])
        for key, value in over.items():
            if key == "name" or value in (None, "", [], {}):
                continue  # a zero value never overrides (the renderer's merge)
            main[key] = _merged_resources(main.get(key), value) if key == "resources" else _copy(value)
        env = _merge_envs(dedicated_env, over.get("env") or [])
        if env:
            main["env"] = env
        mounts = [*_copy(over.get("volumeMounts") or []), *dedicated_mounts]
        if mounts:
            main["volumeMounts"] = mounts
    return main


def _merged_resources(dedicated: Any, over: Any) -> Json:
    """The component's resources under the main container's own, as the renderer merges them: each
    side's quantities by name, the container's claims over the component's."""
    out: Json = _copy(dedicated) if isinstance(dedicated, dict) else {}
    for key, value in over.items():
        if key in ("requests", "limits") and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **_copy(value)}
        else:
            out[key] = _copy(value)
    return out


def _pod_template_to_hub(alpha: Json) -> Json | None:
    if not _has_pod_content(alpha):
        return None
    template: Json = {}
    metadata = alpha.get("extraPodMetadata")
    if isinstance(metadata, dict):
        meta = {k: _copy(metadata[k]) for k in ("annotations", "labels") if metadata.get(k)}
        if meta:
            template["metadata"] = meta
    given = alpha.get("extraPodSpec")
    extra: Json = given if isinstance(given, dict) else {}
    spec = {k: _copy(v) for k, v in extra.items() if k != "mainContainer"}
    sidecars = [
        c for c in spec.get("containers") or () if not (isinstance(c, dict) and c.get("name") == MAIN)
    ]
    spec["containers"] = [_main_container(alpha), *sidecars]
    sidecar = alpha.get("frontendSidecar")
    if isinstance(sidecar, dict) and not any(c.get("name") == FRONTEND_SIDECAR for c in spec["containers"]):
        spec["containers"].append(_frontend_sidecar_container(sidecar))
    template["spec"] = spec
    return template


def _frontend_sidecar_container(sidecar: Json) -> Json:
    container: Json = {"name": FRONTEND_SIDECAR}
    if "image" in sidecar:
        container["image"] = sidecar["image"]
    if sidecar.get("args"):
        container["args"] = _copy(sidecar["args"])
    if sidecar.get("envFromSecret"):
        container["envFrom"] = [{"secretRef": {"name": sidecar["envFromSecret"]}}]
    if sidecar.get("envs"):
        container["env"] = _copy(sidecar["envs"])
    return container


# --- v1beta1 -> v1alpha1 ------------------------------------------------------------------------


def from_hub(hub: Json) -> Json:
    """The v1alpha1 component for a v1beta1 one (`serviceName` from `name`; callers may drop it)."""
    alpha: Json = {key: _copy(hub[key]) for key in _SAME if key in hub}
    if hub.get("name"):
        alpha["serviceName"] = hub["name"]
    if hub.get("type") in _SPLIT_TYPES:
        alpha["componentType"] = "worker"
        alpha["subComponentType"] = hub["type"]
    elif hub.get("type"):
        alpha["componentType"] = hub["type"]
    if isinstance(hub.get("multinode"), dict):
        alpha["multinode"] = _copy(hub["multinode"])
    if "sharedMemorySize" in hub:
        size = hub["sharedMemorySize"]
        alpha["sharedMemory"] = {"disabled": True, "size": size} if quantity_is_zero(size) else {"size": size}
    cache = hub.get("compilationCache")
    if isinstance(cache, dict):
        mount: Json = {"name": cache.get("pvcName", "")}
        if cache.get("mountPath"):
            mount["mountPoint"] = cache["mountPath"]
        mount["useAsCompilationCache"] = True
        alpha["volumeMounts"] = [mount]
    if "scalingAdapter" in hub:
        alpha["scalingAdapter"] = {"enabled": True}
    _experimental_from_hub(hub.get("experimental"), alpha)
    template = hub.get("podTemplate")
    if isinstance(template, dict):
        _pod_template_from_hub(template, alpha)
    return alpha


def _experimental_from_hub(experimental: Any, alpha: Json) -> None:
    if not isinstance(experimental, dict):
        return
    for key in ("gpuMemoryService", "failover"):
        spec = experimental.get(key)
        if isinstance(spec, dict):
            out = {"enabled": True, **_copy(spec)}
            if "mode" in out:
                out["mode"] = _GMS_MODE_FROM_HUB.get(out["mode"], out["mode"])
            alpha[key] = out
    if isinstance(experimental.get("checkpoint"), dict):
        alpha["checkpoint"] = _copy(experimental["checkpoint"])


def _resource_item(values: Json) -> Json:
    item: Json = {}
    for name, value in values.items():
        if name in ("cpu", "memory"):
            item[name] = str(value)
        elif name == DEFAULT_GPU:
            item["gpu"] = str(value)
        else:
            item.setdefault("custom", {})[name] = str(value)
    return item


def _resources_from_native(native: Json) -> Json | None:
    out: Json = {}
    for side in ("requests", "limits"):
        if isinstance(native.get(side), dict) and native[side]:
            out[side] = _resource_item(native[side])
    if native.get("claims"):
        out["claims"] = _copy(native["claims"])
    return out or None


def _pod_template_from_hub(template: Json, alpha: Json) -> None:
    metadata = template.get("metadata")
    if isinstance(metadata, dict) and (metadata.get("annotations") or metadata.get("labels")):
        alpha["extraPodMetadata"] = {
            k: _copy(metadata[k]) for k in ("annotations", "labels") if k in metadata
        }
    spec = _copy(template.get("spec")) if isinstance(template.get("spec"), dict) else {}
    containers = spec.pop("containers", None) or []
    main: Json | None = None
    others = []
    for container in containers:
        if main is None and isinstance(container, dict) and container.get("name") == MAIN:
            main = dict(container)
        else:
            others.append(container)
    extra: Json = {}
    if main is not None:
        resources = _resources_from_native(main.pop("resources", None) or {})
        if resources is not None:
            alpha["resources"] = resources
        mounts = main.pop("volumeMounts", None) or []
        flat = list(alpha.get("volumeMounts") or [])
        for mount in mounts:
            entry: Json = {"name": mount.get("name", "")}
            if mount.get("mountPath"):
                entry["mountPoint"] = mount["mountPath"]
            if not any(
                m.get("name") == entry["name"] and m.get("mountPoint") == entry.get("mountPoint")
                for m in flat
            ):
                flat.append(entry)
        if flat:
            alpha["volumeMounts"] = flat
        env = main.pop("env", None)
        if env:
            alpha["envs"] = env
        for probe in ("livenessProbe", "readinessProbe"):
            if probe in main:
                alpha[probe] = main.pop(probe)
        main.pop("name", None)
        if any(value not in (None, "", [], {}) for value in main.values()):
            extra["mainContainer"] = main
    if others:
        spec["containers"] = others
    if any(value not in (None, {}, []) for value in spec.values()):
        extra.update(spec)
    if extra:
        alpha["extraPodSpec"] = extra


# A component field and the main-container field it is split from (upstream's "origin splits").
ORIGIN_SPLITS = (
    ("envs", "env"),
    ("envFromSecret", "envFrom"),
    ("resources", "resources"),
    ("volumeMounts", "volumeMounts"),
    ("livenessProbe", "livenessProbe"),
    ("readinessProbe", "readinessProbe"),
)


def read_origin_splits(saved: Any) -> None:
    """Read a saved component the way upstream writes it, as a sparse difference (in place).

    Upstream's conversion of an object first written as v1alpha1 saves its main container as a Go
    struct: the container fields it was split from (env, envFrom, resources, mounts, probes) as they
    were, an absent one meaning "none", and Go's zero values for nothing (`"name": ""`,
    `"resources": {}`). Those zero values tell such a save from ours, which records a removal as
    null. So, for a save of upstream's: the zero values go, and each split that the save speaks of
    gets its absent side marked null (removed), on the component and on the container. Applied
    literally instead, the component's `envFromSecret` would come back beside the same entry in the
    container's `envFrom` (two identical env sources in the pod) and `"resources": {}` would land on
    the container."""
    if not isinstance(saved, dict):
        return
    pod = saved.get("extraPodSpec")
    main = pod.get("mainContainer") if isinstance(pod, dict) else None
    if not isinstance(main, dict) or not (main.get("name") == "" or main.get("resources") == {}):
        return
    if main.get("name") == "":
        del main["name"]
    if main.get("resources") == {}:
        del main["resources"]
    for own, container in ORIGIN_SPLITS:
        if saved.get(own) is not None or main.get(container) not in (None, [], {}):
            saved.setdefault(own, None)
            main.setdefault(container, None)
    _restored_whole(saved.get("resources"))


# The fields of v1alpha1's `resources` and of each of its quantity blocks, as Go structs hold them.
_RESOURCES_FIELDS = ("requests", "limits", "claims")
_RESOURCE_ITEM_FIELDS = ("cpu", "memory", "gpu", "gpuType", "custom")


def _restored_whole(resources: Any) -> None:
    """Upstream restores a component's saved `resources` whole: a field its save leaves out is
    empty, not kept from the main container's resources the conversion split it from (resource
    claims, which upstream keeps on the container alone). As a sparse difference, each field left
    out is marked removed (in place)."""
    if not isinstance(resources, dict):
        return
    for key in _RESOURCES_FIELDS:
        resources.setdefault(key, None)
    for side in ("requests", "limits"):
        if isinstance(resources[side], dict):
            for key in _RESOURCE_ITEM_FIELDS:
                resources[side].setdefault(key, None)


def drop_generated_frontend_sidecar(alpha: Json) -> None:
    """A v1alpha1 component whose `frontendSidecar` came back from a save of upstream's does not also
    list the container v1beta1 made of it (upstream's save keeps the struct and leaves the container
    to the pod template; shown both ways, the component would name its sidecar twice)."""
    sidecar = alpha.get("frontendSidecar")
    extra = alpha.get("extraPodSpec")
    if not isinstance(sidecar, dict) or not isinstance(extra, dict):
        return
    containers = extra.get("containers")
    if not isinstance(containers, list):
        return
    generated = _frontend_sidecar_container(sidecar)
    kept = [c for c in containers if c != generated]
    if len(kept) == len(containers):
        return
    if kept:
        extra["containers"] = kept
    else:
        del extra["containers"]
        if not extra:
            del alpha["extraPodSpec"]
