"""Objects of the Dynamo kinds drawn from our CRD schemas, for property tests: every field, type,
enum, bound and list-map key of either version, except the embedded pod specs, which come from a
smaller pod shape (containers with image, args, env, mounts, resources and ports; volumes; node
selector; tolerations): the full PodSpec schema would make every example slow without exercising
more of what is tested."""

from __future__ import annotations

import string
from typing import Any

from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1
from dynamo_operator.api.v1alpha1.crd import root_schema
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Json = dict[str, Any]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = st.sampled_from(["main", "sidecar", "Frontend", "decode", "prefill", "worker-a", "planner"])
LABEL = st.text(alphabet=string.ascii_lowercase + "-", min_size=1, max_size=6)
SCALAR = st.one_of(st.integers(-3, 3), st.booleans(), LABEL)
QUANTITY = st.one_of(st.sampled_from(["1", "2Gi", "500m", "0", "8Gi", "100M"]), st.integers(0, 4))
MAX_DEPTH = 9
POD_PATHS = ("podTemplate.spec", "extraPodSpec")
# A graph always has components in these tests (an empty one exercises nothing).
GRAPH_PARTS = frozenset({".spec.services", ".spec.components"})


def env_var() -> st.SearchStrategy[Json]:
    """An env var of a few names, so that two lists drawn apart share some."""
    return st.fixed_dictionaries({"name": st.sampled_from(["A", "B", "HF_TOKEN"])}, optional={"value": LABEL})


def container(name: st.SearchStrategy[str]) -> st.SearchStrategy[Json]:
    """A container of the fields generation reads, named by `name`."""
    resources = st.fixed_dictionaries(
        {},
        optional={
            "limits": st.dictionaries(
                st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage"]),
                QUANTITY,
                max_size=2,
            ),
            "requests": st.dictionaries(
                st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]), QUANTITY, max_size=2
            ),
        },
    )
    mount = st.fixed_dictionaries(
        {
            "name": st.sampled_from(["models", "cache", "config"]),
            "mountPath": st.sampled_from(["/models", "/cache", "/etc/x"]),
        },
        optional={"readOnly": st.booleans(), "subPath": LABEL},
    )
    return st.fixed_dictionaries(
        {"name": name},
        optional={
            "image": st.sampled_from(["img:1.5.0", "other:2"]),
            "args": st.lists(LABEL, max_size=3),
            "command": st.lists(LABEL, max_size=2),
            "env": st.lists(env_var(), max_size=2, unique_by=lambda e: e["name"]),
            "envFrom": st.lists(
                st.fixed_dictionaries({"secretRef": st.fixed_dictionaries({"name": LABEL})}), max_size=1
            ),
            "volumeMounts": st.lists(mount, max_size=2),
            "resources": resources,
            "workingDir": st.sampled_from(["/workspace", "/opt"]),
            "ports": st.lists(
                st.fixed_dictionaries(
                    {"containerPort": st.integers(1, 9000), "protocol": st.just("TCP")},
                    optional={"name": LABEL},
                ),
                max_size=1,
            ),
            "livenessProbe": st.fixed_dictionaries({"periodSeconds": st.integers(1, 30)}),
            "readinessProbe": st.fixed_dictionaries({"periodSeconds": st.integers(1, 30)}),
        },
    )


