"""Worker hash v2: the hash upstream's operator (>= 1.4) names worker generations with, byte for byte.

Where v1 (workerhash.py) hashes the graph's worker *service specs*, v2 hashes the worker *DCDs* the
graph generates, in their v1beta1 shape: per worker component, the labels and annotations its pods
would get, the runtime version its main image resolves to (only from 1.5.0 on: older runtimes gate
nothing on it, and hashing them would have rolled every 1.4 graph), and the DCD spec without the
fields that never reach a pod (replicas, minAvailable, scalingAdapter, the raw version override). The
worker hash itself is a fixed placeholder while hashing, so the value does not depend on itself.

Why rebuild upstream's generated DCD here instead of hashing ours: the DCDs we generate are
v1alpha1 (labels and annotations live in `spec.labels`/`spec.annotations`), upstream's are generated
v1beta1 (pod metadata in `podTemplate.metadata`); the same pods, different bytes. So the graph is
read as v1beta1, the form the operator reads it in (a v1alpha1 one read offline is converted up by
api.conversion, the conversion the webhook serves), and each worker component
is turned into the DCD upstream's generator would write, then encoded as Go's encoding/json writes
upstream's typed `workerTemplate` (gojson.py; the v1beta1 struct layout below, from upstream's
api/v1beta1 at 2a6da14c). The namespace matters: the Dynamo namespace label is part of the input.

Not reproduced (graphs using them are refused elsewhere, FieldNotImplemented): the KV-transfer
topology annotations and env. Not reproduced either: a `DYN_DEPLOYMENT_CONFIG` env on the main
container (upstream may rewrite resources from it); no example uses it.
"""

from __future__ import annotations

import collections
import copy
import functools
import hashlib
import re
from collections.abc import Mapping
from typing import Any, cast

from dynamo_operator.api.conversion import V1BETA1, ConversionError, convert
from dynamo_operator.api.conversion.preserve import DGD_SPEC
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.hashing import digest
from dynamo_operator.internal.dynamo.common.inputs import Graph, ServiceSpec, StoredGraph
from dynamo_operator.internal.dynamo.common.objects import Obj
from dynamo_operator.internal.dynamo.component.backends import detect_backend
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.graph.stored_dcd import carrier_annotations
from dynamo_operator.internal.dynamo.rollout import gojson
from dynamo_operator.internal.dynamo.rollout.gojson import Field
from dynamo_operator.internal.dynamo.rollout.quantity import QuantityError

PLACEHOLDER = "worker-hash-placeholder"
"""The worker hash written into the DCDs while hashing them (upstream's constant)."""

ANNOTATION_CURRENT_WORKER_HASH_V2 = "nvidia.com/current-worker-hash-v2"
LABEL_COMPONENT_CLASS = "nvidia.com/dynamo-component-class"
COMPONENT_CLASS_WORKER = "worker"
MIN_HASHED_RUNTIME = (1, 5, 0)

# DGD metadata annotations upstream copies into each component's pod template (component wins).
# Not the same list as ours (c.PROPAGATED_DGD_ANNOTATIONS): upstream does not copy the image pull
# secret opt-out here.
_PROPAGATED = (
    c.ANNOTATION_ENABLE_METRICS,
    c.ANNOTATION_DISCOVERY_BACKEND,
    c.ANNOTATION_KUBE_DISCOVERY_MODE,
    c.ANNOTATION_ORIGIN_VERSION,
    c.ANNOTATION_VLLM_EXECUTOR_BACKEND,
)
# Labels of the DCD object that win over anything the pod template or the alpha view says.
_OBJECT_LABELS_WIN = (
    c.LABEL_COMPONENT,
    c.LABEL_DYNAMO_NAMESPACE,
    c.LABEL_GRAPH_DEPLOYMENT_NAME,
    c.LABEL_WORKER_HASH,
    LABEL_COMPONENT_CLASS,
)
# The fields of the DCD spec that patch the live DCD instead of starting a new generation.
_NOT_HASHED = ("replicas", "minAvailable", "scalingAdapter", "runtimeVersionOverride")

_S, _B, _I, _Q = "string", "bool", "int", "quantity"


_opt, _req, _ptr = gojson.optional, gojson.required, gojson.pointer_to


