"""Invalid DynamoGraphDeployments, fuzzed with hypothesis from the CRD's own openAPIV3Schema.

Each object starts as a small valid graph and gets one or two mutations: a service field replaced by
a value generated from that field's schema (often schema-valid but semantically wrong: unknown
secrets, odd probes, impossible resources), a value of the wrong type or outside the enum/range, a
service name the key rule forbids, or a PVC/volume mistake. Replicas stay tiny whatever is drawn, so
an accepted object can never flood the cluster with pods.
"""

from __future__ import annotations

import copy
import string
from collections.abc import Mapping
from typing import Any

import harness as h
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

MAX_DEPTH = 3
TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-._/ :", min_size=0, max_size=12)
NAME_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "-._", min_size=1, max_size=10)


def from_schema(schema: Mapping[str, Any], depth: int = MAX_DEPTH) -> st.SearchStrategy[Any]:
    """A value shaped by an OpenAPI v3 schema: objects get up to three of their properties, lists up
    to two items, integers a small range around the bounds; deeper than `depth` becomes empty."""
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if schema.get("x-kubernetes-int-or-string"):
        return st.one_of(st.integers(-3, 5), TEXT)
    if schema.get("x-kubernetes-preserve-unknown-fields") and "properties" not in schema:
        return st.just({})
    kind = schema.get("type")
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties") or {}
        if props:
            if depth <= 0:
                return st.just({})
            keys = sorted(props)
            return st.lists(st.sampled_from(keys), max_size=3, unique=True).flatmap(
                lambda ks: st.fixed_dictionaries({k: from_schema(props[k], depth - 1) for k in ks})
            )
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and depth > 0:
            return st.dictionaries(NAME_TEXT, from_schema(extra, depth - 1), max_size=2)
        return st.just({})
    if kind == "array":
        if depth <= 0:
            return st.just([])
        return st.lists(from_schema(schema.get("items") or {}, depth - 1), max_size=2)
    if kind == "string":
        return TEXT
    if kind == "integer":
        low = int(schema.get("minimum", -3)) - 2
        high = min(int(schema.get("maximum", 5)), 5) + 2
        return st.integers(low, max(low, high))
    if kind == "number":
        return st.floats(-10, 10, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    return st.none()


WRONG = st.one_of(
    st.just(-1), st.just("two"), st.just(1.5), st.just([]), st.just({"x": 1}), st.just(True), TEXT
)


def _service_schema(crd: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    return spec["properties"]["services"]["additionalProperties"]  # type: ignore[no-any-return]


def mutations(crd: Mapping[str, Any]) -> st.SearchStrategy[list[tuple[str, Any]]]:
    svc = _service_schema(crd)
    fields = sorted(k for k in svc["properties"] if k != "replicas")
    field_value = st.sampled_from(fields).flatmap(
        lambda f: st.tuples(st.just("field"), st.tuples(st.just(f), from_schema(svc["properties"][f])))
    )
    one = st.one_of(
        field_value,
        st.tuples(
            st.just("wrong-type"),
            st.tuples(st.sampled_from(["replicas", "componentType", "envs", "resources"]), WRONG),
        ),
        st.tuples(st.just("service-name"), NAME_TEXT.filter(lambda n: not n.isalnum())),
        st.tuples(st.just("component-type"), TEXT),
        st.tuples(st.just("backend"), TEXT),
        st.tuples(st.just("quantity"), TEXT),
        st.tuples(st.just("pvc"), st.sampled_from(["create-without-size", "undeclared-mount", "bad-name"])),
    )
    return st.lists(one, min_size=1, max_size=2)


def apply_mutations(obj: dict[str, Any], muts: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    spec = obj["spec"]
    worker = spec["services"]["WorkerDecode"]
    for kind, arg in muts:
        match kind:
            case "field":
                name, value = arg
                worker[name] = value
            case "wrong-type":
                name, value = arg
                worker[name] = value
            case "service-name":
                spec["services"][arg] = spec["services"].pop("Frontend", worker)
            case "component-type":
                worker["componentType"] = arg
            case "backend":
                spec["backendFramework"] = arg
            case "quantity":
                worker["resources"] = {"limits": {"gpu": arg, "memory": arg}}
            case "pvc":
                if arg == "create-without-size":
                    spec["pvcs"] = [{"name": "cache", "create": True}]
                elif arg == "undeclared-mount":
                    worker["volumeMounts"] = [{"name": "nowhere", "mountPoint": "/m"}]
                else:
                    spec["pvcs"] = [{"name": "Not_A_Name", "create": False}]
    for svc in spec["services"].values():  # whatever was drawn, never more than two pods a service
        if isinstance(svc, dict) and isinstance(svc.get("replicas"), int) and svc["replicas"] > 2:
            svc["replicas"] = 2
    return obj


def invalid_graphs(crd: Mapping[str, Any], *, count: int, namespace: str) -> list[dict[str, Any]]:
    """`count` fuzzed graphs named x000..; reproducible (fixed seeds)."""
    base = h.graph("base", namespace, services=2)
    drawn: list[list[tuple[str, Any]]] = []
    attempt = 0
    while len(drawn) < count and attempt < 20:

        @seed(1000 + attempt)
        @settings(
            max_examples=count,
            database=None,
            phases=[Phase.generate],
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(mutations(crd))
        def collect(muts: list[tuple[str, Any]]) -> None:
            drawn.append(muts)

        collect()
        attempt += 1
    out = []
    for i, muts in enumerate(drawn[:count]):
        obj = apply_mutations(base, muts)
        obj["metadata"] = {
            "name": f"x{i:03d}",
            "namespace": namespace,
            "annotations": {"fuzz": repr(muts)[:1000]},
        }
        out.append(obj)
    return out
