"""DynamoComponentDeployment between v1alpha1 and v1beta1.

The spec is one component (`shared_spec`) plus `backendFramework`. v1beta1 wants a `name`: a v1alpha1
DCD without `serviceName` takes its object name, and the difference records that it had none.
What one version cannot hold travels in `nvidia.com/dcd-spec` and `nvidia.com/dcd-status`, as in
`graph.py`; the status's `podSelector` has no v1beta1 field and is kept in the status payload.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

from . import preserve, shared_spec, sparse

Json = dict[str, Any]


def _spec_to_hub(name: str) -> sparse.Convert:
    def convert(alpha: Json) -> Json:
        hub = shared_spec.to_hub(alpha)
        hub.pop("providerOverride", None)  # a DCD has none in v1beta1; kept as a difference
        if "name" not in hub and name:
            hub["name"] = name
        if "backendFramework" in alpha:
            hub["backendFramework"] = alpha["backendFramework"]
        return hub

    return convert


def _spec_from_hub(hub: Json) -> Json:
    alpha = shared_spec.from_hub(hub)
    if "backendFramework" in hub:
        alpha["backendFramework"] = hub["backendFramework"]
    return alpha


def _name(obj: Json) -> str:
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else ""


def to_v1beta1(obj: Json) -> Json:
    """A v1alpha1 DynamoComponentDeployment as v1beta1 (converted in place: only `convert` calls this)."""
    out = obj  # convert() hands over a fresh copy, or an object the caller gave up
    metadata = out.setdefault("metadata", {})
    taken = preserve.take(metadata, (preserve.DCD_SPEC, preserve.DCD_STATUS))
    if not metadata:
        del out["metadata"]
    hub_saved = preserve.decode_spec(taken.get(preserve.DCD_SPEC, ""), preserve.DCD_SPEC)
    hub_origin = hub_saved is not None
    spec = out.get("spec")
    if isinstance(spec, dict):
        hub, save = sparse.carry_over(
            spec,
            _spec_to_hub(_name(obj)),
            _spec_from_hub,
            target_schema="beta.dcd.spec",
            source_schema="alpha.dcd.spec",
            saved=hub_saved,
        )
        out["spec"] = hub
        if save or (not hub_origin and "podTemplate" in hub):
            records = []
            if "serviceName" in save and save["serviceName"] is None:
                # No serviceName in v1alpha1: upstream records that as a nil rawJSON entry.
                del save["serviceName"]
                records.append(preserve.RawRecord("serviceName", nil=True))
            payload = preserve.encode_spec(save, records)
            preserve.put(out.setdefault("metadata", {}), preserve.DCD_SPEC, payload)
    status = out.get("status")
    if isinstance(status, dict):
        hub_status = copy_tree(status)
        status_save: Json = {}
        if "podSelector" in hub_status:
            status_save["podSelector"] = hub_status.pop("podSelector")
        service = hub_status.pop("service", None)
        if isinstance(service, dict):
            hub_status["component"] = _replica_to_hub(service)
            if _name_needs_saving(service):
                status_save["service"] = {
                    k: copy_tree(service[k]) for k in ("componentName", "componentNames") if k in service
                }
        out["status"] = hub_status
        if status_save:
            preserve.put(
                out.setdefault("metadata", {}), preserve.DCD_STATUS, preserve.encode_status(status_save)
            )
    return out


def to_v1alpha1(obj: Json) -> Json:
    """A v1beta1 DynamoComponentDeployment as v1alpha1 (converted in place: only `convert` calls this)."""
    out = obj  # convert() hands over a fresh copy, or an object the caller gave up
    metadata = out.setdefault("metadata", {})
    taken = preserve.take(metadata, (preserve.DCD_SPEC, preserve.DCD_STATUS))
    if not metadata:
        del out["metadata"]
    spoke_saved = preserve.decode_spec(taken.get(preserve.DCD_SPEC, ""), preserve.DCD_SPEC)
    spoke_origin = bool(taken)
    spec = out.get("spec")
    if isinstance(spec, dict):
        _forget_missing_service_name(spoke_saved, spec, _name(obj))
        shared_spec.read_origin_splits(spoke_saved)
        alpha, save = sparse.carry_over(
            spec,
            _spec_from_hub,
            _spec_to_hub(_name(obj)),
            target_schema="alpha.dcd.spec",
            source_schema="beta.dcd.spec",
            saved=spoke_saved,
        )
        shared_spec.drop_generated_frontend_sidecar(alpha)
        out["spec"] = alpha
        # Upstream names a v1beta1-made DCD with a podTemplate in the payload even with nothing to keep.
        if save or (not spoke_origin and "podTemplate" in spec):
            if "name" in spec:
                save = {"name": spec["name"], **save}
            preserve.put(out.setdefault("metadata", {}), preserve.DCD_SPEC, preserve.encode_spec(save))
    status = out.get("status")
    if isinstance(status, dict):
        alpha_status = copy_tree(status)
        kept = preserve.decode_status(taken.get(preserve.DCD_STATUS, "")) or {}
        component = alpha_status.pop("component", None)
        if isinstance(component, dict):
            alpha_status["service"] = _replica_from_hub(component)
            _restore_names(alpha_status["service"], kept.get("service"))
        if isinstance(kept.get("podSelector"), dict) and "podSelector" not in alpha_status:
            alpha_status["podSelector"] = copy_tree(kept["podSelector"])
        out["status"] = alpha_status
    return out


def _forget_missing_service_name(saved: Json | None, hub_spec: Json, object_name: str) -> None:
    """A recorded "no serviceName" holds only while `name` is still the object name it was filled
    with. Upstream's generator records it for every DCD it makes from a graph component (which has
    no serviceName) and then names the DCD after the component: the component name is then the
    v1alpha1 serviceName, and the rest of the record still applies."""
    missing = saved is not None and "serviceName" in saved and saved["serviceName"] is None
    if missing and saved is not None and hub_spec.get("name") != object_name:
        del saved["serviceName"]


def _replica_to_hub(alpha: Json) -> Json:
    hub = copy_tree(alpha)
    name = hub.pop("componentName", None)
    if not hub.get("componentNames") and name:
        hub["componentNames"] = [name]
    return hub


def _replica_from_hub(hub: Json) -> Json:
    alpha = copy_tree(hub)
    if alpha.get("componentNames"):
        alpha["componentName"] = alpha["componentNames"][-1]
    return alpha


def _name_needs_saving(alpha: Json) -> bool:
    names = alpha.get("componentNames")
    if not names:
        return "componentName" in alpha
    return bool(names[-1] != alpha.get("componentName"))


def _restore_names(current: Json, entry: Any) -> None:
    if not isinstance(entry, dict):
        return
    expected = _replica_to_hub(entry).get("componentNames")
    if current.get("componentNames") == expected or (
        not current.get("componentNames") and not entry.get("componentNames")
    ):
        for key in ("componentName", "componentNames"):
            current.pop(key, None)
            if key in entry:
                current[key] = copy_tree(entry[key])
