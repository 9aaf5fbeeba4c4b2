"""This operator's side of the comparison: what it would create for one example in one cluster shape.

It runs the reconcilers' own generation path without a cluster, in the order the controllers do:
admission (our CRD's validation, then its structural defaults) → graph reconciler (`missing_apis`,
`desired_graph_objects`, `desired_shared_objects`) → for each DCD the component reconciler
(`desired_component_objects`), with a `GenContext` built by `Settings.gen_context`
from the operator flags upstream's operator ran with. A graph that takes the Grove pathway (a new
graph, so `takes_grove` with no children) gets `desired_grove_objects` instead of DCDs. Nothing here
decides what an object looks like.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from dynamo_operator.api.conversion import convert, preserve
from dynamo_operator.context import Capabilities, settings_from
from dynamo_operator.flags import build_parser, options_from_args
from dynamo_operator.internal.consts import (
    ANNOTATION_WORKLOAD_PROVIDER,
    WORKLOAD_PROVIDER_COMPONENT,
    WORKLOAD_PROVIDER_GROVE,
)
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.dynamomodel.status import is_lora
from dynamo_operator.internal.dynamo.graph.generate import (
    desired_graph_objects,
    desired_shared_objects,
    missing_apis,
)
from dynamo_operator.internal.dynamo.graph.meta import (
    annotations_to_write,
    origin_version,
    with_origin_version,
)
from dynamo_operator.internal.dynamo.graph.mpisecret import desired_mpi_ssh_secrets
from dynamo_operator.internal.dynamo.graph.workernames import first_worker_generation
from dynamo_operator.internal.dynamo.grove.podcliqueset import (
    desired_grove_objects,
    takes_grove,
    worker_services,
)
from dynamo_operator.internal.dynamo.grove.workerhash import NO_HASH
from dynamo_operator.internal.dynamo.render.offline import parse_graph
from dynamo_operator.internal.dynamo.rollout.workerhash_v2 import worker_hash_v2
from dynamo_operator.internal.dynamo.rollout.workers import (
    ANNOTATION_V2,
    WorkerGeneration,
    hash_annotations_patch,
)
from dynamo_operator.internal.secrets.sshkeys import generate_rsa_key_pair

from compat.goldens import REPO_ROOT, SET_DF888F68, V1ALPHA1, V1BETA1, Example, GoldenSet

Obj = dict[str, Any]

# The goldens write the namespace as `<ns>`; generating straight into that name needs no substitution
# afterwards (generation never validates the namespace, it only copies it into names and env).
NAMESPACE = "<ns>"
DGD_KIND = "DynamoGraphDeployment"
DCD_KIND = "DynamoComponentDeployment"
MODEL_KIND = "DynamoModel"
FINALIZER = "nvidia.com/finalizer"


@dataclass(frozen=True, slots=True)
class Shape:
    """A cluster shape of the goldens: which optional APIs were installed (goldens' README)."""

    name: str
    capabilities: Capabilities
    describe: str
    flags: tuple[str, ...] = ()  # operator flags upstream's settings for this shape map to


SHAPES: tuple[Shape, ...] = (
    Shape("golden", Capabilities(), "no optional API"),
    Shape(
        "golden-lws-gaie",
        Capabilities(lws=True, volcano=True, gateway_inference_extension=True),
        "LeaderWorkerSet + Volcano + inference extension",
    ),
    Shape(
        "golden-grove",
        Capabilities(grove=True, gateway_inference_extension=True),
        "Grove + inference extension",
        ("--enable-grove=true",),
    ),
)
SHAPE_NAMES: tuple[str, ...] = tuple(s.name for s in SHAPES)

# The operator settings upstream ran with (goldens' README), as this operator's own flags; the
# version is the set's (`GoldenSet.operator_version`).
OPERATOR_FLAGS: tuple[str, ...] = (
    "--planner-cluster-role-name=dynamo-platform-dynamo-operator-planner",
    "--dgdr-profiling-cluster-role-name=dynamo-platform-dynamo-operator-dgdr-profiling",
    "--epp-cluster-role-name=dynamo-platform-dynamo-operator-epp",
    "--mpi-run-ssh-secret-name=mpi-run-ssh-secret",
    "--mpi-run-ssh-secret-namespace=dynamo-system",
    "--nats-address=nats://dynamo-platform-nats.dynamo-system.svc.cluster.local:4222",
    "--etcd-address=dynamo-platform-etcd.dynamo-system.svc.cluster.local:2379",
)
# Settings upstream ran with that this operator has no flag for yet: left unset here, never faked,
# so every difference they cause shows up (and is listed as a known gap).
SETTINGS_WITHOUT_FLAG: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Generated:
    """Every object this operator would hold for one example, keyed `Kind/name`, plus what stopped it."""

    objects: dict[str, Obj] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, obj: Obj) -> None:
        """Keep `obj`; two desired objects with one key would fight over it, so say so."""
        key = f"{obj['kind']}/{obj['metadata']['name']}"
        if key in self.objects:
            self.notes.append(f"{key}: generated twice (the later one is compared)")
        self.objects[key] = obj


