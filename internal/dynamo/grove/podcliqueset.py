"""DGD → the Grove pathway's objects: one PodCliqueSet named after the graph, plus per-service Services.

With Grove chosen (`uses_grove`), a graph has no DCDs and no Deployments. Each single-node service is
one PodClique (`<lower(svc)>`) of the set; each multinode service is a PodCliqueScalingGroup of two
cliques, a one-pod leader (`<svc>-ldr`) and its workers (`<svc>-wkr`), scaled together. Grove names
what it creates from the set: the PodClique or scaling group of a service is `<dgd>-0-<lower(svc)>`
(replica 0 of the set), which is what status and scaling address (`grove_object_name`).

Pods are built by the same pod-template builder as the DCD pathway (pod/template.py), from the same
per-service spec (graph/generate.py `service_to_dcd_spec`), with the multinode rewrites addressing
Grove's pod names (backends.py `grove_addressing`). The clique carries the pod labels and
annotations; Grove copies them onto its pods. The worker hash names nothing here (Grove rolls cliques
in place) but labels worker cliques and their Services and suffixes the workers' Dynamo namespace
(grove/workerhash.py says when). Topology requests, typed or as Grove-native provider fragments at
graph, component and multinode leader/worker level, are placed last (grove/topology.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from dynamo_operator.api.v1alpha1.enums import BackendFramework
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming, remainder
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError, for_service
from dynamo_operator.internal.dynamo.common.hashing import stamp_hash
from dynamo_operator.internal.dynamo.common.inputs import (
    EnvVar,
    ForeignObject,
    Graph,
    StoredComponent,
    StoredGraph,
)
from dynamo_operator.internal.dynamo.common.objects import Obj, envelope
from dynamo_operator.internal.dynamo.component.backends import Role, detect_backend, grove_addressing
from dynamo_operator.internal.dynamo.component.workload import (
    component_service,
    desired_ingress,
    desired_virtual_service,
    wants_service,
)
from dynamo_operator.internal.dynamo.graph.components import components_of, raised
from dynamo_operator.internal.dynamo.graph.generate import (
    check_distinct_objects,
    desired_discovery_rbac,
    desired_model_services,
    desired_pvcs,
    desired_scaling_adapters,
    desired_side_objects,
    service_to_dcd_spec,
    services_of,
    validate_graph,
)
from dynamo_operator.internal.dynamo.grove.provider import recorded_provider
from dynamo_operator.internal.dynamo.grove.topology import Destination, place
from dynamo_operator.internal.dynamo.grove.workerhash import NO_HASH
from dynamo_operator.internal.dynamo.pod.merge import merge_env
from dynamo_operator.internal.dynamo.pod.template import (
    Component,
    build_main_container,
    build_pod_template,
    discovery_backend,
    multinode_node_count,
    pod_annotations,
    worker_hash_of,
)
from dynamo_operator.internal.dynamo.pod.user_pod import UserPod, layered_apart, stored_user_pod
from dynamo_operator.internal.dynamo.rollout.workerhash import is_worker
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2

STARTUP_ANY_ORDER = "CliqueStartupTypeAnyOrder"
STARTUP_EXPLICIT = "CliqueStartupTypeExplicit"


def uses_grove(dgd: Graph, ctx: GenContext) -> bool:
    """The pathway of a graph on its own terms: Grove when the operator may use it (the API is served
    and the operator flag allows it: `ctx.capabilities.grove`) and the graph does not opt out with
    `nvidia.com/enable-grove: "false"` (any case). The reconciler may still keep a running graph on
    the DCD pathway (see controllers/dynamographdeployment/grove.py)."""
    return ctx.capabilities.grove and not grove_opted_out(dgd)


def grove_opted_out(dgd: Graph) -> bool:
    """The graph asks to stay off Grove (`nvidia.com/enable-grove: "false"`, any case)."""
    annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(c.ANNOTATION_ENABLE_GROVE, "")).strip().lower() == "false"


def grove_opted_in(dgd: Graph) -> bool:
    """The graph asks for Grove explicitly (`nvidia.com/enable-grove: "true"`)."""
    annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(c.ANNOTATION_ENABLE_GROVE, "")).strip().lower() == "true"


def takes_grove(dgd: Graph, ctx: GenContext, *, has_dcds: bool, has_pod_clique_set: bool) -> bool:
    """The pathway a graph takes now: True for Grove.

    An opt-out (`nvidia.com/enable-grove: "false"`) is an explicit ask: DCDs. Otherwise a graph
    that records its workload provider (grove/provider.py) keeps it: a Grove graph stays on Grove
    even while Grove cannot be used (its pathway then says so and waits), a DCD graph stays on DCDs
    unless its owner asks for Grove (`"true"`) and Grove is served. A graph that records none yet
    (new, or from before the record) takes Grove when it may (`uses_grove`) and it is new or already
    has its PodCliqueSet or asks for it; a graph running on DCDs stays there, because moving it
    replaces every pod at once. Raises InvalidWorkloadProviderError for an unknown record.
    """
    provider = recorded_provider(dgd)
    if provider == c.WORKLOAD_PROVIDER_GROVE:
        return not grove_opted_out(dgd)
    if provider == c.WORKLOAD_PROVIDER_COMPONENT:
        return uses_grove(dgd, ctx) and grove_opted_in(dgd)
    if not uses_grove(dgd, ctx):
        return False
    return has_pod_clique_set or not has_dcds or grove_opted_in(dgd)


def worker_services(dgd: Graph) -> frozenset[str]:
    """The graph's worker services (worker, prefill, decode): the ones the worker hash labels."""
    return frozenset(svc for svc, spec in services_of(dgd).items() if is_worker(spec))