_POD_TEMPLATE = "core/v1.PodTemplateSpec"
_TEMPLATE = "v1beta1.workerTemplate"
# upstream api/v1beta1 (DynamoComponentDeploymentSpec with its shared spec inlined), declaration order.
V1BETA1_STRUCTS: dict[str, tuple[Field, ...]] = {
    _TEMPLATE: (
        _opt("labels", {"map": _S}),
        _opt("annotations", {"map": _S}),
        _opt("runtimeVersion", _S),
        _req("spec", {"struct": "v1beta1.DynamoComponentDeploymentSpec"}),
    ),
    "v1beta1.DynamoComponentDeploymentSpec": (
        _opt("backendFramework", _S),
        _opt("providerOverride", _ptr("v1beta1.ProviderOverride")),
        _req("name", _S),
        _opt("type", _S),
        _opt("runtimeVersionOverride", _S),
        _opt("globalDynamoNamespace", _B),
        _opt("podTemplate", _ptr(_POD_TEMPLATE)),
        _opt("replicas", {"ptr": _I}),
        _opt("minAvailable", {"ptr": _I}),
        _opt("multinode", _ptr("v1beta1.MultinodeSpec")),
        _opt("sharedMemorySize", {"ptr": _Q}),
        _opt("modelRef", _ptr("v1beta1.ModelReference")),
        _opt("scalingAdapter", _ptr("v1beta1.ScalingAdapter")),
        _opt("eppConfig", _ptr("v1beta1.EPPConfig")),
        _opt("frontendSidecar", {"ptr": _S}),
        _opt("compilationCache", _ptr("v1beta1.CompilationCacheConfig")),
        _opt("topologyConstraint", _ptr("v1beta1.TopologyConstraint")),
        _opt("experimental", _ptr("v1beta1.ExperimentalSpec")),
    ),
    # apiextensions JSON marshals its raw bytes.
    "v1beta1.ProviderOverride": (_req("apiVersion", _S), _opt("target", _S), _req("value", "raw")),
    "v1beta1.MultinodeRoleSpec": (_opt("providerOverride", _ptr("v1beta1.ProviderOverride")),),
    "v1beta1.MultinodeSpec": (
        _req("nodeCount", _I),
        _opt("leader", _ptr("v1beta1.MultinodeRoleSpec")),
        _opt("worker", _ptr("v1beta1.MultinodeRoleSpec")),
    ),
    "v1beta1.ModelReference": (_req("name", _S), _opt("revision", _S)),
    "v1beta1.ScalingAdapter": (),
    # The EPP's inline config is a typed struct upstream; only EPP components carry it, never workers.
    "v1beta1.EPPConfig": (
        _opt("configMapRef", _ptr("core/v1.ConfigMapKeySelector")),
        _opt("config", {"ptr": "raw"}),
    ),
    "v1beta1.CompilationCacheConfig": (_req("pvcName", _S), _opt("mountPath", _S)),
    "v1beta1.TopologyConstraint": (_req("packDomain", _S),),
    "v1beta1.ExperimentalSpec": (
        _opt("gpuMemoryService", _ptr("v1beta1.GPUMemoryServiceSpec")),
        _opt("failover", _ptr("v1beta1.FailoverSpec")),
        _opt("grove", _ptr("v1beta1.GroveSpec")),
        _opt("checkpoint", _ptr("v1beta1.ComponentCheckpointConfig")),
    ),
    "v1beta1.GPUMemoryServiceSpec": (
        _opt("mode", _S),
        _opt("deviceClassName", _S),
        _opt("extraClientContainers", {"slice": _S}),
        _opt("extraClientPods", {"slice": {"struct": "v1beta1.GMSClientPodSpec"}}),
    ),
    "v1beta1.GMSClientPodSpec": (_req("name", _S), _req("podTemplate", {"struct": _POD_TEMPLATE})),
    "v1beta1.FailoverSpec": (_opt("mode", _S), _opt("numShadows", _I)),
    "v1beta1.GroveSpec": (_opt("forceScalingGroup", _B),),
    "v1beta1.ComponentCheckpointConfig": (
        _req("enabled", _B),
        _opt("mode", _S),
        _opt("startupPolicy", _S),
        _opt("deletionPolicy", _S),
        _opt("checkpointRef", {"ptr": _S}),
        _opt("identity", _ptr("v1beta1.DynamoCheckpointIdentity")),
        _opt("targetContainerName", _S),
        _opt("job", _ptr("v1beta1.ComponentCheckpointJobConfig")),
    ),
    "v1beta1.DynamoCheckpointIdentity": (
        _req("model", _S),
        _req("backendFramework", _S),
        _opt("dynamoVersion", _S),
        _opt("tensorParallelSize", _I),
        _opt("pipelineParallelSize", _I),
        _opt("dtype", _S),
        _opt("maxModelLen", _I),
        _opt("extraParameters", {"map": _S}),
    ),
    "v1beta1.ComponentCheckpointJobConfig": (
        _opt("gmsClientContainers", {"slice": _S}),
        _opt("podTemplate", _ptr(_POD_TEMPLATE)),
    ),
}