def gen_context(shape: Shape, golden_set: GoldenSet = SET_DF888F68) -> GenContext:
    """The GenContext the controllers would use in `<ns>` with upstream's settings in `shape`."""
    flags = [
        f"--operator-version={golden_set.operator_version}",
        *OPERATOR_FLAGS,
        *golden_set.operator_flags,
        *shape.flags,
    ]
    options = options_from_args(build_parser().parse_args(flags), environ={})
    ctx = settings_from(options, shape.capabilities).gen_context(NAMESPACE)
    # DCDs are written in the version the set's operator stored them in (the operator's wiring sets
    # it from the CRD it finds).
    return dataclasses.replace(ctx, dcd_api_version=golden_set.api_version)


# libyaml when present: the CRDs are large (seconds to parse in pure Python).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _crd_schema(plural: str, api_version: str = V1ALPHA1) -> Obj:
    """Our committed CRD's schema of `api_version` (what `make install` gives the API server): the
    API server defaults an object by the schema of the version it was written in."""
    crd = yaml.load(
        (REPO_ROOT / "config" / "crd" / "bases" / f"nvidia.com_{plural}.yaml").read_text(), _LOADER
    )
    wanted = api_version.rsplit("/", 1)[-1]
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == wanted]
    schema = version["schema"]["openAPIV3Schema"]
    assert isinstance(schema, dict)
    return schema


def apply_schema_defaults(value: Any, schema: Obj) -> Any:
    """What the API server stores: `default`s of our structural schema filled in where a field is
    absent and its parent present (the reconcilers read the stored object, not the file)."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name, sub in props.items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
        for name, item in value.items():
            sub = props.get(name) or (schema.get("additionalProperties") or None)
            if isinstance(sub, dict):
                apply_schema_defaults(item, sub)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_schema_defaults(item, schema["items"])
    return value


def _stored(obj: Obj, plural: str) -> Obj:
    """`obj` as the API server would return it: defaulted, in `<ns>`, with a uid to be owned by.
    A graph read from a v1beta1 example has its v1beta1 defaults already (`_as_read`): the API server
    defaults the version it decodes from storage, so the v1alpha1 schema's are not added to it."""
    out: Obj = copy.deepcopy(obj)
    annotations = (out.get("metadata") or {}).get("annotations") or {}
    if preserve.DGD_SPEC not in annotations:
        apply_schema_defaults(out, _crd_schema(plural, str(out.get("apiVersion") or V1ALPHA1)))
    meta = out.setdefault("metadata", {})
    meta["namespace"] = NAMESPACE
    meta["uid"] = f"uid-{out['kind']}-{meta['name']}"
    return out


