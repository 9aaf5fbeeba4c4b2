"""DynamoGraphDeployment between v1alpha1 (`spec.services` map) and v1beta1 (`spec.components[]`).

Round trips give back what they started from: whatever the target version cannot hold travels in
`nvidia.com/dgd-spec` (a sparse spec of the source version, upstream's envelope) and
`nvidia.com/dgd-status` (upstream's sparse status). On a v1alpha1 object the spec payload is v1beta1
data: `components` entries keyed by `name` (listed in order when the v1beta1 order is not the sorted
one, and, as upstream does, a bare `{"name": ...}` for each component that had a podTemplate). On a
v1beta1 object it is v1alpha1 data: top-level fields such as `pvcs` and `services` entries by name.

Differences are sparse per component and per spec top; a component edited in the other version
keeps its live fields and drops the stale difference (see `sparse.py`).
"""

from __future__ import annotations

import itertools
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

from . import ConversionError, preserve, shared_spec, sparse

Json = dict[str, Any]

# Top-of-spec fields both versions hold under the same name, and the one renamed.
_TOP_SAME = ("annotations", "labels", "priorityClassName", "backendFramework", "providerOverride", "restart")


# --- spec tops ---------------------------------------------------------------------------------


def _top_to_hub(alpha: Json) -> Json:
    hub: Json = {k: copy_tree(alpha[k]) for k in _TOP_SAME if k in alpha}
    if "envs" in alpha:
        hub["env"] = copy_tree(alpha["envs"])
    topology = alpha.get("topologyConstraint")
    if isinstance(topology, dict):
        hub["topologyConstraint"] = {
            **({"clusterTopologyName": topology["topologyProfile"]} if "topologyProfile" in topology else {}),
            **({"packDomain": topology["packDomain"]} if "packDomain" in topology else {}),
        }
    if isinstance(alpha.get("experimental"), dict):
        hub["experimental"] = copy_tree(alpha["experimental"])
    return hub


def _top_from_hub(hub: Json) -> Json:
    alpha: Json = {k: copy_tree(hub[k]) for k in _TOP_SAME if k in hub}
    if "env" in hub:
        alpha["envs"] = copy_tree(hub["env"])
    topology = hub.get("topologyConstraint")
    if isinstance(topology, dict):
        alpha["topologyConstraint"] = {
            **(
                {"topologyProfile": topology["clusterTopologyName"]}
                if "clusterTopologyName" in topology
                else {}
            ),
            **({"packDomain": topology["packDomain"]} if "packDomain" in topology else {}),
        }
    if isinstance(hub.get("experimental"), dict):
        alpha["experimental"] = copy_tree(hub["experimental"])
    return alpha


def _without(spec: Json, key: str) -> Json:
    return {k: v for k, v in spec.items() if k != key}


# --- components ----------------------------------------------------------------------------------


def _component_to_hub(name: str) -> sparse.Convert:
    def convert(alpha: Json) -> Json:
        hub = shared_spec.to_hub(alpha)
        hub["name"] = name  # the map key is the name; a `serviceName` that differs travels as a difference
        return hub

    return convert


def _component_from_hub(hub: Json) -> Json:
    alpha = shared_spec.from_hub(hub)
    alpha.pop("serviceName", None)  # the map key holds it
    return alpha


def _sorted(names: list[str]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(names))


# --- v1alpha1 -> v1beta1 ------------------------------------------------------------------------


