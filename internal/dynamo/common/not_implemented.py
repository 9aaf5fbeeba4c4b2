"""Fields the API accepts but this operator does not implement, in one declarative table.

Upstream's schemas admit them (v1beta1, and v1alpha1 as upstream extended it), so a manifest using
them is stored; ignoring them would run something other than what the user asked for (a
checkpointed worker started cold, an inter-pod GPU memory service that a DCD create then refuses
half-way). A graph or DCD that uses one is refused whole, naming the field, before anything is
written.

Each entry is read in the stored v1alpha1 view of the object. A field v1alpha1 has a place for is
read there (the API server keeps it); one it has not (the CRD prunes it) survives only in the spec
payload the conversion webhook leaves in the reserved annotation (`nvidia.com/dgd-spec`,
`nvidia.com/dcd-spec`: sparse v1beta1 data), which is parsed with the size and depth bounds of
`api/conversion/preserve.py`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.conversion import preserve
from dynamo_operator.internal.dynamo.common.errors import FieldNotImplementedError
from dynamo_operator.internal.dynamo.common.inputs import AlphaComponentDeployment

Json = Mapping[str, Any]

# Both spellings: the v1alpha1 view says `interPod`, the v1beta1 payload `InterPod`.
_INTER_POD = frozenset({"interPod", "InterPod"})


class Scope(enum.Enum):
    """Where an entry's path starts: a service (a DGD's `spec.services.<name>`, a DCD's `spec`), or
    the graph's `spec` (no DCD has these fields)."""

    SERVICE = "service"
    GRAPH = "graph"


# The sub-field that puts a feature in use ("" for the feature's block itself), or None when unused.
Predicate = Callable[[Json], str | None]


@dataclass(frozen=True)
class NotImplementedField:
    """One field: `native` is its path in the v1alpha1 view, `payload` in the v1beta1 payload, both
    relative to `scope`; `reason` ends the condition message."""

    scope: Scope
    native: tuple[str, ...]
    payload: tuple[str, ...]
    in_use: Predicate
    reason: str


@dataclass(frozen=True)
class Use:
    """A not-implemented field in use: the JSON path of the field (v1alpha1 view) and why."""

    field: str
    reason: str


def _checkpoint_in_use(block: Json) -> str | None:
    # A disabled block with no identity and no reference asks for nothing.
    if block.get("enabled") is True:
        return "enabled"
    if block.get("checkpointRef"):
        return "checkpointRef"
    if block.get("identity"):
        return "identity"
    return None


def _inter_pod(block: Json) -> str | None:
    # In the v1alpha1 view a block is off with `enabled: false`; in the payload its presence is "on".
    if block.get("enabled", True) is not False and block.get("mode") in _INTER_POD:
        return "mode"
    return None


def _present(block: Json) -> str | None:
    return "" if block else None


def _extra_gms_clients(block: Json) -> str | None:
    # Further containers wired as GMS clients: the operator wires the engine only. Off as `_inter_pod`.
    if block.get("enabled", True) is not False and block.get("extraClientContainers"):
        return "extraClientContainers"
    return None


NOT_IMPLEMENTED: tuple[NotImplementedField, ...] = (
    NotImplementedField(
        Scope.SERVICE,
        ("checkpoint",),
        ("experimental", "checkpoint"),
        _checkpoint_in_use,
        "checkpoint/restore is not implemented by this operator",
    ),
    NotImplementedField(
        Scope.SERVICE,
        ("gpuMemoryService",),
        ("experimental", "gpuMemoryService"),
        _inter_pod,
        "the inter-pod GPU memory service is not implemented by this operator (intraPod is)",
    ),
    NotImplementedField(
        Scope.SERVICE,
        ("failover",),
        ("experimental", "failover"),
        _inter_pod,
        "inter-pod failover is not implemented by this operator (intraPod is)",
    ),
    NotImplementedField(
        Scope.SERVICE,
        ("gpuMemoryService",),
        ("experimental", "gpuMemoryService"),
        _extra_gms_clients,
        "GPU memory service clients beyond the engine are not implemented by this operator",
    ),
    NotImplementedField(
        Scope.GRAPH,
        ("experimental", "kvTransferPolicy"),
        ("experimental", "kvTransferPolicy"),
        _present,
        "KV-transfer placement policy is not implemented by this operator",
    ),
)


def _at(root: object, path: Sequence[str]) -> Json | None:
    node = root
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node if isinstance(node, Mapping) else None


def _use(entry: NotImplementedField, prefix: str, native: object, payload: object) -> Use | None:
    """The entry's use under `prefix`, read natively first, then from the payload."""
    for root, path in ((native, entry.native), (payload, entry.payload)):
        block = _at(root, path)
        sub = entry.in_use(block) if block is not None else None
        if sub is not None:
            field = ".".join(p for p in (prefix, *entry.native, sub) if p)
            return Use(field, entry.reason)
    return None


def _payload(obj: Json, key: str) -> Json:
    """The sparse v1beta1 spec in the reserved annotation `key`; empty when absent or damaged."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(key) if isinstance(annotations, Mapping) else None
    return (preserve.decode_spec(raw, key) if isinstance(raw, str) else None) or {}


def _payload_components(payload: Json) -> dict[str, Json]:
    """The payload's components by name (a v1beta1 component's name is its v1alpha1 service key)."""
    components = payload.get("components")
    if not isinstance(components, list):
        return {}
    return {
        str(c["name"]): c for c in components if isinstance(c, Mapping) and isinstance(c.get("name"), str)
    }


def graph_uses(dgd: Json) -> list[Use]:
    """Every not-implemented field a DGD (v1alpha1 view) uses, in table then service order."""
    spec = dgd.get("spec") or {}
    services = spec.get("services") if isinstance(spec, Mapping) else None
    services = services if isinstance(services, Mapping) else {}
    payload = _payload(dgd, preserve.DGD_SPEC)
    in_payload = _payload_components(payload)
    out: list[Use] = []
    for entry in NOT_IMPLEMENTED:
        if entry.scope is Scope.GRAPH:
            use = _use(entry, "spec", spec, payload)
            out += [use] if use else []
            continue
        for name in sorted(set(services) | set(in_payload)):
            use = _use(entry, f"spec.services.{name}", services.get(name), in_payload.get(name))
            out += [use] if use else []
    return out


def component_uses(dcd: Json) -> list[Use]:
    """Every not-implemented field a DCD (v1alpha1 view) uses."""
    spec = dcd.get("spec") or {}
    payload = _payload(dcd, preserve.DCD_SPEC)
    out: list[Use] = []
    for entry in NOT_IMPLEMENTED:
        if entry.scope is Scope.SERVICE:
            use = _use(entry, "spec", spec, payload)
            out += [use] if use else []
    return out


def _refuse(uses: Sequence[Use]) -> None:
    if uses:
        first = uses[0]
        more = f" (and {len(uses) - 1} more not-implemented field(s))" if len(uses) > 1 else ""
        raise FieldNotImplementedError(first.field, first.reason + more)


def check_graph(dgd: Json) -> None:
    """Raise FieldNotImplementedError naming the first not-implemented field the DGD uses."""
    _refuse(graph_uses(dgd))


def check_component(dcd: AlphaComponentDeployment) -> None:
    """Raise FieldNotImplementedError naming the first not-implemented field the DCD uses (read in
    its v1alpha1 form, as every entry's path is: component/lowering.py)."""
    _refuse(component_uses(dcd))