def graph_grove_worker_hash(dgd: Graph, ctx: GenContext) -> str:
    """The hash a new PodCliqueSet's worker cliques carry: the graph's v2 worker hash in its
    namespace, `NO_HASH` for a graph without workers. Raises GenerationError like generation."""
    return worker_hash_v2(dgd, ctx.namespace) if worker_services(dgd) else NO_HASH


def clique_name(service: str) -> str:
    """A single-node service's clique, and a multinode service's scaling group: `lower(svc)`."""
    return naming.normalised_service(service)


# Grove names a pod `<set>-<i>-<clique>-<5 random>`, or `<set>-<i>-<group>-<j>-<clique>-<5 random>`
# in a scaling group; to keep that within a 63-character hostname its PodCliqueSet webhook refuses a
# set whose set, group and clique names add up to more than this (upstream's DGD webhook checks the
# same sum up front).
GROVE_MAX_COMBINED_NAME_LENGTH = 45


class GroveNameTooLongError(GenerationError):
    """A service's Grove names (set + scaling group + clique) exceed Grove's pod-naming budget
    (Grove's PodCliqueSet webhook would refuse the set: said before anything is written)."""

    reason: ClassVar[str] = "GroveNameTooLong"


def _name_budget(service: str, *, multinode: bool, forced: bool = False) -> int:
    """What one service adds to Grove's sum: its clique (single node), or its scaling group plus its
    longest clique (multinode: `<svc>-ldr`, `-wkr` is as long; a forced scaling group: `<svc>`)."""
    base = clique_name(service)
    if multinode:
        return len(base) + len(f"{base}-{c.GROVE_ROLE_SUFFIX_LEADER}")
    return 2 * len(base) if forced else len(base)


def forced_scaling_groups(dgd: Graph) -> frozenset[str]:
    """The services whose v1beta1 component asks to run as a scaling group although single-node
    (`experimental.grove.forceScalingGroup: true`; v1alpha1 has no place for it: remainder.py)."""
    return frozenset(
        name for name, rest in remainder.of_graph(dgd.get("metadata")).items() if rest.force_scaling_group
    )


# Upstream never shortens a set below this: a service too long even then is refused.
_MIN_SET_NAME_LENGTH = 8
_SET_NAME_HASH_LENGTH = 4