@functools.cache
def structs() -> dict[str, tuple[Field, ...]]:
    """The v1beta1 layout plus the Kubernetes core types it embeds.

    Two things the core table (generated for v1's hash) does not say: a pod template is
    `{metadata, spec}`, both struct values and so always written; and ObjectMeta's
    `creationTimestamp` is `omitzero` (a zero time is left out, not written null), which a pointer
    to a time encodes the same way for the values a generated DCD can hold (absent)."""
    core = gojson.core_v1_structs()
    object_meta = tuple(
        ("creationTimestamp", True, {"ptr": "time"}) if f[0] == "creationTimestamp" else f
        for f in core["meta/v1.ObjectMeta"]
    )
    pod_template = (
        _opt("metadata", {"struct": "meta/v1.ObjectMeta"}),
        _opt("spec", {"struct": "core/v1.PodSpec"}),
    )
    return {**core, "meta/v1.ObjectMeta": object_meta, _POD_TEMPLATE: pod_template, **V1BETA1_STRUCTS}


# --- the runtime version ----------------------------------------------------------------------------

# Semantic versioning 2.0.0, as the strict parser upstream uses accepts it (no "v", no missing parts).
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$"
)


def _image_tag(image: str) -> str:
    ref = image.strip().split("@", 1)[0]
    last_slash, last_colon = ref.rfind("/"), ref.rfind(":")
    return ref[last_colon + 1 :] if last_colon > last_slash else ""


# Upstream parses each part into a uint64: a larger number is no version at all (nothing hashed).
_MAX_PART = 2**64 - 1


def _version(text: str) -> tuple[int, int, int] | None:
    match = _SEMVER.match(text)
    if match is None:
        return None
    parts = int(match.group(1)), int(match.group(2)), int(match.group(3))
    return parts if max(parts) <= _MAX_PART else None


def runtime_version(image: str, override: str) -> str:
    """The runtime version hashed for a component: the override, else its image tag, as "X.Y.Z"
    (prerelease and build dropped); "" when the version is older than 1.5.0 or does not parse. An
    override that does not parse is not replaced by the image's version: upstream resolves the
    override alone once one is set."""
    if override:
        version = _version(override)
    else:
        tag = _image_tag(image).strip()
        version = _version(tag[1:] if tag[:1] in ("v", "V") else tag)
    if version is None or version < MIN_HASHED_RUNTIME:
        return ""
    return "{}.{}.{}".format(*version)


# --- the worker DCDs upstream generates --------------------------------------------------------------


def _main_container(spec: Mapping[str, Any]) -> Obj | None:
    template = spec.get("podTemplate") or {}
    for container in (template.get("spec") or {}).get("containers") or ():
        if isinstance(container, dict) and container.get("name") == c.COMPONENT_MAIN:
            return container
    return None


def _ensure_pod_template(spec: Obj) -> Obj:
    template: Obj = spec.get("podTemplate") or {}
    spec["podTemplate"] = template
    meta = template.setdefault("metadata", {})
    meta["labels"] = meta.get("labels") or {}
    meta["annotations"] = meta.get("annotations") or {}
    template.setdefault("spec", {})
    return template


def _ensure_main_container(template: Obj) -> Obj:
    pod: Obj = template["spec"]
    containers: list[Obj] = pod.get("containers") or []
    for container in containers:
        if container.get("name") == c.COMPONENT_MAIN:
            return container
    main: Obj = {"name": c.COMPONENT_MAIN}
    pod["containers"] = [main, *containers]
    return main


def _merge_envs(common: list[Obj], specific: list[Obj]) -> list[Obj]:
    """Graph-wide env under a component's own, one entry per name, sorted by name (upstream's order)."""
    by_name = {str(e.get("name")): e for e in common}
    by_name.update({str(e.get("name")): e for e in specific})
    return [by_name[name] for name in sorted(by_name)]


def _is_worker(component: Mapping[str, Any]) -> bool:
    return component.get("type") in c.WORKER_COMPONENT_TYPES


