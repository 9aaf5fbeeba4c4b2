"""What a component's v1beta1 form says that its v1alpha1 spec has no field for. Pure.

Generation reads graphs and DCDs in their v1alpha1 form (inputs.py). The operator receives them as
v1beta1, the stored version, and converts each once as it arrives; what v1alpha1 cannot hold, that
conversion keeps in the object's reserved annotation (`nvidia.com/dgd-spec` on a graph,
`nvidia.com/dcd-spec` on a DCD) as a sparse v1beta1 spec, upstream's encoding (api/conversion/preserve.py).

Three of those facts change what is generated, so generation reads them back from there:

- a volume mount's `readOnly`, `subPath`, `subPathExpr`, `mountPropagation` and `recursiveReadOnly`
  (v1alpha1's flat `volumeMounts` hold a name and a path only). Without them a ConfigMap key mounted
  as a file with `subPath` becomes a directory at that path;
- `frontendSidecar`, which in v1beta1 names a container of the pod template for the operator to
  complete with the frontend's defaults (v1alpha1's field is a different thing, a container spec);
- `experimental.grove.forceScalingGroup`, which makes a single-node component a Grove scaling group.

A generated DCD carries its graph component's remainder in its own `nvidia.com/dcd-spec`
(`dcd_payload`), so the stored v1beta1 DCD holds these fields where upstream's does, and its
Deployment reads them back the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from dynamo_operator.api.conversion import preserve
from dynamo_operator.api.views import k8s
from dynamo_operator.api.views import v1beta1 as beta
from dynamo_operator.internal import consts as c

# The mount fields only the v1beta1 form carries (v1alpha1 has `name` and `mountPoint`).
MOUNT_DETAILS = ("readOnly", "subPath", "subPathExpr", "mountPropagation", "recursiveReadOnly")

MountKey = tuple[str, str]  # (volume name, mount path)


@dataclass(frozen=True)
class Remainder:
    """The v1beta1-only facts of one component that generation needs (empty: none)."""

    # The main container's mounts that carry a detail v1alpha1 drops, by (name, mountPath).
    mount_details: Mapping[MountKey, k8s.VolumeMount] = field(default_factory=dict)
    # The pod template container v1beta1's `frontendSidecar` names.
    frontend_sidecar: str | None = None
    # `experimental.grove.forceScalingGroup`: run as a Grove scaling group although single-node.
    force_scaling_group: bool = False
    # The sparse v1beta1 component it was read from, for a generated DCD to carry on.
    sparse: Mapping[str, Any] = field(default_factory=dict)

    def with_mount_details(self, mounts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`mounts` (name and mountPath each) with the details the v1beta1 form gives them."""
        if not self.mount_details:
            return mounts
        out = []
        for mount in mounts:
            detail = self.mount_details.get((str(mount.get("name")), str(mount.get("mountPath"))))
            if detail is None:
                out.append(mount)
                continue
            merged = dict(mount)
            for key in MOUNT_DETAILS:
                if key in detail:
                    merged[key] = detail[key]  # type: ignore[literal-required]
            out.append(merged)
        return out


NONE = Remainder()


def _of_component(component: Mapping[str, Any]) -> Remainder:
    view = cast(beta.DynamoComponentDeploymentSpec, component)
    details: dict[MountKey, k8s.VolumeMount] = {}
    template = view.get("podTemplate")
    containers = ((template or {}).get("spec") or {}).get("containers") or []
    for container in containers:
        if not isinstance(container, Mapping) or container.get("name") != c.MAIN_CONTAINER_NAME:
            continue
        for mount in container.get("volumeMounts") or []:
            if isinstance(mount, Mapping) and any(key in mount for key in MOUNT_DETAILS):
                details[(str(mount.get("name")), str(mount.get("mountPath")))] = mount
    sidecar = view.get("frontendSidecar")
    grove = (view.get("experimental") or {}).get("grove") or {}
    sparse = {k: v for k, v in component.items() if k != "name"}
    if not sparse:
        return NONE
    return Remainder(
        mount_details=details,
        frontend_sidecar=sidecar if isinstance(sidecar, str) and sidecar else None,
        force_scaling_group=isinstance(grove, Mapping) and grove.get("forceScalingGroup") is True,
        sparse=sparse,
    )


def _annotation(meta: Mapping[str, Any] | None, key: str) -> str:
    value = ((meta or {}).get("annotations") or {}).get(key)
    return value if isinstance(value, str) else ""


def of_graph(graph_meta: Mapping[str, Any] | None) -> dict[str, Remainder]:
    """The remainder of each of the graph's components that has one, by name (its
    `nvidia.com/dgd-spec` entries)."""
    spec = preserve.decode_spec(_annotation(graph_meta, preserve.DGD_SPEC), preserve.DGD_SPEC)
    components = (spec or {}).get("components")
    out: dict[str, Remainder] = {}
    for component in components if isinstance(components, list) else ():
        if isinstance(component, Mapping) and isinstance(component.get("name"), str):
            out[component["name"]] = _of_component(component)
    return out


def of_dcd(dcd_meta: Mapping[str, Any] | None) -> Remainder:
    """The remainder of a DCD read as v1alpha1 (its `nvidia.com/dcd-spec`)."""
    spec = preserve.decode_spec(_annotation(dcd_meta, preserve.DCD_SPEC), preserve.DCD_SPEC)
    return NONE if spec is None else _of_component(spec)


def dcd_payload(remainder: Remainder) -> str | None:
    """The `nvidia.com/dcd-spec` value that hands a generated DCD its graph component's remainder
    (None when there is nothing to hand on). Writing the DCD converts it to v1beta1, which applies the
    payload where it still agrees with the DCD's v1alpha1 fields (api/conversion/sparse.py)."""
    return preserve.encode_spec(remainder.sparse) if remainder.sparse else None
