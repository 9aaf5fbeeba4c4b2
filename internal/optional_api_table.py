"""The optional APIs: one entry each, and everything the operator does about an API it uses only while
the cluster serves it is read from that entry.

An entry holds the resource that tells whether the API is served (`probe`), the `Capabilities` field
generation reads, which owner (graph or component) watches its kinds and how (predicate, mapper, cache
shape, owned or only read), its `render --with-...` flag, the RBAC rules it needs and the local
cluster's add-on that serves it. The readers:

- detection (operator/optional_apis.py, operator/context.py, operator/optional_api_watch.py);
- the APIs generation tells a graph it lacks (internal/dynamo/common/needs.py, checked here at import);
- `Capabilities` (internal/dynamo/common/context.py): generation is pure and cannot import this table, so the
  dataclass keeps one typed field per entry; each entry names its field through an accessor mypy
  checks (`lambda c: c.lws`), and `_field_of` turns that into the name, so there is no string to match;
- ownership (operator/registration.py), cache shapes (operator/cache_shapes.py) and the child kinds a
  generated object may have (`internal/kinds.py`);
- `render`'s flags (operator/flags.py);
- RBAC: hack/gen_rbac.py writes `rbac` into config/rbac/role.yaml (`make manifests`), which the chart copies;
- the local cluster's add-ons (hack/cluster_addons.py is standard library only: a test checks `addon`).

Adding an optional API is one entry here (plus its `Capabilities` field when generation reads it),
then `make manifests`.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from dynamo_operator.internal import consts
from dynamo_operator.internal.cache.transform import Transform, keep_paths, metadata_only
from dynamo_operator.internal.client.resource import LEADER_WORKER_SET, VIRTUAL_SERVICE, Resource
from dynamo_operator.internal.controller.predicates import (
    CHILD_CONTENT_CHANGED,
    CHILD_STATUS_CHANGED,
    Funcs,
    Predicate,
)
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.common.needs import NEEDS

Obj = dict[str, Any]
Mapper = Callable[[Obj], Iterable[str]]

# Workloads: what readiness reads (internal/dynamo/status/readiness.py) and `spec.replicas` for the syncer's
# drift check (a hand-scaled child is put back). Also the shape of Deployments (operator/cache_shapes.py).
WORKLOAD_SHAPE: Final = keep_paths("spec.replicas", "spec.paused", "status")

WRITE: Final = ("get", "list", "watch", "create", "update", "patch", "delete")
READ: Final = ("get", "list", "watch")


class Owner(enum.Enum):
    """Which reconciler watches an API's kinds (and prunes the owned ones)."""

    GRAPH = "DynamoGraphDeployment"
    COMPONENT = "DynamoComponentDeployment"


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of the API that its owner watches while the API is used. `owned`: written and pruned
    by the owner (else only read, e.g. what Grove makes from our PodCliqueSet); `mapper`: which owners
    an event concerns (None: the controller ownerReference); `shape`: what the cache keeps (None: all)."""

    resource: Resource
    predicate: Predicate
    shape: Transform | None = None
    owned: bool = True
    mapper: Mapper | None = None


@dataclass(frozen=True, slots=True)
class Rule:
    """One RBAC rule of the manager's ClusterRole; `why` becomes its comment."""

    group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str = ""


@dataclass(frozen=True, slots=True)
class RenderFlag:
    """`dynamo-operator render <flag>`: render as if the API were served."""

    flag: str
    help: str


def _field_of(accessor: Callable[[Capabilities], bool]) -> str:
    """The `Capabilities` field `accessor` reads (`lambda c: c.lws` -> "lws"), found by running it on
    a recorder of attribute reads: the entry names its field in code mypy checks, never in a string."""
    seen: list[str] = []

    class _Recorder:
        def __getattr__(self, name: str) -> bool:
            seen.append(name)
            return False

    accessor(_Recorder())  # type: ignore[arg-type]
    names = {f.name for f in dataclasses.fields(Capabilities)}
    if len(seen) != 1 or seen[0] not in names:
        raise TypeError(f"a capability accessor must read one Capabilities field, it read {seen}")
    return seen[0]