def _graph(doc: Obj, ctx: GenContext, out: Generated, *, deployed_in: str) -> None:
    name = (doc.get("metadata") or {}).get("name")
    try:
        parse_graph(yaml.safe_dump(doc), strict=True)  # the schema's verdict, as `render` and kubectl get it
    except ValueError as err:
        out.notes.append(f"{DGD_KIND}/{name}: refused at admission: {err}")
        return
    dgd = _stored(doc, "dynamographdeployments")
    out.add(dgd)
    # The graph reconciler's first look at a new graph (no children yet): its origin stamp, and
    # generation sees the graph carrying it.
    origin = origin_version(dgd, [], ctx.operator_version)
    graph = with_origin_version(dgd, origin)
    if takes_grove(graph, ctx, has_dcds=False, has_pod_clique_set=False):
        _grove_graph(dgd, graph, ctx, origin, out, deployed_in=deployed_in)
        return
    try:
        missing = missing_apis(graph, ctx)
        # The hash the graph reconciler names a new graph's workers with (one decision, workernames.py).
        workers = first_worker_generation(graph, deployed_in)
        desired = desired_graph_objects(graph, ctx, worker_hash=workers.active)
        shared = _namespace_objects(graph, ctx)
    except GenerationError as err:
        dgd["status"] = {"state": "failed"}
        _annotate(dgd, origin=origin, provider=WORKLOAD_PROVIDER_COMPONENT)
        out.notes.append(f"{DGD_KIND}/{name}: failed: {err}")
        return
    if missing:  # the graph reconciler applies nothing then (half a graph helps nobody)
        dgd["status"] = {"state": "failed"}
        _annotate(dgd, origin=origin, provider=WORKLOAD_PROVIDER_COMPONENT)
        out.notes.append(f"{DGD_KIND}/{name}: failed: " + "; ".join(str(e) for e in missing))
        return
    # Applied: with no older workers the new generation serves alone, and the graph records it.
    _annotate(dgd, origin=origin, provider=WORKLOAD_PROVIDER_COMPONENT)
    _record_workers(dgd, workers)
    for desired_obj in [*shared, *desired]:
        # A DCD reaches its reconciler as stored: with our CRD's defaults and a uid to own children.
        obj = (
            _stored(desired_obj, "dynamocomponentdeployments")
            if desired_obj["kind"] == DCD_KIND
            else desired_obj
        )
        out.add(obj)
        if obj["kind"] != DCD_KIND:
            continue
        try:
            # What the DCD reconciler reads: the DCD written as v1beta1 (the stored version) and read
            # back as v1alpha1, its v1beta1-only fields in its reserved annotation.
            children = desired_component_objects(dict(convert(convert(obj, V1BETA1), V1ALPHA1)), ctx)
        except GenerationError as err:  # MissingAPIError included: the DCD fails, writes nothing
            out.notes.append(f"{DCD_KIND}/{obj['metadata']['name']}: failed: {err}")
            continue
        for child in children:
            out.add(child)


def _namespace_objects(graph: Obj, ctx: GenContext) -> list[Obj]:
    """What both pathways share in the namespace: the planner/EPP ServiceAccounts and bindings, and
    what the DGD reconciler's mpi_ssh_secret.py creates for a multinode graph (a copy of the key pair
    kept in --mpi-run-ssh-secret-namespace, drawn the way the operator draws it)."""
    return desired_shared_objects(graph, ctx) + desired_mpi_ssh_secrets(
        graph, NAMESPACE, ctx.mpi_ssh_secret_name, generate_rsa_key_pair
    )


def _grove_graph(
    dgd: Obj, graph: Obj, ctx: GenContext, origin: str | None, out: Generated, *, deployed_in: str
) -> None:
    """The graph reconciler's Grove pathway (controllers/dynamographdeployment/grove.py): the
    PodCliqueSet and Services, no DCDs; worker cliques carry the v2 worker hash, which the graph
    records once its objects are written. The hash is computed for the namespace upstream's run
    deployed the example in (the hash covers it), the objects go to `<ns>` like every other."""
    name = dgd["metadata"]["name"]
    try:
        missing = missing_apis(graph, ctx, grove=True)
        v2 = worker_hash_v2(graph, deployed_in)
        desired = desired_grove_objects(graph, ctx, worker_hash=v2 if worker_services(graph) else NO_HASH)
        shared = _namespace_objects(graph, ctx)
    except GenerationError as err:
        dgd["status"] = {"state": "failed"}
        _annotate(dgd, origin=origin, provider=WORKLOAD_PROVIDER_GROVE)
        out.notes.append(f"{DGD_KIND}/{name}: failed: {err}")
        return
    _annotate(dgd, origin=origin, provider=WORKLOAD_PROVIDER_GROVE)
    if missing:
        dgd["status"] = {"state": "failed"}
        out.notes.append(f"{DGD_KIND}/{name}: failed: " + "; ".join(str(e) for e in missing))
        return
    _annotate(dgd, origin=None, provider=None, record={ANNOTATION_V2: v2})
    for obj in [*shared, *desired]:
        out.add(obj)


