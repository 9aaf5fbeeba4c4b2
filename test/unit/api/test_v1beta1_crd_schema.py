"""The generated v1beta1 schemas have upstream's structure, property by property.

Compared: every property path, and at each one its type, format, enum, default, required, bounds,
pattern and `x-kubernetes-*` markers (CEL rules included). Descriptions are ours and are not compared.
Upstream's CRDs are read from ../shared at test time (the test fails when they are missing).
"""

from __future__ import annotations

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
    "anyOf",
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)

# Where ours differs from upstream's, and why. Each entry: (path suffix or infix, what differs).
#
# 1. Embedded Kubernetes types (PodSpec under podTemplate.spec, EnvVar under env) come from the
#    Kubernetes OpenAPI this project vendors for its API server (1.33, hack/vendor_k8s_openapi.py),
#    upstream's from the Go types of a newer k8s.io/api through controller-gen. So:
#    - fields Kubernetes added after 1.33 are absent (an API server of 1.33 would drop them anyway);
#    - controller-gen writes the Go `+default`, Quantity `pattern` and `x-kubernetes-map-type` markers,
#      the published OpenAPI does not carry them (defaults would be applied by the API server's own
#      defaulting of the Pod, not by the CRD).
EMBEDDED_K8S_PREFIXES = (".spec.components[].podTemplate.spec", ".spec.podTemplate.spec", ".spec.env[]")
NEWER_KUBERNETES_FIELDS = (
    ".fileKeyRef",
    ".restartPolicyRules",
    ".hostnameOverride",
    ".schedulingGroup",
    ".volumeClaimTemplate.metadata.finalizers",
    ".podCertificate",
)
CONTROLLER_GEN_ONLY = ("default", "pattern", "x-kubernetes-map-type")


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _flatten(node: dict[str, Any], path: str, out: dict[str, dict[str, str]]) -> None:
    facts = {}
    for key in COMPARED:
        if key in node:
            value = node[key]
            if key in ("required", "enum"):
                value = sorted(value, key=str)
                if not value:
                    continue
            if key == "x-kubernetes-validations":
                value = sorted(value, key=lambda rule: rule["rule"])
            facts[key] = json.dumps(_strip(value), sort_keys=True)
    out[path] = facts
    for name, child in node.get("properties", {}).items():
        _flatten(child, f"{path}.{name}", out)
    if isinstance(node.get("items"), dict):
        _flatten(node["items"], f"{path}[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        _flatten(node["additionalProperties"], f"{path}{{}}", out)


def _schema_of(crd: dict[str, Any], version: str) -> dict[str, Any]:
    [entry] = [v for v in crd["spec"]["versions"] if v["name"] == version]
    schema: dict[str, Any] = entry["schema"]["openAPIV3Schema"]
    return schema


def _upstream(plural: str) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load((UPSTREAM / f"nvidia.com_{plural}.yaml").read_text())
    return crd


OURS = {crd["spec"]["names"]["plural"]: crd for crd in gen_crds.crds()}
PLURALS = ("dynamographdeployments", "dynamocomponentdeployments")


def _embedded(path: str) -> bool:
    return path.startswith(EMBEDDED_K8S_PREFIXES)


def _differences(plural: str) -> list[str]:
    theirs: dict[str, dict[str, str]] = {}
    ours: dict[str, dict[str, str]] = {}
    _flatten(_schema_of(_upstream(plural), "v1beta1"), "", theirs)
    _flatten(_schema_of(OURS[plural], "v1beta1"), "", ours)
    found = []
    for path in sorted(set(theirs) | set(ours)):
        if path not in ours:
            if _embedded(path) and any(part in path for part in NEWER_KUBERNETES_FIELDS):
                continue
            found.append(f"missing {path}")
            continue
        if path not in theirs:
            found.append(f"extra {path}")
            continue
        for key in sorted(set(theirs[path]) | set(ours[path])):
            if theirs[path].get(key) == ours[path].get(key):
                continue
            if _embedded(path) and key in CONTROLLER_GEN_ONLY and key not in ours[path]:
                continue
            found.append(f"{path} {key}: upstream {theirs[path].get(key)} ours {ours[path].get(key)}")
    return found


def test_upstream_crds_are_present() -> None:
    assert UPSTREAM.is_dir(), f"{UPSTREAM} is missing: the shared reference data is needed"


@pytest.mark.parametrize("plural", PLURALS)
def test_v1beta1_schema_has_upstreams_structure(plural: str) -> None:
    assert _differences(plural) == []


# Columns this operator shows beyond upstream's, by kind: `kubectl get dgd` reads v1beta1 (the newest
# version), so the graph keeps v1alpha1's State and Reason there.
EXTRA_COLUMNS: dict[str, tuple[str, ...]] = {"dynamographdeployments": ("State", "Reason")}


def _v1beta1_columns(crd: dict[str, Any]) -> list[tuple[str, str, str]]:
    [entry] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
    return [(c["name"], c["type"], c["jsonPath"]) for c in entry["additionalPrinterColumns"]]


@pytest.mark.parametrize("plural", PLURALS)
def test_v1beta1_printer_columns_are_upstreams_in_upstreams_order(plural: str) -> None:
    extra = EXTRA_COLUMNS.get(plural, ())
    ours = [c for c in _v1beta1_columns(OURS[plural]) if c[0] not in extra]
    assert ours == _v1beta1_columns(_upstream(plural))


def test_v1beta1_graph_columns_say_why_a_graph_is_not_ready() -> None:
    names = [c[0] for c in _v1beta1_columns(OURS["dynamographdeployments"])]
    assert names == ["Ready", "State", "Reason", "Backend", "Age"]


@pytest.mark.parametrize("plural", sorted(set(OURS) - {"dynamomodels"}))
def test_served_versions_store_v1beta1_and_convert_v1alpha1_through_the_webhook(plural: str) -> None:
    crd = OURS[plural]
    versions = [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]]
    assert versions == [("v1alpha1", True, False), ("v1beta1", True, True)]
    assert crd["spec"]["conversion"] == {
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {
                    "name": "dynamo-operator-webhook-service",
                    "namespace": "dynamo-system",
                    "path": "/convert",
                    "port": 9443,
                }
            },
            "conversionReviewVersions": ["v1"],
        },
    }
    for version in crd["spec"]["versions"]:
        assert version["subresources"]["status"] == {}


def test_dynamo_model_stays_single_version_without_conversion() -> None:
    crd = OURS["dynamomodels"]
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]
    assert "conversion" not in crd["spec"]


@pytest.mark.parametrize("plural", sorted(OURS))
def test_two_version_crd_fits_a_client_side_apply_annotation(plural: str) -> None:
    """Both versions together stay under the last-applied annotation's 256 KiB (with 16 KiB spare)."""
    assert len(json.dumps(OURS[plural], separators=(",", ":"))) < 256 * 1024 - 16 * 1024


@pytest.mark.parametrize("plural", sorted(set(OURS) - {"dynamomodels"}))
def test_v1alpha1_is_served_deprecated_with_a_warning_that_says_what_to_write(plural: str) -> None:
    alpha, beta = OURS[plural]["spec"]["versions"]
    assert alpha["deprecated"] is True
    assert "nvidia.com/v1beta1" in alpha["deprecationWarning"]
    assert "dynamo-operator convert" in alpha["deprecationWarning"]
    assert "deprecated" not in beta


def test_dynamo_model_stays_a_single_stored_v1alpha1() -> None:
    versions = OURS["dynamomodels"]["spec"]["versions"]
    assert [(v["name"], v["storage"], v.get("deprecated")) for v in versions] == [("v1alpha1", True, None)]
