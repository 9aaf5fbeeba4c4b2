"""The generated v1beta1 schemas of DynamoGraphDeploymentRequest and DynamoGraphDeploymentScalingAdapter
have upstream's structure, property by property (descriptions are ours and are not compared).

Compared at every property path: type, format, enum, default, required, bounds, pattern and every
`x-kubernetes-*` marker (CEL rules included). The CRDs are the ones hack/gen_crds.py writes; upstream's
are read from ../shared at test time (the test fails when they are missing).

Known differences, each with its reason:
- the root requires `spec`: this operator's builder requires it on every kind (an object without spec
  has nothing to reconcile), upstream's v1beta1 roots require nothing;
- embedded Kubernetes types (the profiling Job override, status conditions) come from the Kubernetes
  OpenAPI this project vendors (1.33), upstream's from newer Go types through controller-gen: there
  every path of ours must exist upstream with the same type, and fields newer than 1.33 or
  controller-gen's extra markers (defaults, Quantity patterns, Condition bounds) are not required;
- the adapter's `status.conditions` is this operator's (its Ready condition, which v1alpha1 has too).
- upstream's kubebuilder output repeats an enum as `allOf: [{enum}, {enum}]` when both the type and
  the field carry it; that is read as the one enum it is.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
UPSTREAM = REPO.parent / "shared" / "upstream-examples-2a6da14c" / "crds"
sys.path.insert(0, str(REPO / "hack"))
import gen_crds  # noqa: E402

COMPARED = (
    "type",
    "format",
    "enum",
    "default",
    "required",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "nullable",
    "anyOf",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)
REQUESTS = "dynamographdeploymentrequests"
ADAPTERS = "dynamographdeploymentscalingadapters"
EMBEDDED = {
    REQUESTS: (".spec.overrides.profilingJob.", ".status.conditions[]."),
    ADAPTERS: (".status.conditions[].",),
}
OURS_ONLY = {REQUESTS: (), ADAPTERS: (".status.conditions",)}
ROOT_REQUIRES_SPEC = ("", "required")

Facts = dict[str, str]


def _single_enum(node: dict[str, Any]) -> dict[str, Any]:
    """`allOf` of identical enums (kubebuilder repeating a type's enum on a field) as one `enum`."""
    all_of = node.get("allOf")
    if isinstance(all_of, list) and all_of and all(set(part) == {"enum"} for part in all_of):
        enums = {json.dumps(part["enum"]) for part in all_of}
        if len(enums) == 1:
            node = {key: value for key, value in node.items() if key != "allOf"}
            node["enum"] = all_of[0]["enum"]
    return node


def _flatten(node: dict[str, Any], path: str, out: dict[str, Facts]) -> None:
    node = _single_enum(node)
    facts: Facts = {}
    for key in COMPARED:
        if key not in node:
            continue
        value = node[key]
        if key in ("required", "enum"):
            value = sorted(value, key=str)
        if key == "x-kubernetes-validations":
            value = sorted(({k: v for k, v in rule.items() if k != "message"} for rule in value), key=str)
        facts[key] = json.dumps(value, sort_keys=True)
    out[path] = facts
    for name, child in node.get("properties", {}).items():
        _flatten(child, f"{path}.{name}", out)
    if isinstance(node.get("items"), dict):
        _flatten(node["items"], f"{path}[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        _flatten(node["additionalProperties"], f"{path}{{}}", out)


def _v1beta1(crd: dict[str, Any]) -> dict[str, Any]:
    [entry] = [version for version in crd["spec"]["versions"] if version["name"] == "v1beta1"]
    return entry


@functools.cache
def _upstream(plural: str) -> dict[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    crd: dict[str, Any] = yaml.load((UPSTREAM / f"nvidia.com_{plural}.yaml").read_text(), Loader=loader)
    return crd


OURS = {crd["spec"]["names"]["plural"]: crd for crd in gen_crds.crds()}


def _paths(crd: dict[str, Any]) -> dict[str, Facts]:
    out: dict[str, Facts] = {}
    _flatten(_v1beta1(crd)["schema"]["openAPIV3Schema"], "", out)
    return out


def _embedded(plural: str, path: str) -> bool:
    return any(path.startswith(prefix) for prefix in EMBEDDED[plural])


def _ours_only(plural: str, path: str) -> bool:
    return any(path == prefix or path.startswith(prefix + "[]") for prefix in OURS_ONLY[plural])


def _differences(plural: str) -> list[str]:
    theirs, ours = _paths(_upstream(plural)), _paths(OURS[plural])
    found = []
    for path in sorted(set(theirs) | set(ours)):
        if path not in ours:
            if not _embedded(plural, path):
                found.append(f"missing {path}")
        elif path not in theirs:
            if not _ours_only(plural, path):
                found.append(f"extra {path}")
        elif _embedded(plural, path):
            if ours[path].get("type") != theirs[path].get("type"):
                found.append(
                    f"{path} type: upstream {theirs[path].get('type')} ours {ours[path].get('type')}"
                )
        else:
            for key in sorted(set(theirs[path]) | set(ours[path])):
                if theirs[path].get(key) != ours[path].get(key) and (path, key) != ROOT_REQUIRES_SPEC:
                    found.append(f"{path} {key}: upstream {theirs[path].get(key)} ours {ours[path].get(key)}")
    return found


def test_upstream_crds_are_present() -> None:
    for plural in (REQUESTS, ADAPTERS):
        assert (UPSTREAM / f"nvidia.com_{plural}.yaml").is_file(), "the shared reference data is needed"


@pytest.mark.parametrize("plural", [REQUESTS, ADAPTERS])
def test_v1beta1_schema_has_upstreams_structure(plural: str) -> None:
    assert _differences(plural) == []


@pytest.mark.parametrize("plural", [REQUESTS, ADAPTERS])
def test_the_comparison_sees_every_own_field_of_upstream(plural: str) -> None:
    """Guards the test above: the embedded allowance must not swallow a field of our own."""
    theirs = _paths(_upstream(plural))
    own = [path for path in theirs if not _embedded(plural, path)]
    assert len(own) > (40 if plural == REQUESTS else 10)
    assert set(own) <= set(_paths(OURS[plural]))


@pytest.mark.parametrize("plural", [REQUESTS, ADAPTERS])
def test_embedded_kubernetes_types_are_there(plural: str) -> None:
    ours = _paths(OURS[plural])
    for prefix in EMBEDDED[plural]:
        assert sum(path.startswith(prefix) for path in ours) > 4, prefix


def test_request_printer_columns_are_upstreams() -> None:
    def columns(crd: dict[str, Any]) -> list[tuple[str, str, str]]:
        return [(c["name"], c["type"], c["jsonPath"]) for c in _v1beta1(crd)["additionalPrinterColumns"]]

    assert columns(OURS[REQUESTS]) == columns(_upstream(REQUESTS))


def test_adapter_printer_columns_are_upstreams_plus_ready_and_reason() -> None:
    def columns(crd: dict[str, Any]) -> list[tuple[str, str]]:
        return [(c["name"].lower(), c["jsonPath"]) for c in _v1beta1(crd)["additionalPrinterColumns"]]

    ours = [column for column in columns(OURS[ADAPTERS]) if column[0] not in ("ready", "reason")]
    assert ours == columns(_upstream(ADAPTERS))


@pytest.mark.parametrize("plural", [REQUESTS, ADAPTERS])
def test_subresources_are_upstreams(plural: str) -> None:
    assert _v1beta1(OURS[plural])["subresources"] == _v1beta1(_upstream(plural))["subresources"]