def to_v1beta1(obj: Json) -> Json:
    """A v1alpha1 DynamoGraphDeployment as v1beta1 (converted in place: only `convert` calls this)."""
    out = obj  # convert() hands over a fresh copy, or an object the caller gave up
    metadata = out.setdefault("metadata", {})
    taken = preserve.take(metadata, (preserve.DGD_SPEC, preserve.DGD_STATUS))
    if not metadata:
        del out["metadata"]
    hub_saved = preserve.decode_spec(taken.get(preserve.DGD_SPEC, ""), preserve.DGD_SPEC)
    hub_origin = hub_saved is not None
    hub_saved = hub_saved or {}
    saved_components = {
        c["name"]: _without(c, "name")
        for c in hub_saved.get("components") or ()
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    }

    spec = out.get("spec")
    spoke_save: Json = {}
    if isinstance(spec, dict):
        services = spec.get("services")
        top_saved = {k: v for k, v in hub_saved.items() if k != "components"}
        hub_spec, top_save = sparse.carry_over(
            _without(spec, "services"),
            _top_to_hub,
            _top_from_hub,
            target_schema="beta.dgd.spec",
            source_schema="alpha.dgd.spec",
            saved=top_saved,
        )
        spoke_save.update(_without(top_save, "services"))
        if isinstance(services, dict) and services:
            components, service_saves = _services_to_hub(services, saved_components, hub_saved)
            hub_spec["components"] = components
            if service_saves:
                spoke_save["services"] = service_saves
        elif services is not None:
            spoke_save["services"] = copy_tree(services)
        out["spec"] = hub_spec
    # A v1alpha1-made object that gains a podTemplate carries a payload even with nothing to keep, so a
    # later conversion back does not take it for a v1beta1-made one (upstream does the same).
    if spoke_save or (not hub_origin and _has_pod_template(out.get("spec"))):
        preserve.put(out.setdefault("metadata", {}), preserve.DGD_SPEC, preserve.encode_spec(spoke_save))

    if isinstance(out.get("status"), dict):
        status, status_save = _status_to_hub(
            out["status"], preserve.decode_status(taken.get(preserve.DGD_STATUS, ""))
        )
        out["status"] = status
        if status_save:
            preserve.put(
                out.setdefault("metadata", {}), preserve.DGD_STATUS, preserve.encode_status(status_save)
            )
    return out


def _has_pod_template(spec: Any) -> bool:
    return isinstance(spec, dict) and any("podTemplate" in c for c in spec.get("components") or ())


def _services_to_hub(services: Json, saved: dict[str, Json], hub_saved: Json) -> tuple[list[Json], Json]:
    names = sorted(services)
    listed = [c.get("name") for c in hub_saved.get("components") or () if isinstance(c, dict)]
    if not _sorted([n for n in listed if isinstance(n, str)]):
        ordered = [n for n in listed if isinstance(n, str) and n in services]
        names = list(dict.fromkeys([*ordered, *names]))
    components = []
    saves: Json = {}
    for name in names:
        alpha = services[name]
        if not isinstance(alpha, dict):
            raise ConversionError(f"spec.services[{name!r}] is not an object")
        hub, save = sparse.carry_over(
            alpha,
            _component_to_hub(name),
            _component_from_hub,
            target_schema="beta.dgd.component",
            source_schema="alpha.dgd.service",
            saved=saved.get(name),
        )
        hub["name"] = name
        components.append(hub)
        if save:
            saves[name] = save
    return components, saves


# --- v1beta1 -> v1alpha1 ------------------------------------------------------------------------


def to_v1alpha1(obj: Json) -> Json:
    """A v1beta1 DynamoGraphDeployment as v1alpha1 (converted in place: only `convert` calls this)."""
    out = obj  # convert() hands over a fresh copy, or an object the caller gave up
    metadata = out.setdefault("metadata", {})
    taken = preserve.take(metadata, (preserve.DGD_SPEC, preserve.DGD_STATUS))
    if not metadata:
        del out["metadata"]
    spoke_saved = preserve.decode_spec(taken.get(preserve.DGD_SPEC, ""), preserve.DGD_SPEC)
    spoke_origin = preserve.DGD_SPEC in taken or preserve.DGD_STATUS in taken
    spoke_saved = spoke_saved or {}
    services_saved = spoke_saved.get("services")
    saved_services: Json = services_saved if isinstance(services_saved, dict) else {}

    spec = out.get("spec")
    hub_save: Json = {}
    if isinstance(spec, dict):
        components = spec.get("components")
        top_saved = {k: v for k, v in spoke_saved.items() if k != "services"}
        alpha_spec, top_save = sparse.carry_over(
            _without(spec, "components"),
            _top_from_hub,
            _top_to_hub,
            target_schema="alpha.dgd.spec",
            source_schema="beta.dgd.spec",
            saved=top_saved,
        )
        hub_save.update(_without(top_save, "components"))
        if isinstance(components, list) and components:
            services, component_saves = _components_to_alpha(components, saved_services, spoke_origin)
            alpha_spec["services"] = services
            if component_saves:
                hub_save["components"] = component_saves
        elif components is not None:
            hub_save["components"] = copy_tree(components)
        out["spec"] = alpha_spec
    if hub_save:
        preserve.put(out.setdefault("metadata", {}), preserve.DGD_SPEC, preserve.encode_spec(hub_save))

    if isinstance(out.get("status"), dict):
        out["status"] = _status_from_hub(
            out["status"], preserve.decode_status(taken.get(preserve.DGD_STATUS, ""))
        )
    return out


