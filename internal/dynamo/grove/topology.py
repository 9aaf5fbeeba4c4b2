"""Topology-aware placement on the Grove pathway: where a graph's packing requests land in its
PodCliqueSet. Pure.

A graph asks for placement in one of two ways, never both (upstream 2a6da14c refuses the mix):

- **typed**: the graph's `topologyConstraint` (a ClusterTopologyBinding by name and an optional
  default pack domain) and a component's `topologyConstraint.packDomain`. The graph's lands on the
  set's template; a component's on its PodClique, or on its PodCliqueScalingGroup when it runs as
  one (multinode, forced), never on the cliques inside the group. A component names the topology
  itself only when the graph packs nothing: otherwise Grove passes the set's name down.
- **provider-native**: `providerOverride` fragments written in Grove's own field names, which may
  set nothing but a `topologyConstraint` (opaque below that, so fields newer than this operator
  survive). The graph's goes to the set's template, a component's to its clique or scaling group
  (its `target` says which and must agree with the component's shape), and a multinode component's
  `multinode.leader` / `multinode.worker` fragments to the leader's and workers' cliques. Each
  replaces whatever constraint was there.

A set made against Grove before v0.1.0-alpha.9 holds constraints in Grove's old `{packDomain}`
shape, which Grove lets move to the current one only in two updates (`repair_legacy_constraints`,
given the live set's template).

What upstream's admission webhooks check (an unknown target, a fragment writing other fields, a
role fragment on a single-node component, a component constraint with no graph constraint) is
checked here instead, since this operator has no validating webhook: the graph is refused whole,
naming the field (GenerationError), before anything is written.

Where the fields are read: the operator's v1alpha1 view of a graph holds all of them natively
(`topologyConstraint.topologyProfile` is v1alpha1's name for `clusterTopologyName`). A graph stored
through a v1alpha1 schema that prunes them keeps them in the conversion's spec payload
(`nvidia.com/dgd-spec`, sparse v1beta1 data, parsed within api/conversion/preserve.py's bounds),
which is read when the native field is absent.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from dynamo_operator.api.conversion import preserve
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import Graph
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.jsontree import copy_tree

TARGET_POD_CLIQUE_SET = "PodCliqueSet"
TARGET_CLIQUE = "PodCliqueTemplateSpec"
TARGET_SCALING_GROUP = "PodCliqueScalingGroupConfig"

# A fragment is user data copied into the PodCliqueSet: its nesting is bounded here (the API server
# bounds its size), so a hostile value cannot exhaust the copy's recursion.
MAX_FRAGMENT_DEPTH = 32


class Scope(enum.Enum):
    """Where in the graph a fragment is written."""

    GRAPH = "graph"
    COMPONENT = "component"
    LEADER = "multinode.leader"
    WORKER = "multinode.worker"


@dataclass(frozen=True, slots=True)
class Destination:
    """Where one service lives in the set: its clique (single node), or its scaling group and,
    when multinode, the leader's and workers' cliques."""

    service: str
    clique: str | None
    scaling_group: str | None
    leader: str | None = None
    worker: str | None = None

    @property
    def multinode(self) -> bool:
        return self.leader is not None


@dataclass(frozen=True, slots=True)
class Override:
    """One `providerOverride` as written (`target` may be empty: upstream's admission fills it in)."""

    scope: Scope
    service: str | None
    field: str
    api_version: str
    target: str
    value: Any


@dataclass(frozen=True, slots=True)
class Placement:
    """A graph's placement requests, read once."""

    graph_constraint: bool  # the graph has a `topologyConstraint`
    topology_name: str
    pack_domain: str
    component_domains: Mapping[str, str]  # service -> packDomain
    overrides: tuple[Override, ...]

    @property
    def typed(self) -> bool:
        return self.graph_constraint or bool(self.component_domains)

    @property
    def any(self) -> bool:
        """The graph asks for topology placement at all (typed or provider-native)."""
        return self.typed or bool(self.overrides)


# --- reading --------------------------------------------------------------------------------------


def _payload(dgd: Obj) -> Obj:
    annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    raw = annotations.get(preserve.DGD_SPEC)
    payload = preserve.decode_spec(raw, preserve.DGD_SPEC) if isinstance(raw, str) else None
    return payload if isinstance(payload, dict) else {}


def _payload_components(payload: Obj) -> dict[str, Obj]:
    components = payload.get("components")
    return {
        str(comp["name"]): comp
        for comp in (components if isinstance(components, list) else ())
        if isinstance(comp, dict) and isinstance(comp.get("name"), str)
    }


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def _at(node: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _override(node: Any, scope: Scope, service: str | None, field: str) -> Override | None:
    if node is None:
        return None
    if not isinstance(node, Mapping):
        raise GenerationError(field, "must be an object with apiVersion, target and value")
    return Override(
        scope=scope,
        service=service,
        field=field,
        api_version=str(node.get("apiVersion") or ""),
        target=str(node.get("target") or ""),
        value=node.get("value"),
    )


def read_placement(dgd: Graph) -> Placement:
    """The graph's placement requests from the operator's view (native fields first, the spec
    payload for what the view lacks). Raises GenerationError for a field of the wrong shape."""
    # Read as plain JSON: a field may come from the view or from the payload of the v1beta1 spec.
    obj: Obj = dict(dgd)
    spec = obj.get("spec") or {}
    payload = _payload(obj)
    from_payload = _payload_components(payload)

    graph_tc = _dict(spec.get("topologyConstraint"))
    name_key = "topologyProfile"
    if graph_tc is None:
        graph_tc, name_key = _dict(payload.get("topologyConstraint")), "clusterTopologyName"

    overrides: list[Override] = []
    root = spec.get("providerOverride", payload.get("providerOverride"))
    if (found := _override(root, Scope.GRAPH, None, "spec.providerOverride")) is not None:
        overrides.append(found)

    domains: dict[str, str] = {}
    services = spec.get("services") or {}
    for service in sorted(services) if isinstance(services, Mapping) else ():
        native = services.get(service) or {}
        saved = from_payload.get(service, {})
        base = f"spec.services.{service}"

        def pick(*path: str, native: Any = native, saved: Obj = saved) -> Any:
            value = _at(native, *path)
            return _at(saved, *path) if value is None else value

        domain = pick("topologyConstraint", "packDomain")
        if domain:
            domains[service] = str(domain)
        for scope, path in (
            (Scope.COMPONENT, ("providerOverride",)),
            (Scope.LEADER, ("multinode", "leader", "providerOverride")),
            (Scope.WORKER, ("multinode", "worker", "providerOverride")),
        ):
            field = ".".join((base, *path))
            if (found := _override(pick(*path), scope, service, field)) is not None:
                overrides.append(found)

    return Placement(
        graph_constraint=graph_tc is not None,
        topology_name=str((graph_tc or {}).get(name_key) or ""),
        pack_domain=str((graph_tc or {}).get("packDomain") or ""),
        component_domains=domains,
        overrides=tuple(overrides),
    )


# --- checking -------------------------------------------------------------------------------------


def _expected_target(override: Override, dest: Destination | None) -> str:
    if override.scope is Scope.GRAPH:
        return TARGET_POD_CLIQUE_SET
    if dest is None:
        raise GenerationError(override.field, f"names service {override.service!r}, which the graph has not")
    if override.scope is Scope.COMPONENT:
        return TARGET_SCALING_GROUP if dest.scaling_group is not None else TARGET_CLIQUE
    if not dest.multinode:
        raise GenerationError(
            override.field,
            f"is for a multinode component's {override.scope.value.split('.')[1]} role;"
            f" service {override.service!r} runs on one node (set multinode.nodeCount above 1)",
        )
    return TARGET_CLIQUE


def _depth(value: Any, limit: int) -> bool:
    """True when `value` nests no deeper than `limit` (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        children: Iterable[Any] = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        stack.extend((child, depth + 1) for child in children)
    return True


def _only(node: Any, field: str, allowed: str) -> Obj:
    """`node` as an object holding `allowed` and nothing else."""
    if not isinstance(node, dict):
        raise GenerationError(field, "must be an object")
    extra = sorted(k for k in node if k != allowed)
    if extra:
        raise GenerationError(
            f"{field}.{extra[0]}",
            f"a Grove provider override may set only {allowed} here; the operator owns the rest",
        )
    if allowed not in node:
        raise GenerationError(f"{field}.{allowed}", "is required")
    return node


def _check_constraint(tc: Any, field: str) -> Obj:
    """Grove's TopologyConstraint as far as this operator knows it: strings where Grove has strings,
    `pack` an object; anything else below is Grove's (kept as given)."""
    if not isinstance(tc, dict):
        raise GenerationError(field, "must be an object")
    for key in ("topologyName", "packDomain"):
        if key in tc and not isinstance(tc[key], str):
            raise GenerationError(f"{field}.{key}", "must be a string")
    if "pack" in tc:
        pack = tc["pack"]
        if not isinstance(pack, dict):
            raise GenerationError(f"{field}.pack", "must be an object")
        for key in ("required", "preferred"):
            if key in pack and not isinstance(pack[key], str):
                raise GenerationError(f"{field}.pack.{key}", "must be a string")
    return tc


def fragment_constraint(override: Override, dest: Destination | None) -> tuple[str, Obj]:
    """(the resolved target, the topology constraint the fragment sets), or GenerationError naming
    what upstream's admission would refuse."""
    if override.api_version != c.GROVE_API_VERSION:
        raise GenerationError(
            f"{override.field}.apiVersion",
            f"{override.api_version[:64]!r} is not supported; Grove overrides use {c.GROVE_API_VERSION}",
        )
    expected = _expected_target(override, dest)
    if override.target and override.target != expected:
        raise GenerationError(
            f"{override.field}.target",
            f"{override.target[:64]!r} does not fit here: this {override.scope.value} becomes a"
            f" Grove {expected}",
        )
    value_field = f"{override.field}.value"
    if not _depth(override.value, MAX_FRAGMENT_DEPTH):
        raise GenerationError(value_field, f"nests deeper than {MAX_FRAGMENT_DEPTH} levels")
    if expected == TARGET_POD_CLIQUE_SET:
        spec = _only(override.value, value_field, "spec")["spec"]
        template = _only(spec, f"{value_field}.spec", "template")["template"]
        holder = _only(template, f"{value_field}.spec.template", "topologyConstraint")
        tc_field = f"{value_field}.spec.template.topologyConstraint"
    else:
        holder = _only(override.value, value_field, "topologyConstraint")
        tc_field = f"{value_field}.topologyConstraint"
    return expected, copy_tree(_check_constraint(holder["topologyConstraint"], tc_field))


def check_placement(placement: Placement) -> None:
    """Refuses (GenerationError) what upstream's admission refuses of typed constraints: a
    component constraint without the graph's (which names the topology), a graph constraint that
    packs nothing while no component packs either, and typed constraints mixed with fragments."""
    if placement.component_domains and not placement.graph_constraint:
        service = sorted(placement.component_domains)[0]
        raise GenerationError(
            "spec.topologyConstraint",
            f"is required when a service has a topologyConstraint ({service!r} has): it names the"
            " ClusterTopologyBinding the pack domains belong to",
        )
    if placement.graph_constraint and not placement.pack_domain and not placement.component_domains:
        raise GenerationError(
            "spec.topologyConstraint.packDomain",
            "is required when no service has a topologyConstraint",
        )
    if placement.typed and placement.overrides:
        raise GenerationError(
            f"{placement.overrides[0].field}.value",
            "a Grove topology override cannot be combined with spec.topologyConstraint or a"
            " service's topologyConstraint; use one of the two",
        )


# --- placing --------------------------------------------------------------------------------------


def _grove_constraint(topology_name: str, domain: str) -> Obj:
    out: Obj = {}
    if topology_name:
        out["topologyName"] = topology_name
    out["pack"] = {"required": domain}
    return out


def _named(items: list[Obj], name: str, field: str, what: str) -> Obj:
    for item in items:
        if item.get("name") == name:
            return item
    raise GenerationError(field, f"the generated {what} {name!r} is missing")  # a bug, not bad input


def _keep_legacy_packing(desired: Obj, live: Any) -> None:
    """Grove before v0.1.0-alpha.9 knew a constraint as `{packDomain}` alone; its later webhook
    lets such a live constraint gain `topologyName` but not, in the same update, also trade
    `packDomain` for `pack.required`. So while the live constraint is of that kind and the desired
    one names a topology, the desired one keeps the live packing fields beside the name: one
    update repairs the name, the next (the live constraint now named) moves to the current shape,
    and the set is never recreated. As upstream 2a6da14c migrates sets its older releases made."""
    if not isinstance(live, Mapping) or not desired.get("topologyName"):
        return
    if live.get("topologyName") or not live.get("packDomain"):
        return
    desired["packDomain"] = live["packDomain"]
    if isinstance(live.get("pack"), Mapping):
        desired["pack"] = copy_tree(dict(live["pack"]))
    else:
        desired.pop("pack", None)


def repair_legacy_constraints(template: Obj, live_template: Mapping[str, Any] | None) -> None:
    """`_keep_legacy_packing` for the set's constraint and each clique's and scaling group's."""
    if not isinstance(live_template, Mapping):
        return
    if isinstance(template.get("topologyConstraint"), dict):
        _keep_legacy_packing(template["topologyConstraint"], live_template.get("topologyConstraint"))
    for key in ("cliques", "podCliqueScalingGroups"):
        live_items = {
            item.get("name"): item.get("topologyConstraint")
            for item in live_template.get(key) or ()
            if isinstance(item, Mapping)
        }
        for item in template.get(key) or ():
            if isinstance(item.get("topologyConstraint"), dict):
                _keep_legacy_packing(item["topologyConstraint"], live_items.get(item.get("name")))


def place(
    template: Obj,
    dgd: Graph,
    destinations: Mapping[str, Destination],
    *,
    live_template: Mapping[str, Any] | None = None,
) -> None:
    """Writes the graph's topology constraints into `template` (the PodCliqueSet's
    `spec.template`, its `cliques` and `podCliqueScalingGroups` built): the typed ones (kept in
    the legacy packing shape while `live_template`, the live set's, still has it), then each
    fragment over its destination, as given. Raises GenerationError as `check_placement` and
    `fragment_constraint` do."""
    placement = read_placement(dgd)
    if not placement.any:
        return
    check_placement(placement)
    cliques: list[Obj] = template.get("cliques") or []
    groups: list[Obj] = template.get("podCliqueScalingGroups") or []

    if placement.pack_domain:
        template["topologyConstraint"] = _grove_constraint(placement.topology_name, placement.pack_domain)
    # Grove hands the set's topology name down to constraints that name none; with nothing packed
    # at the set there is nothing to inherit, so each component names it.
    inherited = "" if placement.pack_domain else placement.topology_name
    for service, domain in sorted(placement.component_domains.items()):
        dest = destinations.get(service)
        if dest is None:
            continue
        field = f"spec.services.{service}.topologyConstraint"
        target = (
            _named(groups, dest.scaling_group, field, "scaling group")
            if dest.scaling_group is not None
            else _named(cliques, str(dest.clique), field, "clique")
        )
        target["topologyConstraint"] = _grove_constraint(inherited, domain)
    repair_legacy_constraints(template, live_template)

    for override in placement.overrides:
        dest = destinations.get(override.service) if override.service is not None else None
        kind, constraint = fragment_constraint(override, dest)
        if override.scope is Scope.GRAPH:
            template["topologyConstraint"] = constraint
            continue
        assert dest is not None  # fragment_constraint refused a service the graph has not
        if kind == TARGET_SCALING_GROUP:
            item = _named(groups, str(dest.scaling_group), override.field, "scaling group")
        else:
            name = {Scope.LEADER: dest.leader, Scope.WORKER: dest.worker}.get(override.scope, dest.clique)
            item = _named(cliques, str(name), override.field, "clique")
        item["topologyConstraint"] = constraint