def pod_spec(*, with_containers: bool) -> st.SearchStrategy[Json]:
    """A pod spec of the fields generation reads (`containers` required or optional)."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "volumes": st.lists(
            st.fixed_dictionaries(
                {"name": st.sampled_from(["models", "cache"])},
                optional={"persistentVolumeClaim": st.fixed_dictionaries({"claimName": LABEL})},
            ),
            max_size=2,
            unique_by=lambda v: v["name"],
        ),
        "nodeSelector": st.dictionaries(LABEL, LABEL, max_size=2),
        "tolerations": st.lists(
            st.fixed_dictionaries({"key": LABEL, "operator": st.just("Exists")}), max_size=1
        ),
        "terminationGracePeriodSeconds": st.integers(0, 600),
        "serviceAccountName": LABEL,
    }
    containers = st.lists(container(NAMES), min_size=1, max_size=3, unique_by=lambda c: c["name"])
    if with_containers:
        return st.fixed_dictionaries({"containers": containers}, optional=optional)
    return st.fixed_dictionaries({}, optional={**optional, "containers": containers})


def _string(schema: Json) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if schema.get("format") == "date-time":
        return st.sampled_from(["2026-01-02T03:04:05Z", "2026-08-21T00:00:00Z"])
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(
            lambda s: schema.get("minLength", 0) <= len(s) <= min(schema.get("maxLength", 63), 63)
        )
    return st.text(
        alphabet=string.ascii_letters + "-", min_size=max(schema.get("minLength", 0), 1), max_size=8
    )


def from_schema(schema: Json, path: str = "", depth: int = 0) -> st.SearchStrategy[Any]:
    """Values valid under `schema` (types, enums, bounds, required, unique list-map keys)."""
    if path.endswith(POD_PATHS):
        return pod_spec(with_containers=path.endswith("podTemplate.spec"))
    if path.endswith("mainContainer"):
        return container(st.just("main"))
    if schema.get("x-kubernetes-int-or-string"):
        return QUANTITY
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties: Json = schema.get("properties") or {}
        if not properties:
            additional = schema.get("additionalProperties")
            if isinstance(additional, dict):
                least = 1 if path in GRAPH_PARTS else 0
                values = from_schema(additional, path + "{}", depth + 1)
                return st.dictionaries(
                    NAMES if path in GRAPH_PARTS else LABEL, values, min_size=least, max_size=3
                )
            if schema.get("x-kubernetes-preserve-unknown-fields"):
                return st.dictionaries(LABEL, SCALAR, max_size=2)
            return st.just({})
        required = set(schema.get("required") or ()) | (GRAPH_PARTS & {f"{path}.{k}" for k in properties})
        required = {k for k in properties if k in required or f"{path}.{k}" in GRAPH_PARTS}
        fixed = {k: from_schema(v, f"{path}.{k}", depth + 1) for k, v in properties.items() if k in required}
        optional = (
            {k: from_schema(v, f"{path}.{k}", depth + 1) for k, v in properties.items() if k not in required}
            if depth < MAX_DEPTH
            else {}
        )
        return st.fixed_dictionaries(fixed, optional=optional)
    if kind == "array":
        items = schema.get("items") or {}
        keys = schema.get("x-kubernetes-list-map-keys")
        unique = (lambda item: tuple(item.get(k) for k in keys)) if keys else None
        if schema.get("x-kubernetes-list-type") == "set":
            unique = lambda item: item  # noqa: E731
        return st.lists(
            from_schema(items, path + "[]", depth + 1),
            min_size=1 if path in GRAPH_PARTS else schema.get("minItems", 0),
            max_size=min(schema.get("maxItems", 2), 2),
            unique_by=unique,
        )
    if kind == "string":
        return _string(schema)
    if kind == "integer":
        return st.integers(schema.get("minimum", 0), min(schema.get("maximum", 50), 50))
    if kind == "number":
        return st.floats(schema.get("minimum", 0), schema.get("maximum", 10), allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    return SCALAR  # schemaless value


def _metadata() -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries(
        {"name": st.sampled_from(["graph", "vllm-agg", "dcd-a"])},
        optional={
            "namespace": st.just("ns"),
            "labels": st.dictionaries(LABEL, LABEL, min_size=1, max_size=2),
            "annotations": st.dictionaries(
                st.sampled_from(["a", "nvidia.com/enable-grove"]), LABEL, min_size=1, max_size=2
            ),
        },
    )


def _objects(model: type[v1alpha1.ApiModel], api_version: str) -> st.SearchStrategy[Json]:
    schema = root_schema(model)
    kind = str(model.model_fields["kind"].default)
    spec = from_schema(schema["properties"]["spec"], ".spec")
    status = from_schema(schema["properties"]["status"], ".status")
    base = {"apiVersion": st.just(api_version), "kind": st.just(kind), "metadata": _metadata(), "spec": spec}
    return st.fixed_dictionaries(base, optional={"status": status}).filter(_convertible)


def _convertible(obj: Json) -> bool:
    """Drop shapes neither version stores as given: an empty graph (`services: {}`, `components: []`)."""
    spec = obj.get("spec") or {}
    return spec.get("services") != {} and spec.get("components") != []


SCHEMAS = {
    V1ALPHA1: root_schema(v1alpha1.DynamoGraphDeployment),
    V1BETA1: root_schema(v1beta1.DynamoGraphDeployment),
}
ALPHA_DGD = _objects(v1alpha1.DynamoGraphDeployment, V1ALPHA1)
BETA_DGD = _objects(v1beta1.DynamoGraphDeployment, V1BETA1)
ALPHA_DCD = _objects(v1alpha1.DynamoComponentDeployment, V1ALPHA1)
BETA_DCD = _objects(v1beta1.DynamoComponentDeployment, V1BETA1)