@dataclass(frozen=True, slots=True)
class OptionalApi:
    """One optional API (see the module docstring). `probe` is the resource the operator calls: the
    API counts as served when exactly that version of it is. `used(capabilities)`, on what generation
    may use (`Settings.generation_capabilities`), says when the owner watches `kinds` (default: the
    API's own field). `builtin`: served by the API server itself, no CRD tells."""

    capability: Callable[[Capabilities], bool]
    probe: Resource
    owner: Owner | None = None
    kinds: tuple[Kind, ...] = ()
    used: Callable[[Capabilities], bool] | None = None
    render: RenderFlag | None = None
    rbac: tuple[Rule, ...] = ()
    addon: str | None = None
    builtin: bool = False
    name: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", _field_of(self.capability))

    @property
    def resource(self) -> Resource:
        return self.probe

    @property
    def crd_name(self) -> str:
        """The name its CustomResourceDefinition must have (`<plural>.<group>`)."""
        return f"{self.probe.plural}.{self.probe.group}"

    @property
    def group_version(self) -> str:
        return self.probe.api_version

    @property
    def render_dest(self) -> str:
        """The argparse destination of its `render` flag."""
        return f"with_{self.name}"

    def in_use(self, capabilities: Capabilities) -> bool:
        """Whether its owner watches its kinds, given what generation may use."""
        return (self.used or self.capability)(capabilities)


# --- Grove: what the graph's readiness reads of the objects Grove makes -----------------------------

POD_CLIQUE_SET: Final = Resource("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet")
POD_CLIQUE: Final = Resource("grove.io", "v1alpha1", "podcliques", "PodClique")
POD_CLIQUE_SCALING_GROUP: Final = Resource(
    "grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup"
)

# What the graph's Grove readiness (internal/dynamo/grove/readiness.py) reads of a PodClique or scaling
# group: the counts (the scheduled and gated ones tell capacity) and each condition's verdict; a change
# elsewhere (conditions' times, template hashes, update progress) is no news.
_GROVE_STATUS_READ = (
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "updatedReplicas",
    "scheduledReplicas",
    "scheduleGatedReplicas",
    "observedGeneration",
)


def _what_grove_readiness_reads(obj: Obj) -> tuple[Any, ...]:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    verdicts = tuple(
        (cond.get("type"), cond.get("status"), cond.get("reason"), cond.get("message"))
        for cond in status.get("conditions") or ()
        if isinstance(cond, dict)
    )
    return (
        meta.get("generation"),
        spec.get("replicas"),
        tuple(spec.get("cliqueNames") or ()),
        *(status.get(key) for key in _GROVE_STATUS_READ),
        verdicts,
    )


# Grove makes these, so their creation is news to the graph (its status said "resource not found");
# after that only what readiness and scaling read.
GROVE_OBJECT_CHANGED: Final = Funcs(
    on_update=lambda old, new: _what_grove_readiness_reads(old) != _what_grove_readiness_reads(new)
)


