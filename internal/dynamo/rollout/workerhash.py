"""The worker hash: 8 hex characters naming one generation of a graph's worker pods.

Worker, prefill and decode DCDs are named `<dgd>-<lower(svc)>-<hash>` and labelled
`nvidia.com/dynamo-worker-hash=<hash>`; their pods get `DYN_NAMESPACE_WORKER_SUFFIX=<hash>`. Any change
of a worker spec that reaches its pods changes the hash, so a new set of worker DCDs replaces the old
one (see `workers.py`), while edits that do not reach pods (replicas, labels, annotations, scaling,
ingress, model reference, EPP config) keep the names.

The value is byte-identical to upstream's operator, so a graph it deployed keeps its DCDs and pods
when this operator takes over: sha256 over Go's encoding/json of the map {service → spec} of the
worker services, each spec with the fields above zeroed, as upstream's typed `SharedSpec` marshals
(field order and omitempty below, the embedded Kubernetes types from gojson.py). Parity also needs
the stored spec to be the same, i.e. the same CRD defaults.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import ServiceSpec
from dynamo_operator.internal.dynamo.rollout import gojson
from dynamo_operator.internal.dynamo.rollout.gojson import Field
from dynamo_operator.internal.dynamo.rollout.quantity import QuantityError

# Fields blanked before hashing (all are omitempty upstream): those that do not reach the pod
# template, and three v1alpha1 gained with v1beta1. Upstream blanks runtimeVersionOverride too;
# providerOverride and minAvailable are newer than the releases whose graphs carry this hash (new
# graphs are named by workerhash_v2), so no such graph has them and leaving them out keeps every
# hash as those releases computed it.
NOT_HASHED = frozenset(
    {
        "annotations",
        "labels",
        "serviceName",
        "componentType",
        "subComponentType",
        "dynamoNamespace",
        "replicas",
        "autoscaling",
        "scalingAdapter",
        "ingress",
        "modelRef",
        "eppConfig",
        "providerOverride",
        "runtimeVersionOverride",
        "minAvailable",
    }
)

_S, _B, _I, _Q = "string", "bool", "int", "quantity"


def _ptr(desc: Any) -> dict[str, Any]:
    return {"ptr": desc}


def _slice(desc: Any) -> dict[str, Any]:
    return {"slice": desc}


def _map(desc: Any) -> dict[str, Any]:
    return {"map": desc}


def _struct(name: str) -> dict[str, Any]:
    return {"struct": name}


def _core(name: str) -> dict[str, Any]:
    return _struct(f"core/v1.{name}")


def _opt(name: str, desc: Any) -> Field:
    return (name, True, desc)


def _req(name: str, desc: Any) -> Field:
    return (name, False, desc)


SHARED_SPEC = "dynamo/v1alpha1.SharedSpec"
# The Dynamo API types in upstream's declaration order (api/v1alpha1 of the Go operator). Fields in
# NOT_HASHED are listed for completeness; their types are never needed.
DYNAMO_STRUCTS: dict[str, tuple[Field, ...]] = {
    SHARED_SPEC: (
        _opt("providerOverride", _ptr(_struct("dynamo/v1alpha1.ProviderOverride"))),
        _opt("annotations", _map(_S)),
        _opt("labels", _map(_S)),
        _opt("serviceName", _S),
        _opt("componentType", _S),
        _opt("subComponentType", _S),
        _opt("runtimeVersionOverride", _S),
        _opt("dynamoNamespace", _ptr(_S)),
        _opt("globalDynamoNamespace", _B),
        _opt("resources", _ptr(_struct("dynamo/v1alpha1.Resources"))),
        _opt("autoscaling", _ptr(_struct("dynamo/v1alpha1.Autoscaling"))),
        _opt("envs", _slice(_core("EnvVar"))),
        _opt("envFromSecret", _ptr(_S)),
        _opt("volumeMounts", _slice(_struct("dynamo/v1alpha1.VolumeMount"))),
        _opt("ingress", _ptr(_struct("dynamo/v1alpha1.IngressSpec"))),
        _opt("modelRef", _ptr(_struct("dynamo/v1alpha1.ModelReference"))),
        _opt("sharedMemory", _ptr(_struct("dynamo/v1alpha1.SharedMemorySpec"))),
        _opt("extraPodMetadata", _ptr(_struct("dynamo/v1alpha1.ExtraPodMetadata"))),
        _opt("extraPodSpec", _ptr(_struct("dynamo/v1alpha1.ExtraPodSpec"))),
        _opt("livenessProbe", _ptr(_core("Probe"))),
        _opt("readinessProbe", _ptr(_core("Probe"))),
        _opt("replicas", _ptr(_I)),
        _opt("minAvailable", _ptr(_I)),
        _opt("multinode", _ptr(_struct("dynamo/v1alpha1.MultinodeSpec"))),
        _opt("scalingAdapter", _ptr(_struct("dynamo/v1alpha1.ScalingAdapter"))),
        _opt("eppConfig", _ptr(_struct("dynamo/v1alpha1.EPPConfig"))),
        _opt("frontendSidecar", _ptr(_struct("dynamo/v1alpha1.FrontendSidecarSpec"))),
        _opt("checkpoint", _ptr(_struct("dynamo/v1alpha1.ServiceCheckpointConfig"))),
        _opt("topologyConstraint", _ptr(_struct("dynamo/v1alpha1.TopologyConstraint"))),
        _opt("gpuMemoryService", _ptr(_struct("dynamo/v1alpha1.GPUMemoryServiceSpec"))),
        _opt("failover", _ptr(_struct("dynamo/v1alpha1.FailoverSpec"))),
    ),
    "dynamo/v1alpha1.Resources": (
        _opt("requests", _ptr(_struct("dynamo/v1alpha1.ResourceItem"))),
        _opt("limits", _ptr(_struct("dynamo/v1alpha1.ResourceItem"))),
        _opt("claims", _slice(_core("ResourceClaim"))),
    ),
    "dynamo/v1alpha1.ResourceItem": (
        _opt("cpu", _S),
        _opt("memory", _S),
        _opt("gpu", _S),
        _opt("gpuType", _S),
        _opt("custom", _map(_S)),
    ),
    "dynamo/v1alpha1.VolumeMount": (
        _opt("name", _S),
        _opt("mountPoint", _S),
        _opt("useAsCompilationCache", _B),
    ),
    # A struct value: `size` is written ("0") even when absent.
    "dynamo/v1alpha1.SharedMemorySpec": (_opt("disabled", _B), _opt("size", _Q)),
    "dynamo/v1alpha1.ExtraPodMetadata": (_opt("annotations", _map(_S)), _opt("labels", _map(_S))),
    "dynamo/v1alpha1.MultinodeSpec": (_req("nodeCount", _I),),
    "dynamo/v1alpha1.FrontendSidecarSpec": (
        _req("image", _S),
        _opt("args", _slice(_S)),
        _opt("envFromSecret", _ptr(_S)),
        _opt("envs", _slice(_core("EnvVar"))),
    ),
    "dynamo/v1alpha1.ServiceCheckpointConfig": (
        _opt("enabled", _B),
        _opt("mode", _S),
        _opt("checkpointRef", _ptr(_S)),
        _opt("identity", _ptr(_struct("dynamo/v1alpha1.DynamoCheckpointIdentity"))),
    ),
    "dynamo/v1alpha1.DynamoCheckpointIdentity": (
        _req("model", _S),
        _req("backendFramework", _S),
        _opt("dynamoVersion", _S),
        _opt("tensorParallelSize", _I),
        _opt("pipelineParallelSize", _I),
        _opt("dtype", _S),
        _opt("maxModelLen", _I),
        _opt("extraParameters", _map(_S)),
    ),
    "dynamo/v1alpha1.TopologyConstraint": (_req("packDomain", _S),),
    "dynamo/v1alpha1.GPUMemoryServiceSpec": (
        _req("enabled", _B),
        _opt("mode", _S),
        _opt("deviceClassName", _S),
    ),
    "dynamo/v1alpha1.FailoverSpec": (_req("enabled", _B), _opt("mode", _S), _opt("numShadows", _I)),
}


@functools.cache
def structs() -> dict[str, tuple[Field, ...]]:
    """Every struct the hash input can contain: Dynamo's and the Kubernetes core ones they embed."""
    core = gojson.core_v1_structs()
    # ExtraPodSpec marshals the embedded PodSpec's fields, then `containers` (made omitempty, moved
    # behind them), then `mainContainer`.
    pod_spec = [f for f in core["core/v1.PodSpec"] if f[0] != "containers"]
    extra_pod_spec = (
        *pod_spec,
        _opt("containers", _slice(_core("Container"))),
        _opt("mainContainer", _ptr(_core("Container"))),
    )
    return {**core, **DYNAMO_STRUCTS, "dynamo/v1alpha1.ExtraPodSpec": extra_pod_spec}


def is_worker(spec: ServiceSpec | None) -> bool:
    """Worker, prefill and decode components: the ones named and rolled by the worker hash."""
    return bool(spec) and (spec or {}).get("componentType") in c.WORKER_COMPONENT_TYPES


def hash_input(services: Mapping[str, ServiceSpec | None]) -> str:
    """The JSON document the hash is taken over: {service: stripped spec} of the worker services."""
    table = structs()
    fields = table[SHARED_SPEC]
    items = []
    for name in sorted(services):
        spec = services[name]
        if spec is None or not is_worker(spec):
            continue
        stripped = {k: v for k, v in spec.items() if k not in NOT_HASHED}
        try:
            encoded = gojson.encode_struct(stripped, fields, table)
        except QuantityError as err:
            raise GenerationError(f"spec.services.{name}", str(err)) from err
        items.append(f"{gojson.go_string(name)}:{encoded}")
    return "{" + ",".join(items) + "}"


def worker_hash(services: Mapping[str, ServiceSpec | None]) -> str:
    """First 8 hex characters of sha256(hash_input(services)) — the same for every worker service.
    Raises GenerationError naming the service when a quantity in it cannot be read."""
    return hashlib.sha256(hash_input(services).encode()).hexdigest()[:8]
