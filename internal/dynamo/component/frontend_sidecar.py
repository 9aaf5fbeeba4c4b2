"""`frontendSidecar`: a frontend container added to a worker's pods (Gateway API Inference Extension
setups route to each worker pod's own frontend).

The sidecar is the container a frontend service would get (command, args, port, probes, Dynamo env of
the parent graph), renamed `sidecar-frontend`, with the image and the overrides the field gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import ServiceSpec
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.pod.defaults import component_defaults
from dynamo_operator.internal.dynamo.pod.merge import env, merge_env, override
from dynamo_operator.internal.jsontree import copy_tree

CONTAINER_NAME = "sidecar-frontend"


def frontend_sidecar_spec(spec: ServiceSpec) -> Mapping[str, Any] | None:
    """The component's `frontendSidecar` block, or None when it has none."""
    sidecar = spec.get("frontendSidecar")
    return sidecar if isinstance(sidecar, Mapping) else None


def check_container_names(spec: ServiceSpec, field: str) -> None:
    """With a sidecar, no user container may be named like it (upstream's webhook rule; a CEL scan of
    the unbounded container list exceeds the cost budget, so it is checked here)."""
    if frontend_sidecar_spec(spec) is None:
        return
    for container in (spec.get("extraPodSpec") or {}).get("containers") or []:
        if container.get("name") == CONTAINER_NAME:
            raise GenerationError(
                f"{field}extraPodSpec.containers[name={CONTAINER_NAME}]",
                f"frontendSidecar generates the container {CONTAINER_NAME!r}; rename this one",
            )


def check_named_sidecar(user_containers: Sequence[Mapping[str, Any]], name: str | None, field: str) -> None:
    """v1beta1's `frontendSidecar` names a container of the pod template (`user_containers`, those
    beside `main`) that has an image (the schema cannot follow a name into the container list;
    refused here before anything is written)."""
    if name is None:
        return
    containers = [c for c in user_containers if c.get("name") == name]
    if not containers:
        raise GenerationError(
            f"{field}frontendSidecar", f"names the container {name!r}, which the pod template does not have"
        )
    if not containers[0].get("image"):
        raise GenerationError(f"{field}frontendSidecar", f"the container {name!r} has no image")


def build_frontend_sidecar(
    sidecar: Mapping[str, Any],
    *,
    component_env: Sequence[Mapping[str, Any]],
    dyn_ns: str,
    infrastructure_env: Mapping[str, str],
) -> Obj:
    """The `sidecar-frontend` container.

    `component_env` is what the component layer gives a frontend of this graph (Dynamo namespace,
    parent graph, pod identity, discovery); the frontend defaults go over it, the user's `envs` over
    those, and the infrastructure env (NATS, etcd, ...) stays underneath everything.
    """
    defaults = component_defaults(c.COMPONENT_FRONTEND, dyn_ns=dyn_ns, dgd_name="", namespace="")
    container: Obj = {"name": CONTAINER_NAME, "image": str(sidecar["image"])}
    container["command"] = list(defaults.command)
    container["args"] = list(sidecar.get("args") or defaults.args)
    container["ports"] = copy_tree(defaults.ports)
    container.update(copy_tree(defaults.probes))
    if sidecar.get("envFromSecret"):
        container["envFrom"] = [{"secretRef": {"name": str(sidecar["envFromSecret"])}}]
    env_list = merge_env(component_env, defaults.env)
    env_list = merge_env(env_list, sidecar.get("envs") or [])
    infra = [env(k, v) for k, v in sorted(infrastructure_env.items()) if v]
    container["env"] = merge_env(infra, env_list)
    return container


def complete_named_sidecar(
    user: Mapping[str, Any],
    *,
    component_env: Sequence[Mapping[str, Any]],
    dyn_ns: str,
    infrastructure_env: Mapping[str, str],
    parent_mounts: Sequence[Mapping[str, Any]],
) -> Obj:
    """v1beta1's form: `frontendSidecar` names a container the user wrote in the pod template, and
    the operator completes it. The frontend container (`build_frontend_sidecar`) is the base, the
    user's container goes over it (its env unioned by name, user wins; its other lists replace), and
    the main container's mounts it lacks by name are added, so the frontend sees the same model
    files as the engine beside it. `check_named_sidecar` has seen it has an image."""
    name = str(user.get("name") or "")
    base = build_frontend_sidecar(
        {"image": user["image"], "envs": list(user.get("env") or [])},
        component_env=component_env,
        dyn_ns=dyn_ns,
        infrastructure_env=infrastructure_env,
    )
    container = override(base, {k: v for k, v in user.items() if k != "env"})
    container["name"] = name
    mounts = [dict(m) for m in container.get("volumeMounts") or []]
    names = {m.get("name") for m in mounts}
    for mount in parent_mounts:
        if mount.get("name") not in names:
            mounts.append(dict(mount))
            names.add(mount.get("name"))
    if mounts:
        container["volumeMounts"] = mounts
    return container