def graph_of_grove_object(obj: Obj) -> list[str]:
    """The graph a PodClique or scaling group serves: the graph-name label Grove copies from our
    cliques, else its PodCliqueSet (named after the graph) as controller owner or `part-of` label."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    if not namespace:
        return []
    labels = meta.get("labels") or {}
    name = labels.get(consts.LABEL_GRAPH_DEPLOYMENT_NAME)
    if not name:
        for ref in meta.get("ownerReferences") or ():
            if ref.get("kind") == POD_CLIQUE_SET.kind and ref.get("controller"):
                name = ref.get("name")
    name = name or labels.get("app.kubernetes.io/part-of")
    return [f"{namespace}/{name}"] if name else []


def _grove_made(resource: Resource) -> Kind:
    return Kind(resource, GROVE_OBJECT_CHANGED, owned=False, mapper=graph_of_grove_object)


# --- the table ----------------------------------------------------------------------------------------

POD_GROUP: Final = Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup")
INFERENCE_POOL: Final = Resource("inference.networking.k8s.io", "v1", "inferencepools", "InferencePool")
# Dynamic Resource Allocation (built in since Kubernetes 1.34 as v1): the GPU Memory Service's claims.
RESOURCE_CLAIM_TEMPLATE: Final = Resource(
    "resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"
)
# KAI: Grove cliques get its scheduler and queue label when served (internal/dynamo/grove/podcliqueset.py).
KAI_QUEUE: Final = Resource("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False)

CLUSTER_TOPOLOGY_BINDING: Final = Resource(
    "grove.io", "v1alpha1", "clustertopologybindings", "ClusterTopologyBinding", namespaced=False
)

OPTIONAL_APIS: Final[tuple[OptionalApi, ...]] = (
    OptionalApi(
        capability=lambda c: c.lws,
        probe=LEADER_WORKER_SET,
        owner=Owner.COMPONENT,
        # Its status drives the component's readiness.
        kinds=(Kind(LEADER_WORKER_SET, CHILD_STATUS_CHANGED, shape=WORKLOAD_SHAPE),),
        render=RenderFlag(
            "--with-lws", "render multinode services as LeaderWorkerSets (as if LWS were installed)"
        ),
        rbac=(Rule(LEADER_WORKER_SET.group, (LEADER_WORKER_SET.plural,), WRITE),),
        addon="lws",
    ),
    OptionalApi(
        capability=lambda c: c.volcano,
        probe=POD_GROUP,
        owner=Owner.COMPONENT,
        used=lambda c: c.lws and c.volcano,  # PodGroups gang-schedule LeaderWorkerSets only
        kinds=(Kind(POD_GROUP, CHILD_CONTENT_CHANGED, shape=metadata_only),),
        render=RenderFlag(
            "--with-volcano", "as if Volcano were installed (gang scheduling of LeaderWorkerSets)"
        ),
        rbac=(Rule(POD_GROUP.group, (POD_GROUP.plural,), WRITE),),
    ),
    OptionalApi(
        capability=lambda c: c.grove,
        probe=POD_CLIQUE_SET,
        owner=Owner.GRAPH,
        # The PodCliqueSet is owned (its status carries Grove's verdicts); the PodCliques and scaling
        # groups Grove makes from it are read for readiness and mapped back to their graph.
        kinds=(
            Kind(POD_CLIQUE_SET, CHILD_STATUS_CHANGED),
            _grove_made(POD_CLIQUE),
            _grove_made(POD_CLIQUE_SCALING_GROUP),
        ),
        render=RenderFlag(
            "--with-grove", "render graphs as Grove PodCliqueSets (as if Grove were installed and enabled)"
        ),
        rbac=(
            Rule(
                "grove.io",
                (POD_CLIQUE_SET.plural,),
                WRITE,
                why="Grove (--enable-grove): the graph's PodCliqueSet; the PodCliques and scaling groups"
                " Grove makes from it are read for status and resized through their scale subresource.",
            ),
            Rule("grove.io", (POD_CLIQUE.plural, POD_CLIQUE_SCALING_GROUP.plural), READ),
            Rule(
                "grove.io",
                (f"{POD_CLIQUE.plural}/scale", f"{POD_CLIQUE_SCALING_GROUP.plural}/scale"),
                ("get", "update", "patch"),
            ),
        ),
        addon="grove",
    ),
    OptionalApi(
        capability=lambda c: c.kai_scheduler,
        probe=KAI_QUEUE,  # only detected: nothing of KAI's is read or written
        render=RenderFlag("--with-kai-scheduler", "as if the KAI scheduler were installed"),
    ),
    OptionalApi(
        capability=lambda c: c.istio,
        probe=VIRTUAL_SERVICE,
        owner=Owner.COMPONENT,
        kinds=(Kind(VIRTUAL_SERVICE, CHILD_CONTENT_CHANGED, shape=metadata_only),),
        render=RenderFlag(
            "--with-istio", "as if Istio were installed (VirtualServices where ingress asks for one)"
        ),
        rbac=(Rule(VIRTUAL_SERVICE.group, (VIRTUAL_SERVICE.plural,), WRITE),),
    ),
    OptionalApi(
        capability=lambda c: c.gateway_inference_extension,
        probe=INFERENCE_POOL,
        owner=Owner.GRAPH,
        kinds=(Kind(INFERENCE_POOL, CHILD_CONTENT_CHANGED),),
        render=RenderFlag(
            "--with-inference-extension",
            "as if the Gateway API Inference Extension were installed (InferencePools for EPP services)",
        ),
        rbac=(Rule(INFERENCE_POOL.group, (INFERENCE_POOL.plural,), WRITE),),
    ),
    OptionalApi(
        capability=lambda c: c.dra,
        probe=RESOURCE_CLAIM_TEMPLATE,
        builtin=True,
        owner=Owner.COMPONENT,
        kinds=(Kind(RESOURCE_CLAIM_TEMPLATE, CHILD_CONTENT_CHANGED),),
        # No render flag: a built-in API, `render` assumes it served (internal/dynamo/render/offline.py).
        rbac=(Rule(RESOURCE_CLAIM_TEMPLATE.group, (RESOURCE_CLAIM_TEMPLATE.plural,), WRITE),),
    ),
    OptionalApi(
        capability=lambda c: c.grove_cluster_topology,
        probe=CLUSTER_TOPOLOGY_BINDING,  # detected and readable; nothing watches it yet
        rbac=(
            Rule(
                CLUSTER_TOPOLOGY_BINDING.group,
                (CLUSTER_TOPOLOGY_BINDING.plural,),
                READ,
                why="Grove's cluster topologies, named by spec.topologyConstraint.clusterTopologyName:"
                " read only.",
            ),
        ),
    ),
)


def _check_one_entry_per_field() -> None:
    names = [api.name for api in OPTIONAL_APIS]
    fields = [f.name for f in dataclasses.fields(Capabilities)]
    if sorted(names) != sorted(fields):
        raise TypeError(f"Capabilities fields {fields} and optional API entries {names} must pair up")


_check_one_entry_per_field()  # at import: a field without an entry (or two entries for one) never runs

BY_NAME: Final = {api.name: api for api in OPTIONAL_APIS}


def _check_needs() -> None:
    """Generation names the API a feature needs (internal/dynamo/common/needs.py) for its error
    message; the entry of the capability the need reads is the authority on what that API is."""
    for need in NEEDS:
        probe = BY_NAME[_field_of(need.capability)].probe
        if need.api != f"{probe.api_version} {probe.kind}":
            raise TypeError(f"a need names {need.api!r}, its entry's API is {probe.api_version} {probe.kind}")


_check_needs()  # at import, like _check_one_entry_per_field
# The APIs a CustomResourceDefinition makes served (what `OptionalApiWatch` follows).
CRD_APIS: Final = tuple(api for api in OPTIONAL_APIS if not api.builtin)
CRD_NAMES: Final = frozenset(api.crd_name for api in CRD_APIS)
RENDER_APIS: Final = tuple(api for api in OPTIONAL_APIS if api.render is not None)
# Kinds the reconcilers write: generated objects of these kinds are theirs to apply (internal/kinds.py).
OWNED_KINDS: Final = tuple(k.resource for api in OPTIONAL_APIS for k in api.kinds if k.owned)
CACHE_SHAPES: Final = {k.resource: k.shape for api in OPTIONAL_APIS for k in api.kinds if k.shape}


def capabilities(served: Iterable[OptionalApi]) -> Capabilities:
    """The value with exactly `served` switched on."""
    return dataclasses.replace(Capabilities(), **{api.name: True for api in served})


def with_answers(base: Capabilities, answers: Iterable[tuple[OptionalApi, bool]]) -> Capabilities:
    """`base` with each (API, served) applied."""
    return dataclasses.replace(base, **{api.name: served for api, served in answers})


def rbac_rules() -> list[Rule]:
    """Every rule the optional APIs need, in table order."""
    return [rule for api in OPTIONAL_APIS for rule in api.rbac]