def _annotate(
    dgd: Obj, *, origin: str | None, provider: str | None, record: Mapping[str, str] | None = None
) -> None:
    """What the graph reconciler's metadata patch writes on the graph: the origin stamp, the workload
    provider it took, and what its Grove pathway records."""
    meta = dgd["metadata"]
    current = meta.get("annotations") or {}
    patch = annotations_to_write(current, origin=origin, serving_hash=None)
    patch.update(record or {})
    if provider:
        patch[ANNOTATION_WORKLOAD_PROVIDER] = provider
    if patch:
        meta["annotations"] = {**current, **patch}


def _record_workers(dgd: Obj, workers: WorkerGeneration) -> None:
    """The worker hash annotations the graph reconciler writes once `workers` serve alone."""
    meta = dgd["metadata"]
    current = meta.get("annotations") or {}
    patch = hash_annotations_patch(current, workers, settled=True)
    kept = {k: v for k, v in current.items() if k not in patch}
    meta["annotations"] = {**kept, **{k: v for k, v in patch.items() if v is not None}}


def _model(doc: Obj, out: Generated) -> None:
    """A DynamoModel is input; its reconciler adds only the LoRA finalizer (the rest is pods' I/O)."""
    model = copy.deepcopy(doc)
    if is_lora(model):
        model.setdefault("metadata", {}).setdefault("finalizers", []).append(FINALIZER)
    out.add(model)


def generate(example: Example, shape: Shape) -> Generated:
    """Everything this operator would hold after `kubectl apply -f <example>` in `shape`.

    Other kinds in an example file (ConfigMaps, PVCs, ResourceClaimTemplates) are the user's own
    objects; upstream's dumps leave them out too, so they are applied here as nothing.
    """
    golden_set = example.golden_set
    ctx = gen_context(shape, golden_set)
    out = Generated()
    for doc in yaml.load_all(example.yaml_path.read_text(), _LOADER):
        if not isinstance(doc, dict):
            continue
        if doc.get("kind") == DGD_KIND:
            _graph(_as_read(doc, out), ctx, out, deployed_in=deployed_namespace(example))
        elif doc.get("kind") == MODEL_KIND:
            _model(doc, out)
    if golden_set.api_version != V1ALPHA1:
        out.objects = {key: _as_stored(obj, golden_set.api_version) for key, obj in out.objects.items()}
    return out


def deployed_namespace(example: Example) -> str:
    """The namespace upstream's run applied `example` in: `ux<N>`, N its 1-based place among the set's
    example files in name order (both goldens' READMEs, "Procedure"). The goldens write it `<ns>`
    everywhere but inside hashes: the v2 worker hash is taken over the worker pods' labels, one of
    which is the Dynamo namespace made of it. So a graph's worker hash is computed for the namespace
    it was deployed in, and everything else is generated into `<ns>`."""
    files = sorted(example.yaml_path.parent.glob("*.yaml"))
    return f"ux{files.index(example.yaml_path) + 1}"


def _as_read(doc: Obj, out: Generated) -> Obj:
    """A graph as generation reads it (v1alpha1): a v1beta1 example is converted the way the
    conversion webhook converts it (the reserved annotations carry what v1alpha1 cannot hold)."""
    if doc.get("apiVersion") == V1ALPHA1:
        return doc
    try:
        defaulted = apply_schema_defaults(copy.deepcopy(doc), _crd_schema("dynamographdeployments", V1BETA1))
        return dict(convert(defaulted, V1ALPHA1))
    except ValueError as err:
        out.notes.append(f"{DGD_KIND}/{(doc.get('metadata') or {}).get('name')}: not convertible: {err}")
        return doc


def _as_stored(obj: Obj, api_version: str) -> Obj:
    """Our DGDs and DCDs in the version the goldens were read in (upstream stores v1beta1)."""
    if obj.get("kind") not in (DGD_KIND, DCD_KIND) or obj.get("apiVersion") == api_version:
        return obj
    return dict(convert(obj, api_version))