def _backend(graph: Obj) -> str:
    """The graph's backend as upstream's DCD generator writes it: the graph's own, else the one every
    worker's command line runs (workers that run none do not count)."""
    explicit = str((graph.get("spec") or {}).get("backendFramework") or "")
    if explicit:
        return explicit
    found = ""
    for component in (graph.get("spec") or {}).get("components") or ():
        if not _is_worker(component):
            continue
        backend = detect_backend(str(component.get("type")), None, _main_container(component) or {})
        if backend and found and backend != found:
            raise GenerationError(
                "spec.components", f"workers run several backend frameworks: {found} and {backend}"
            )
        found = backend or found
    return found


def _convert(obj: Mapping[str, Any], api_version: str) -> Obj:
    out: Obj = dict(convert(obj, api_version))
    return out


def generated_worker_dcd(
    graph: Obj,
    component: Mapping[str, Any],
    alpha_component: ServiceSpec | None,
    *,
    namespace: str,
    backend: str,
) -> Obj:
    """The v1beta1 DCD upstream's generator writes for one worker component (`alpha_component`: the
    same component in the graph's v1alpha1 view), the placeholder as hash."""
    meta = graph.get("metadata") or {}
    dgd_name = str(meta.get("name") or "")
    name = str(component.get("name") or "")
    spec: Obj = copy.deepcopy(dict(component))
    if backend:
        spec = {"backendFramework": backend, **spec}
    dyn_ns = naming.dynamo_namespace(
        namespace, dgd_name, global_namespace=bool(spec.get("globalDynamoNamespace"))
    )
    dcd_name = naming.dcd_name(dgd_name, name, PLACEHOLDER)
    annotations = carrier_annotations(alpha_component)
    template = _ensure_pod_template(spec)
    labels = {
        **template["metadata"]["labels"],
        c.LABEL_COMPONENT: name,
        c.LABEL_DYNAMO_NAMESPACE: dyn_ns,
        c.LABEL_GRAPH_DEPLOYMENT_NAME: dgd_name,
        c.LABEL_WORKER_HASH: PLACEHOLDER,
    }
    template["metadata"]["labels"][c.LABEL_WORKER_HASH] = PLACEHOLDER
    graph_spec = graph.get("spec") or {}
    if any(comp.get("type") == c.COMPONENT_EPP for comp in graph_spec.get("components") or ()):
        labels[LABEL_COMPONENT_CLASS] = COMPONENT_CLASS_WORKER
        template["metadata"]["labels"][LABEL_COMPONENT_CLASS] = COMPONENT_CLASS_WORKER
    if graph_spec.get("env"):
        main = _ensure_main_container(template)
        main["env"] = _merge_envs(list(graph_spec["env"]), list(main.get("env") or []))
    pod_annotations = template["metadata"]["annotations"]
    graph_annotations = meta.get("annotations") or {}
    for key in _PROPAGATED:
        if key in graph_annotations:
            pod_annotations.setdefault(key, graph_annotations[key])
    for key, value in (graph_spec.get("annotations") or {}).items():
        pod_annotations.setdefault(key, value)
    for key, value in (graph_spec.get("labels") or {}).items():
        template["metadata"]["labels"].setdefault(key, value)
    metadata: Obj = {"name": dcd_name, "namespace": namespace, "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": V1BETA1, "kind": c.KIND_DCD, "metadata": metadata, "spec": spec}


def hash_template(dcd: Obj, alpha: ServiceSpec) -> Obj:
    """Upstream's `workerTemplate` of a generated DCD: pod labels and annotations, runtime version,
    and the spec without the fields that do not start a new generation.

    Upstream takes the v1alpha1-only facts (labels, annotations, sub-component type, Dynamo
    namespace) from the DCD's v1alpha1 view, which its `nvidia.com/dcd-spec` payload restores from
    the graph's v1alpha1 component: they are read from that component (`alpha`) here, without
    encoding the payload and converting the DCD back to read it."""
    spec = dict(dcd.get("spec") or {})
    object_labels = (dcd.get("metadata") or {}).get("labels") or {}
    template_meta = ((spec.get("podTemplate") or {}).get("metadata")) or {}
    labels: dict[str, str] = {
        **object_labels,
        **(alpha.get("labels") or {}),
        **(template_meta.get("labels") or {}),
    }
    model = (spec.get("modelRef") or {}).get("name")
    if model:
        labels[c.LABEL_BASE_MODEL_HASH] = naming.base_model_hash(str(model))
    if alpha.get("subComponentType"):
        labels[c.LABEL_SUB_COMPONENT_TYPE] = str(alpha["subComponentType"])
    if spec.get("name"):
        labels[c.LABEL_COMPONENT] = str(spec["name"])
    if alpha.get("dynamoNamespace") is not None:
        labels[c.LABEL_DYNAMO_NAMESPACE] = str(alpha["dynamoNamespace"])
    for key in _OBJECT_LABELS_WIN:
        if object_labels.get(key):
            labels[key] = object_labels[key]
    annotations: dict[str, str] = {
        **(alpha.get("annotations") or {}),
        **(template_meta.get("annotations") or {}),
    }
    if model:
        annotations[c.ANNOTATION_BASE_MODEL] = str(model)
    annotations.pop(c.ANNOTATION_ORIGIN_VERSION, None)
    main = _main_container(spec) or {}
    version = runtime_version(str(main.get("image") or ""), str(spec.get("runtimeVersionOverride") or ""))
    for key in _NOT_HASHED:
        spec.pop(key, None)
    return {"labels": labels, "annotations": annotations, "runtimeVersion": version, "spec": spec}