def _fnv1a_32(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def pod_clique_set_name(dgd: Graph) -> str:
    """The graph's PodCliqueSet name: the graph's name when it fits Grove's budget beside the
    longest service's names, else cut to fit and ended with `-` and 4 hex digits of the FNV-1a hash
    of the full name (so two long graphs stay apart and the name never changes between reconciles).
    Upstream 2a6da14c names sets so instead of refusing a long graph; the same name lets this
    operator take over what upstream made."""
    dgd_name = str((dgd.get("metadata") or {}).get("name") or "")
    services = services_of(dgd)
    forced = forced_scaling_groups(dgd)
    widest = max(
        (
            _name_budget(svc, multinode=multinode_node_count(spec) > 1, forced=svc in forced)
            for svc, spec in services.items()
        ),
        default=0,
    )
    budget = max(GROVE_MAX_COMBINED_NAME_LENGTH - widest, _MIN_SET_NAME_LENGTH)
    if len(dgd_name) <= budget:
        return dgd_name
    suffix = f"{_fnv1a_32(dgd_name.encode()) & 0xFFFF:0{_SET_NAME_HASH_LENGTH}x}"
    return f"{dgd_name[: budget - _SET_NAME_HASH_LENGTH - 1]}-{suffix}"


def grove_name_parts(
    set_name: str, service: str, *, multinode: bool, forced: bool = False
) -> tuple[tuple[str, str], ...]:
    """(kind, name) of what Grove adds up for the pods of one service: the set, then (multinode or
    a forced scaling group) the scaling group, then the longest clique (the leader's `<svc>-ldr`,
    `-wkr` is as long; a forced group's one clique is `<svc>`)."""
    base = clique_name(service)
    if forced and not multinode:
        return (
            (c.KIND_POD_CLIQUE_SET, set_name),
            (c.KIND_POD_CLIQUE_SCALING_GROUP, base),
            (c.KIND_POD_CLIQUE, base),
        )
    if multinode:
        return (
            (c.KIND_POD_CLIQUE_SET, set_name),
            (c.KIND_POD_CLIQUE_SCALING_GROUP, base),
            (c.KIND_POD_CLIQUE, f"{base}-{c.GROVE_ROLE_SUFFIX_LEADER}"),
        )
    return ((c.KIND_POD_CLIQUE_SET, set_name), (c.KIND_POD_CLIQUE, base))


def grove_name_problems(dgd: Graph, ctx: GenContext) -> list[str]:
    """Per service whose pods Grove would refuse to name even with the set name shortened (see
    `pod_clique_set_name`), one sentence saying which names add up to how much, and what to do;
    empty when every service fits."""
    set_name = pod_clique_set_name(dgd)
    problems = []
    for gs in grove_services(dgd, ctx):
        parts = grove_name_parts(set_name, gs.service, multinode=gs.multinode, forced=gs.forced)
        total = sum(len(name) for _, name in parts)
        if total <= GROVE_MAX_COMBINED_NAME_LENGTH:
            continue
        named = " + ".join(f"{kind} {name!r} ({len(name)})" for kind, name in parts)
        problems.append(
            f"{gs.service}: Grove names its pods from {named} = {total} characters,"
            f" more than the {GROVE_MAX_COMBINED_NAME_LENGTH} Grove allows; shorten the service"
            f' name, or keep the graph off Grove ({c.ANNOTATION_ENABLE_GROVE}: "false")'
        )
    return problems


def grove_object_name(set_name: str, service: str) -> str:
    """The PodClique (single node) or PodCliqueScalingGroup (multinode) Grove makes for a service."""
    return f"{set_name}-0-{clique_name(service)}"


def component_service_name(dgd_name: str, service: str) -> str:
    """The service's Service (and Ingress/VirtualService): `<dgd>-<lower(svc)>`."""
    return naming.service_name(naming.dcd_name(dgd_name, service))


@dataclass(frozen=True, slots=True)
class GroveService:
    """One service as the Grove pathway sees it: its generation view and where Grove puts it."""

    service: str
    component: Component
    multinode: bool
    object_name: str  # PodClique or PodCliqueScalingGroup `<dgd>-0-<lower(svc)>`
    forced: bool = False  # a single-node service run as a scaling group (forceScalingGroup)

    @property
    def scaling_group(self) -> bool:
        """Grove runs the service as a PodCliqueScalingGroup (multinode, or forced)."""
        return self.multinode or self.forced

    @property
    def kind(self) -> str:
        return c.KIND_POD_CLIQUE_SCALING_GROUP if self.scaling_group else c.KIND_POD_CLIQUE


def grove_services(
    dgd: Graph,
    ctx: GenContext,
    *,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str = NO_HASH,
    stored: StoredGraph | None = None,
) -> list[GroveService]:
    """Every service of the graph in name order, with the spec the DCD pathway would give it (graph
    annotations, labels and envs propagated, Dynamo namespace filled in), worker services labelled
    with `worker_hash` unless it is `NO_HASH`. `stored`: the same graph as stored, whose components'
    pods are read from their `podTemplate` (as a DCD's are: `component_of`); None: from `dgd`."""
    stored_components = {str(x.get("name")): x for x in components_of(stored)} if stored is not None else {}
    dgd_name = str((dgd.get("metadata") or {}).get("name") or "")
    restart_at = restart_at or {}
    set_name = pod_clique_set_name(dgd)
    forced = forced_scaling_groups(dgd)
    remainders = remainder.of_graph(dgd.get("metadata"))
    out: list[GroveService] = []
    for service in services_of(dgd):
        spec = service_to_dcd_spec(
            dgd, service, ctx, restart_at=restart_at.get(service), worker_hash=worker_hash or None
        )
        component = stored_components.get(service)
        pod = None
        if component is not None and stored is not None and layered_apart(spec) is None:
            pod = _graph_component_pod(component, stored, ctx)
        comp = Component(
            name=naming.dcd_name(dgd_name, service),
            namespace=ctx.namespace,
            parent_dgd=dgd_name,
            spec=spec,
            beta=remainders.get(service, remainder.NONE),
            given_pod=pod,
        )
        out.append(
            GroveService(
                service=service,
                component=comp,
                multinode=comp.is_multinode,
                object_name=grove_object_name(set_name, service),
                forced=service in forced and not comp.is_multinode,
            )
        )
    return out


def _graph_component_pod(component: StoredComponent, graph: StoredGraph, ctx: GenContext) -> UserPod:
    """A stored component's pods with what its graph adds to them: the graph's env under the
    component's, and a planner's ServiceAccount unless the pod names one (`service_to_dcd_spec`)."""
    pod = stored_user_pod(component)
    spec = pod.spec
    if component.get("type") == c.COMPONENT_PLANNER and "serviceAccountName" not in spec:
        spec = {**spec, "serviceAccountName": ctx.planner_service_account}
    env = cast(list[EnvVar], merge_env(graph["spec"].get("env") or [], pod.env))
    return dataclasses.replace(pod, env=env, spec=spec)


def _clique_annotations(comp: Component, ctx: GenContext) -> dict[str, str]:
    """What the pods of a clique carry: the pod annotations of the DCD pathway, plus the graph-level
    keys that describe the graph (origin version, discovery settings) and the resolved discovery
    backend, as upstream writes them on its cliques. Rollout-steering keys stay off pods."""
    out = pod_annotations(comp)
    for key in c.PROPAGATED_DGD_ANNOTATIONS:
        if key in comp.annotations:
            out[key] = comp.annotations[key]
    out[c.ANNOTATION_DISCOVERY_BACKEND] = discovery_backend(comp, ctx)
    return dict(sorted(out.items()))


def update_strategy(dgd: Graph) -> str | None:
    """How Grove replaces the set's pods after a change, from the graph's
    `nvidia.com/grove-update-strategy` (`RollingRecreate`, Grove's own default, or `OnDelete`: a
    pod is replaced only once someone deletes it); None when the graph does not say. Raises
    GenerationError for another value."""
    annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    if c.ANNOTATION_GROVE_UPDATE_STRATEGY not in annotations:
        return None
    value = str(annotations[c.ANNOTATION_GROVE_UPDATE_STRATEGY])
    if value not in c.GROVE_UPDATE_STRATEGIES:
        raise GenerationError(
            f"metadata.annotations[{c.ANNOTATION_GROVE_UPDATE_STRATEGY}]",
            f"{value[:64]!r} is not a Grove update strategy;"
            f" supported: {', '.join(c.GROVE_UPDATE_STRATEGIES)}",
        )
    return value


def uses_volcano(ctx: GenContext) -> bool:
    """Grove's pods go to Volcano: asked for (`--volcano-scheduler`) and Volcano's API served."""
    return ctx.volcano_on_grove and ctx.capabilities.volcano


def check_one_gang_scheduler(ctx: GenContext) -> None:
    """KAI-Scheduler and Volcano cannot both schedule Grove's pods (upstream refuses the same):
    a graph is refused while both are in play, naming the flag that can undo it."""
    if uses_volcano(ctx) and ctx.capabilities.kai_scheduler:
        raise GenerationError(
            "spec",
            "KAI-Scheduler and Volcano cannot both schedule Grove's pods: KAI-Scheduler's API is served"
            " and the operator runs with --volcano-scheduler; turn one of them off",
        )


def volcano_queue(dgd: Graph) -> str:
    """The graph's Volcano queue (`nvidia.com/volcano-queue`, trimmed); "" when it names none."""
    annotations = (dgd.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(c.ANNOTATION_VOLCANO_QUEUE) or "").strip()


def _kai_queue(dgd: Graph) -> str:
    annotations = dgd.get("metadata", {}).get("annotations") or {}
    return (
        str(annotations.get(c.ANNOTATION_KAI_SCHEDULER_QUEUE) or "").strip() or c.DEFAULT_KAI_SCHEDULER_QUEUE
    )


def _clique(
    gs: GroveService, ctx: GenContext, dgd: Graph, *, role: Role, name: str, replicas: int, min_available: int
) -> Obj:
    node_count = multinode_node_count(gs.component.spec)
    addressing = grove_addressing(gs.service, node_count) if gs.multinode else None
    template = build_pod_template(gs.component, ctx, role=role, addressing=addressing)
    labels: dict[str, str] = template["metadata"]["labels"]
    pod_spec: Obj = template["spec"]
    if ctx.capabilities.kai_scheduler:
        # Grove's gang scheduling through KAI: the queue from the graph, KAI as scheduler unless the
        # user picked another one.
        labels[c.LABEL_KAI_SCHEDULER_QUEUE] = _kai_queue(dgd)
        pod_spec.setdefault("schedulerName", c.KAI_SCHEDULER_NAME)
    elif uses_volcano(ctx) and not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = c.VOLCANO_SCHEDULER_NAME
    clique: Obj = {"name": name}
    if labels:
        clique["labels"] = dict(sorted(labels.items()))
    annotations = _clique_annotations(gs.component, ctx)
    if annotations:
        clique["annotations"] = annotations
    clique["spec"] = {
        "roleName": name,
        "replicas": replicas,
        "minAvailable": min_available,
        "podSpec": pod_spec,
    }
    return clique


def component_min_available(spec: Mapping[str, Any]) -> int:
    """The component's gang minimum (v1beta1 `minAvailable`, which the v1alpha1 view this operator
    reads keeps beside `replicas`, api/conversion): how many replicas Grove schedules together and
    keeps, below which it terminates the gang after the termination delay. 1 when unset, as
    upstream's defaulting webhook stores it on Grove graphs."""
    value = spec.get("minAvailable")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return 1
    return value


def _roles(gs: GroveService) -> list[tuple[Role, str, int, int]]:
    """(role, clique name, replicas, minAvailable) of each clique of a service. A single-node
    service's clique takes the component's `minAvailable`; a multinode service's cliques need every
    rank (their replicas), the component's minimum applies to its scaling group instead. A forced
    scaling group's one clique is a single pod: the group's replicas carry the service's."""
    base = clique_name(gs.service)
    if gs.forced:
        return [(Role.MAIN, base, 1, 1)]
    if not gs.multinode:
        return [(Role.MAIN, base, gs.component.replicas, component_min_available(gs.component.spec))]
    workers = multinode_node_count(gs.component.spec) - 1
    return [
        (Role.LEADER, f"{base}-{c.GROVE_ROLE_SUFFIX_LEADER}", 1, 1),
        (Role.WORKER, f"{base}-{c.GROVE_ROLE_SUFFIX_WORKER}", workers, workers),
    ]


def _destination(gs: GroveService, roles: list[tuple[Role, str, int, int]]) -> Destination:
    """Where the service's topology constraints go (grove/topology.py): its scaling group, when it
    runs as one, else its clique; a multinode service's leader and worker cliques by role."""
    by_role = {role: name for role, name, _, _ in roles}
    return Destination(
        service=gs.service,
        clique=by_role.get(Role.MAIN),
        scaling_group=clique_name(gs.service) if gs.scaling_group else None,
        leader=by_role.get(Role.LEADER),
        worker=by_role.get(Role.WORKER),
    )


def _starts_after_workers(gs: GroveService, ctx: GenContext) -> bool:
    """TRT-LLM's leader runs mpirun against its workers' sshd: it must start after them. (vLLM and
    SGLang workers tolerate a missing leader and retry, so they start in any order.)"""
    if not gs.multinode:
        return False
    container, _ = build_main_container(gs.component, ctx)
    backend = detect_backend(
        gs.component.component_type, gs.component.spec.get("backendFramework"), container
    )
    return backend == BackendFramework.TRTLLM


def _live_template(live: ForeignObject | None) -> Mapping[str, Any] | None:
    """The live set's `spec.template`, None when there is no set or it has none."""
    spec = live.get("spec") if live else None
    template = spec.get("template") if isinstance(spec, Mapping) else None
    return template if isinstance(template, Mapping) else None


def desired_pod_clique_set(
    dgd: Graph,
    ctx: GenContext,
    *,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str = NO_HASH,
    live: ForeignObject | None = None,
    stored: StoredGraph | None = None,
) -> Obj:
    """The graph's PodCliqueSet: one replica, cliques per service role, scaling groups for multinode
    services, the operator's termination delay (`ctx.grove_termination_delay`, none when zero).
    Metadata labels/annotations are the graph's `spec.labels`/`spec.annotations`. `live`: the set
    as it is now, if any (its topology constraints may need a step in between, topology.py)."""
    spec = dgd["spec"]
    check_one_gang_scheduler(ctx)
    set_annotations = dict(spec.get("annotations") or {})
    if uses_volcano(ctx) and (queue := volcano_queue(dgd)):
        set_annotations[c.ANNOTATION_GROVE_VOLCANO_QUEUE] = queue  # Grove's Volcano backend reads it
    pcs = envelope(
        c.GROVE_API_VERSION,
        c.KIND_POD_CLIQUE_SET,
        pod_clique_set_name(dgd),
        ctx.namespace,
        # The graph's name in a label: the set's own name may be shortened (pod_clique_set_name).
        labels={**(spec.get("labels") or {}), c.LABEL_GRAPH_DEPLOYMENT_NAME: str(dgd["metadata"]["name"])},
        annotations=set_annotations,
        owner=dgd,
    )
    cliques: list[Obj] = []
    groups: list[Obj] = []
    destinations: dict[str, Destination] = {}
    explicit = False
    for gs in grove_services(dgd, ctx, restart_at=restart_at, worker_hash=worker_hash, stored=stored):
        roles = _roles(gs)
        destinations[gs.service] = _destination(gs, roles)
        with for_service(gs.service):
            made = [
                _clique(gs, ctx, dgd, role=role, name=name, replicas=replicas, min_available=minimum)
                for role, name, replicas, minimum in roles
            ]
        if _starts_after_workers(gs, ctx):
            workers = [name for role, name, _, _ in roles if role is Role.WORKER]
            for clique, (role, _, _, _) in zip(made, roles, strict=True):
                if role is Role.LEADER:
                    clique["spec"]["startsAfter"] = workers
                    explicit = True
        cliques += made
        if gs.scaling_group:
            group: Obj = {"name": clique_name(gs.service), "cliqueNames": [name for _, name, _, _ in roles]}
            replicas = gs.component.spec.get("replicas")
            if replicas is not None:
                group["replicas"] = int(replicas)
            group["minAvailable"] = component_min_available(gs.component.spec)
            groups.append(group)
    template: Obj = {
        "cliqueStartupType": STARTUP_EXPLICIT if explicit else STARTUP_ANY_ORDER,
        "headlessServiceConfig": {"publishNotReadyAddresses": True},
    }
    if spec.get("priorityClassName"):
        # v1beta1's graph-level priority (the v1alpha1 view keeps it in the spec): Grove gives
        # it to every pod of the set.
        template["priorityClassName"] = str(spec["priorityClassName"])
    if ctx.grove_termination_delay not in {"", "0s"}:
        template["terminationDelay"] = ctx.grove_termination_delay
    template["cliques"] = cliques
    if groups:
        template["podCliqueScalingGroups"] = groups
    # Topology constraints, typed or Grove-native (topology.py).
    place(template, dgd, destinations, live_template=_live_template(live))
    pcs["spec"] = {"replicas": 1, "template": template}
    if strategy := update_strategy(dgd):
        # Only when asked: Grove before v0.1.0-alpha.12 has no such field and refuses it.
        pcs["spec"]["updateStrategy"] = {"type": strategy}
    return pcs


def desired_grove_service(gs: GroveService, ctx: GenContext, owner: Mapping[str, Any]) -> Obj | None:
    """The Service of one service on the Grove pathway, owned by the graph: frontends always, others
    with Kubernetes discovery. It selects the service's pods (for multinode: every pod of the group;
    only the leader serves, workers report not ready), and carries only the discovery labels and the
    graph's and the component's annotations (`service_annotations`); a worker's also its worker
    hash, when its cliques carry one."""
    comp = gs.component
    if not wants_service(comp, ctx):
        return None
    worker_hash = worker_hash_of(comp)
    return component_service(
        comp,
        ctx,
        name=component_service_name(comp.parent_dgd, gs.service),
        namespace=ctx.namespace,
        labels={c.LABEL_WORKER_HASH: worker_hash} if worker_hash else {},
        annotations=service_annotations(comp) or None,
        owner=owner,
        leader_only=False,
    )


def service_annotations(comp: Component) -> dict[str, str]:
    """A Grove component Service's annotations, as upstream 2a6da14c writes them: the graph's
    `spec.annotations` under the component's own (already merged so by `service_to_dcd_spec`).
    What the graph's metadata contributes (origin version, discovery settings) and the restart stamp
    steer pods and rollouts, so they stay off the Service."""
    own = comp.annotations
    return {
        key: value
        for key, value in own.items()
        if key not in c.PROPAGATED_DGD_ANNOTATIONS and key != c.ANNOTATION_RESTART_AT
    }


def desired_grove_objects(
    dgd: Graph,
    ctx: GenContext,
    *,
    stored: StoredGraph | None = None,
    restart_at: Mapping[str, str] | None = None,
    worker_hash: str | None = None,
    live_pcs: ForeignObject | None = None,
) -> list[Obj]:
    """Everything the graph reconciler owns on the Grove pathway, in apply order, each stamped with
    its content hash: the graph-level objects both pathways share (PVCs, discovery RBAC, side
    objects, model Services, scaling adapters), the PodCliqueSet, and per service its Service and
    Ingress or VirtualService.

    `worker_hash`: what the worker cliques carry (grove/workerhash.py `grove_worker_hash`); None:
    what a new set gets, the graph's own v2 worker hash. `live_pcs`: the graph's PodCliqueSet as it
    is now, if any (see `desired_pod_clique_set`). `stored`: the same graph as stored, which the
    graph-level objects are read from (None: `dgd` raised to it, graph/components.py)."""
    if worker_hash is None:
        worker_hash = graph_grove_worker_hash(dgd, ctx)
    # Names carry no worker hash here; checking them as if they did is stricter, never looser.
    validate_graph(dgd, ctx, worker_hash="0" * 8)
    if problems := grove_name_problems(dgd, ctx):
        raise GroveNameTooLongError("spec.services", "; ".join(problems))
    as_stored = stored if stored is not None else raised(dgd)
    pcs = stamp_hash(
        desired_pod_clique_set(
            dgd, ctx, restart_at=restart_at, worker_hash=worker_hash, live=live_pcs, stored=as_stored
        )
    )
    per_service: list[Obj] = []
    for gs in grove_services(dgd, ctx, restart_at=restart_at, worker_hash=worker_hash, stored=as_stored):
        # The Ingress/VirtualService generators name their objects after the component, which on
        # this pathway is `<dgd>-<lower(svc)>` already.
        with for_service(gs.service):
            extras = (
                desired_grove_service(gs, ctx, dgd),
                desired_ingress(gs.component, ctx, dgd),
                desired_virtual_service(gs.component, ctx, dgd),
            )
        per_service += [stamp_hash(extra) for extra in extras if extra is not None]
    objects = [
        *desired_pvcs(dgd, ctx),
        *desired_discovery_rbac(dgd, ctx),
        *desired_side_objects(as_stored, ctx),
        *desired_model_services(as_stored, ctx),
        pcs,
        *per_service,
        *desired_scaling_adapters(as_stored, ctx),
    ]
    check_distinct_objects(objects)
    return objects