def _components_to_alpha(components: list[Any], saved: Json, spoke_origin: bool) -> tuple[Json, list[Json]]:
    services: Json = {}
    entries: list[Json] = []
    names = [c.get("name") for c in components if isinstance(c, dict)]
    keep_order = not _sorted([n for n in names if isinstance(n, str)])
    for hub in components:
        if not isinstance(hub, dict) or not isinstance(hub.get("name"), str):
            raise ConversionError("every spec.components entry needs a name")
        name = hub["name"]
        if name in services:
            raise ConversionError(f"duplicate component name {name!r} in spec.components")
        previous = saved.get(name) if isinstance(saved.get(name), dict) else None
        shared_spec.read_origin_splits(previous)
        alpha, save = sparse.carry_over(
            hub,
            _component_from_hub,
            _component_to_hub(name),
            target_schema="alpha.dgd.service",
            source_schema="beta.dgd.component",
            saved=previous,
        )
        shared_spec.drop_generated_frontend_sidecar(alpha)
        services[name] = alpha
        save.pop("name", None)
        # Upstream lists a v1beta1-made component that has a podTemplate even with nothing to keep.
        if save or keep_order or (not spoke_origin and "podTemplate" in hub):
            entries.append({"name": name, **save})
    return services, entries


# --- status ------------------------------------------------------------------------------------


def _replica_status_to_hub(alpha: Json) -> Json:
    hub = copy_tree(alpha)
    name = hub.pop("componentName", None)
    if not hub.get("componentNames") and name:
        hub["componentNames"] = [name]
    return hub


def _replica_status_from_hub(hub: Json) -> Json:
    alpha = copy_tree(hub)
    names = alpha.get("componentNames")
    if names:
        alpha["componentName"] = names[-1]
    return alpha


def _name_needs_saving(alpha: Json) -> bool:
    """Whether `componentName` says more than the last of `componentNames` (upstream's rule)."""
    names = alpha.get("componentNames")
    if not names:
        return "componentName" in alpha
    return bool(names[-1] != alpha.get("componentName"))


def _status_to_hub(status: Json, _saved: Json | None) -> tuple[Json, Json]:
    hub = copy_tree(status)
    services = hub.pop("services", None)
    rolling = hub.get("rollingUpdate")
    if isinstance(rolling, dict) and "updatedServices" in rolling:
        rolling["updatedComponents"] = rolling.pop("updatedServices")
    save: Json = {}
    if isinstance(services, dict):
        hub["components"] = {k: _replica_status_to_hub(v) for k, v in services.items() if isinstance(v, dict)}
        kept = {
            k: {key: copy_tree(v[key]) for key in ("componentName", "componentNames") if key in v}
            for k, v in services.items()
            if isinstance(v, dict) and _name_needs_saving(v)
        }
        if kept:
            save["services"] = kept
    return hub, save


def _status_from_hub(status: Json, saved: Json | None) -> Json:
    alpha = copy_tree(status)
    components = alpha.pop("components", None)
    rolling = alpha.get("rollingUpdate")
    if isinstance(rolling, dict) and "updatedComponents" in rolling:
        rolling["updatedServices"] = rolling.pop("updatedComponents")
    if isinstance(components, dict):
        alpha["services"] = {
            k: _replica_status_from_hub(v) for k, v in components.items() if isinstance(v, dict)
        }
        kept = (saved or {}).get("services")
        if isinstance(kept, dict):
            for name, entry in kept.items():
                current = alpha["services"].get(name)
                if not isinstance(current, dict) or not isinstance(entry, dict):
                    continue
                expected = _replica_status_to_hub(entry).get("componentNames")
                if current.get("componentNames") == expected or (
                    not current.get("componentNames") and not entry.get("componentNames")
                ):
                    for key in ("componentName", "componentNames"):
                        current.pop(key, None)
                        if key in entry:
                            current[key] = copy_tree(entry[key])
    return alpha