def _both_forms(graph: Graph | StoredGraph) -> tuple[Obj, Graph]:
    """(`graph` in v1beta1, the same graph in v1alpha1). The graph reconciler hands the graph as
    stored (v1beta1): it is read as it is, and its v1alpha1-only facts come from its lowered form,
    which the reconciler has made already (graph/lowering.py remembers it). A v1alpha1 graph (a
    manifest read offline, the compat generator) is converted up, as the webhook converts it."""
    if graph.get("apiVersion") == V1BETA1:
        return cast(Obj, graph), lowered_graph(graph)
    alpha = cast(Graph, graph)
    try:
        return _convert(alpha, V1BETA1), alpha
    except ConversionError as err:
        raise GenerationError("spec", f"cannot be read as v1beta1: {err}") from err


def hash_input(graph: Graph | StoredGraph, namespace: str) -> str:
    """The JSON document v2 is taken over: {component name: workerTemplate} of the worker components
    of `graph` (either version, `_both_forms`)."""
    beta, alpha_graph = _both_forms(graph)
    backend = _backend(beta)
    alpha_services = (alpha_graph.get("spec") or {}).get("services") or {}
    table = structs()
    items: dict[str, str] = {}
    for component in (beta.get("spec") or {}).get("components") or ():
        if not isinstance(component, Mapping) or not _is_worker(component):
            continue
        name = str(component.get("name") or "")
        alpha_component = alpha_services.get(name)
        dcd = generated_worker_dcd(beta, component, alpha_component, namespace=namespace, backend=backend)
        try:
            template = hash_template(dcd, alpha_component or {})
            items[name] = gojson.encode(template, {"struct": _TEMPLATE}, table)
        except QuantityError as err:
            raise GenerationError(f"spec.components[{name}]", str(err)) from err
    return "{" + ",".join(f"{gojson.go_string(k)}:{items[k]}" for k in sorted(items)) + "}"


# Hashes already taken, by what they depend on (`_memo_key`). Taking one converts the graph to
# v1beta1 and encodes each worker's template as Go would (about 0.3 ms a graph), and a graph is hashed
# again on most reconciles while its spec stays the same. A key is 32 bytes and a hash 8 characters.
_MEMO: collections.OrderedDict[bytes, str] = collections.OrderedDict()
MEMO_SIZE = 8192


def _memo_key(graph: Graph | StoredGraph, namespace: str) -> bytes:
    """Everything `hash_input` reads: the namespace, the graph's version, name and spec, and of its
    annotations the ones upstream copies into pod templates and the spec payload (the operator's own
    records, such as the hash itself, change after the first hashing and must not make the next one
    miss)."""
    meta = graph.get("metadata") or {}
    annotations = meta.get("annotations") or {}
    read = {k: annotations[k] for k in (*_PROPAGATED, DGD_SPEC) if k in annotations}
    basis = [namespace, graph.get("apiVersion"), meta.get("name"), read, graph.get("spec") or {}]
    return bytes.fromhex(digest(basis))


def worker_hash_v2(graph: Graph | StoredGraph, namespace: str) -> str:
    """First 8 hex characters of sha256 over `hash_input`: the v2 worker hash of `graph` (as stored,
    v1beta1, or in v1alpha1) in `namespace`. Raises GenerationError when the graph cannot be
    generated (never remembered: the error is raised again each time)."""
    key = _memo_key(graph, namespace)
    found = _MEMO.get(key)
    if found is not None:
        _MEMO.move_to_end(key)
        return found
    value = hashlib.sha256(hash_input(graph, namespace).encode()).hexdigest()[:8]
    _MEMO[key] = value
    if len(_MEMO) > MEMO_SIZE:
        _MEMO.popitem(last=False)
    return value
