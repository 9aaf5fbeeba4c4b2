"""What a component's user wrote of its pods, in the one shape the pod builder layers (template.py). Pure.

Two readers fill it:

- `stored_user_pod` reads a v1beta1 component's `podTemplate` as stored: the container named `main`,
  the pod spec beside it, the template's metadata, `compilationCache` and `sharedMemorySize`;
- `alpha_user_pod` reads a v1alpha1 component: `extraPodSpec.mainContainer` and v1alpha1's flat
  fields (`envs`, `envFromSecret`, `resources`, the two probes, `volumeMounts`, `sharedMemory`),
  which its renderer lays over the main container in an order of their own.

The builder then reads neither version. v1beta1 says in one container what v1alpha1 could say in two
places; read natively, the main container's env, resources, liveness and readiness probes and volume
mounts take the places v1alpha1's flat fields hold in the layering, as the conversion between the two
puts them (api/conversion/shared_spec.py), so a component reads the same in both versions wherever
v1alpha1's two places do not disagree (`layered_apart` tells where they do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, cast

from dynamo_operator.api.conversion.shared_spec import quantity_is_zero
from dynamo_operator.api.views import k8s
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import (
    DcdSpec,
    ServiceSpec,
    StoredComponent,
    StoredDcdSpec,
    json_object,
)
from dynamo_operator.internal.dynamo.pod.merge import merge_env

Side = Literal["requests", "limits"]
SIDES: tuple[Side, ...] = ("requests", "limits")
# The main container's fields a v1beta1 reader takes out of it into the builder's own places.
_TAKEN_FROM_MAIN = ("name", "env", "resources", "livenessProbe", "readinessProbe", "volumeMounts")
# What the conversion counts as no value: in a main container, and in the pod spec beside it.
_EMPTY: tuple[object, ...] = (None, "", [], {})
_EMPTY_IN_POD: tuple[object, ...] = (None, [], {})


@dataclass(frozen=True, slots=True)
class Quantity:
    """One resource amount for the main container, unchecked (the builder checks it as it applies
    it, naming `field`, v1alpha1's path, generation's convention)."""

    side: Side
    name: str
    value: str
    field: str
    gpu: bool = False  # the component's GPU count: multinode and the GPU Memory Service read it


@dataclass(frozen=True, slots=True)
class ClaimMount:
    """A volume mount of the main container whose volume is, unless the pod spec declares one of its
    name, a PersistentVolumeClaim of that name (v1alpha1's `volumeMounts`)."""

    name: str
    mount_path: str | None
    compilation_cache: bool = False
    # What v1beta1 says of the mount beyond its name and path (readOnly, subPath...).
    details: k8s.VolumeMount | None = None


@dataclass(frozen=True, slots=True)
class UserPod:
    """A component's pods as its user wrote them, in the builder's layering order."""

    # Laid over the defaults field by field (its env unioned, its startupProbe replacing).
    main: k8s.Container
    # The component's env, over the main container's (v1alpha1 `envs`; v1beta1: main's env).
    env: Sequence[k8s.EnvVar]
    # Liveness and readiness probes that replace the default ones whole.
    probes: Mapping[str, k8s.Probe]
    quantities: Sequence[Quantity]
    claims: Sequence[k8s.ResourceClaim]
    env_from_secret: str | None
    mounts: Sequence[ClaimMount]
    # The pod spec beside the main container; `containers` holds the others.
    spec: k8s.PodSpec
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    shared_memory_size: object | None  # None: the default size
    shared_memory_disabled: bool
    # v1alpha1's `frontendSidecar` block (a container spec of its own).
    frontend_sidecar: Mapping[str, object] | None = None
    # v1beta1's `frontendSidecar`: the container of `spec.containers` to complete as a frontend.
    named_sidecar: str | None = None

    def gpus(self, side: Side) -> str:
        """The GPU count given on `side`, as written ("" when none)."""
        return next((q.value for q in self.quantities if q.side == side and q.gpu), "")

    @property
    def containers(self) -> list[k8s.Container]:
        """The containers the user wrote beside `main`."""
        return list(self.spec.get("containers") or [])


# --- v1alpha1 --------------------------------------------------------------------------------------


def alpha_user_pod(spec: DcdSpec | ServiceSpec, *, named_sidecar: str | None = None) -> UserPod:
    """A v1alpha1 component's pods (no copy: the builder copies what it changes). `named_sidecar`:
    what its v1beta1 form names as its frontend sidecar (common/remainder.py), if anything."""
    extra = spec.get("extraPodSpec") or {}
    main = extra.get("mainContainer") or cast(k8s.Container, {})
    pod = cast(k8s.PodSpec, {k: v for k, v in extra.items() if k != "mainContainer"})
    resources = spec.get("resources") or {}
    metadata = spec.get("extraPodMetadata") or {}
    shm = spec.get("sharedMemory") or {}
    probes = {p: spec[p] for p in ("livenessProbe", "readinessProbe") if spec.get(p) is not None}
    sidecar = spec.get("frontendSidecar")
    return UserPod(
        main=main,
        env=spec.get("envs") or [],
        probes=probes,
        quantities=_alpha_quantities(resources),
        claims=resources.get("claims") or [],
        env_from_secret=str(spec["envFromSecret"]) if spec.get("envFromSecret") else None,
        mounts=_alpha_mounts(spec),
        spec=pod,
        labels=metadata.get("labels") or {},
        annotations=metadata.get("annotations") or {},
        shared_memory_size=shm.get("size") or None,
        shared_memory_disabled=bool(shm.get("disabled")),
        frontend_sidecar=cast(Mapping[str, object], sidecar) if isinstance(sidecar, Mapping) else None,
        named_sidecar=named_sidecar,
    )


def _alpha_mounts(spec: DcdSpec | ServiceSpec) -> list[ClaimMount]:
    return [
        ClaimMount(
            name=str(m.get("name") or ""),
            mount_path=m.get("mountPoint") or None,
            compilation_cache=bool(m.get("useAsCompilationCache")),
        )
        for m in spec.get("volumeMounts") or []
    ]


def _alpha_quantities(resources: Mapping[str, object]) -> list[Quantity]:
    out: list[Quantity] = []
    for side in SIDES:
        item = json_object(resources.get(side))
        at = f"resources.{side}"
        for key in ("cpu", "memory"):
            if item.get(key):
                out.append(Quantity(side, key, str(item[key]), f"{at}.{key}"))
        if item.get("gpu"):
            name = str(item.get("gpuType") or c.DEFAULT_GPU_RESOURCE)
            out.append(Quantity(side, name, str(item["gpu"]), f"{at}.gpu", gpu=True))
        for key, value in sorted(json_object(item.get("custom")).items()):
            out.append(Quantity(side, str(key), str(value), f"{at}.custom.{key}"))
    return out


# --- v1beta1 ---------------------------------------------------------------------------------------


def stored_user_pod(spec: StoredDcdSpec | StoredComponent) -> UserPod:
    """A v1beta1 component's pods, read from its `podTemplate` as stored (no copy)."""
    template = spec.get("podTemplate") or {}
    pod_spec = template.get("spec") or cast(k8s.PodSpec, {})
    containers = list(pod_spec.get("containers") or [])
    at = next((i for i, x in enumerate(containers) if x.get("name") == c.MAIN_CONTAINER_NAME), None)
    given = containers.pop(at) if at is not None else cast(k8s.Container, {})
    main = cast(k8s.Container, {k: v for k, v in given.items() if k not in _TAKEN_FROM_MAIN})
    if all(v in _EMPTY for v in main.values()):
        main = cast(k8s.Container, {})  # nothing of it is laid over the defaults
    pod = cast(k8s.PodSpec, {k: v for k, v in pod_spec.items() if k != "containers"})
    if containers:
        pod["containers"] = containers
    if all(v in _EMPTY_IN_POD for v in pod.values()):
        pod = cast(k8s.PodSpec, {})  # an empty field is laid over the generated pod once one is not
    resources = given.get("resources") or cast(k8s.ResourceRequirements, {})
    metadata = json_object(template.get("metadata"))
    size = spec.get("sharedMemorySize")
    return UserPod(
        main=main,
        env=given.get("env") or [],
        probes={p: given[p] for p in ("livenessProbe", "readinessProbe") if given.get(p) is not None},
        quantities=_stored_quantities(resources),
        claims=resources.get("claims") or [],
        env_from_secret=None,
        mounts=_stored_mounts(spec, given.get("volumeMounts") or []),
        spec=pod,
        labels=cast(Mapping[str, str], json_object(metadata.get("labels"))),
        annotations=cast(Mapping[str, str], json_object(metadata.get("annotations"))),
        shared_memory_size=size,
        shared_memory_disabled=size is not None and quantity_is_zero(size),
        named_sidecar=spec.get("frontendSidecar") or None,
    )


def _stored_quantities(resources: k8s.ResourceRequirements) -> list[Quantity]:
    """A ResourceList in v1alpha1's order: cpu, memory, the NVIDIA GPUs, then the rest by name."""
    out: list[Quantity] = []
    for side in SIDES:
        values = {str(k): str(v) for k, v in (resources.get(side) or {}).items()}
        at = f"resources.{side}"
        for key in ("cpu", "memory"):
            if values.get(key):
                out.append(Quantity(side, key, values[key], f"{at}.{key}"))
        gpu = values.get(c.DEFAULT_GPU_RESOURCE)
        if gpu:
            out.append(Quantity(side, c.DEFAULT_GPU_RESOURCE, gpu, f"{at}.gpu", gpu=True))
        for key in sorted(set(values) - {"cpu", "memory", c.DEFAULT_GPU_RESOURCE}):
            if values[key]:
                out.append(Quantity(side, key, values[key], f"{at}.custom.{key}"))
    return out


def _stored_mounts(
    spec: StoredDcdSpec | StoredComponent, main_mounts: Sequence[k8s.VolumeMount]
) -> list[ClaimMount]:
    """The compilation cache first, then the main container's mounts: one per name and path, with
    what the last of the main container's mounts there says of it (readOnly, subPath...)."""
    details = {(str(m.get("name") or ""), m.get("mountPath") or None): m for m in main_mounts}
    out: list[ClaimMount] = []
    cache = spec.get("compilationCache")
    if cache is not None:
        key = (str(cache.get("pvcName") or ""), cache.get("mountPath") or None)
        out.append(ClaimMount(*key, compilation_cache=True, details=details.get(key)))
    for (name, path), mount in details.items():
        if not any(m.name == name and m.mount_path == path for m in out):
            out.append(ClaimMount(name, path, details=mount))
    return out


def _as_v1beta1_lists(flat: list[ClaimMount]) -> list[ClaimMount]:
    """v1alpha1's flat mounts as v1beta1 holds them: one compilation cache, first, then each other
    name and path once, in order."""
    out = [m for m in flat if m.compilation_cache][:1]
    for m in flat:
        if not any(o.name == m.name and o.mount_path == m.mount_path for o in out):
            out.append(ClaimMount(m.name, m.mount_path))
    return out


# --- where v1alpha1's two places disagree -----------------------------------------------------------


def layered_apart(spec: DcdSpec) -> str | None:
    """Why a v1alpha1 component's pods cannot be read from its v1beta1 form (None: they can).

    v1alpha1 lays its flat fields over `extraPodSpec.mainContainer` by rules of its own; v1beta1 has
    one main container, which the conversion fills by other rules. The two give different pods:
    - where a field is written in both places: an env name, env sources;
    - where the main container gives resources (v1alpha1 lays them over the defaults as written;
      v1beta1 takes them as v1alpha1's flat ones: each quantity checked, in v1alpha1's order);
    - where the main container gives a liveness or readiness probe (v1alpha1 merges it into the
      default probe and puts a flat one over it; v1beta1 replaces the default with it);
    - where the main container mounts volumes (as they are in v1alpha1; in v1beta1 each mounts a
      PVC of its name unless the pod declares the volume, as v1alpha1's flat `volumeMounts` do), or
      the flat mounts are listed in an order or with repeats v1beta1 cannot hold;
    - where `extraPodSpec` has fields beside the main container and each is empty (laid over the
      pod in v1alpha1; a pod template holding nothing more is no pod spec to v1beta1);
    - for a `frontendSidecar` block (a container of its own in v1alpha1; the container v1beta1
      names is completed and shares the main container's mounts);
    - for a zero `sharedMemory.size` (written as the limit in v1alpha1, which the kubelet ignores;
      v1beta1 has no size then, so the default 8Gi).
    A graph first written in v1alpha1 this way keeps its pods by being read in v1alpha1."""
    main = (spec.get("extraPodSpec") or {}).get("mainContainer") or cast(k8s.Container, {})
    flat_env = {e.get("name") for e in spec.get("envs") or ()}
    if flat_env & {e.get("name") for e in main.get("env") or ()}:
        return "an env name in envs and in the main container"
    if spec.get("envFromSecret") and main.get("envFrom"):
        return "envFromSecret beside the main container's envFrom"
    if main.get("resources"):
        return "resources on the main container"
    for probe in ("livenessProbe", "readinessProbe"):
        if main.get(probe) is not None:
            return f"a {probe} on the main container"
    if main.get("volumeMounts"):
        return "volume mounts on the main container"
    beside = [v for k, v in (spec.get("extraPodSpec") or {}).items() if k != "mainContainer"]
    if beside and all(v in _EMPTY_IN_POD for v in beside):
        return "only empty fields beside the main container"
    flat = _alpha_mounts(spec)
    if flat != _as_v1beta1_lists(flat):
        return "volumeMounts v1beta1 lists otherwise (the cache first, each name and path once)"
    if isinstance(spec.get("frontendSidecar"), Mapping):
        return "a frontendSidecar block"
    shm = spec.get("sharedMemory") or {}
    if not shm.get("disabled") and shm.get("size") and quantity_is_zero(shm.get("size")):
        return "a zero sharedMemory.size"
    return None


def layered_components(manifest: Mapping[str, object]) -> list[tuple[str, str]]:
    """(component, reason) for each component of a v1alpha1 graph or DCD manifest that is
    `layered_apart`, a graph's `spec.envs` counted with each service's own (as its DCDs get them)."""
    spec = json_object(manifest.get("spec"))
    kind = manifest.get("kind")
    if kind == c.KIND_DGD:
        graph_env = cast(list[k8s.EnvVar], spec.get("envs") if isinstance(spec.get("envs"), list) else [])
        components = {
            str(name): cast(DcdSpec, {**service, "envs": merge_env(graph_env, service.get("envs") or [])})
            for name, service in json_object(spec.get("services")).items()
            if isinstance(service, Mapping)
        }
    elif kind == c.KIND_DCD:
        components = {str(json_object(manifest.get("metadata")).get("name")): cast(DcdSpec, spec)}
    else:
        return []
    return [(name, reason) for name, one in components.items() if (reason := layered_apart(one))]
