"""Our v1alpha1 schemas hold every spec property of upstream's v1alpha1 at 2a6da14c.

Upstream kept adding to v1alpha1 after v1beta1 appeared. A property our v1alpha1 CRD lacks is pruned
from what a v1alpha1 client reads through the conversion webhook and silently dropped from what it
writes, so every property path of upstream's v1alpha1 `spec` must exist in ours, for every kind both
operators serve; what must differ is listed in an allow-list with its reason. The properties this
catch-up added are also compared fact by fact (type, format, enum, default, required, bounds, pattern,
`x-kubernetes-*` markers; descriptions are ours). Status is not compared (its fields are another
change's). Upstream's CRDs are read from ../shared at test time; without them the tests are skipped.
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

pytestmark = pytest.mark.skipif(not UPSTREAM.is_dir(), reason=f"{UPSTREAM} (shared data) is missing")

Json = dict[str, Any]

# Paths whose schema is an embedded Kubernetes type (EnvVar, PodSpec, Container).
_EMBEDDED = ("envs[]", "extraPodSpec", "mainContainer")

# Upstream properties our v1alpha1 may lack: (a part of the path, why). Each applies only inside an
# embedded Kubernetes type. Upstream's controller-gen embeds k8s.io/api v0.36 (Kubernetes 1.36); ours
# come from the Kubernetes OpenAPI vendored by hack/vendor_k8s_openapi.py at the version this project
# pins for its control plane (hack/tools/k8s: 1.33), whose API server would drop these fields from the
# pods anyway. Re-vendoring at 1.36 means moving that pin (and the test control plane) to 1.36.
NEWER_KUBERNETES: dict[str, str] = {
    ".valueFrom.fileKeyRef": "EnvVar source from a file (Kubernetes 1.34)",
    ".restartPolicyRules": "per-exit-code container restart rules (Kubernetes 1.34)",
    ".hostnameOverride": "PodSpec.hostnameOverride (Kubernetes 1.34)",
    ".schedulingGroup": "PodSpec.schedulingGroup (Kubernetes 1.35)",
    ".volumeClaimTemplate.metadata.finalizers": "controller-gen keeps finalizers in embedded ObjectMeta; "
    "the vendored schema keeps name, namespace, labels and annotations",
    ".podCertificate": "projected pod certificate volumes (Kubernetes 1.34)",
}

# The properties this catch-up added, compared fact by fact with upstream's, by kind.
_SERVICE_FIELDS = (
    "checkpoint",
    "minAvailable",
    "runtimeVersionOverride",
    "topologyConstraint",
    "gpuMemoryService.extraClientContainers",
    "gpuMemoryService.extraClientPods",
    "eppConfig.config",
)
CAUGHT_UP: dict[str, tuple[str, ...]] = {
    "dynamographdeployments": (
        ".spec.experimental",
        ".spec.priorityClassName",
        ".spec.providerOverride",
        ".spec.topologyConstraint",
        ".spec.services{}.providerOverride",
        ".spec.services{}.multinode.leader",
        ".spec.services{}.multinode.worker",
        *(f".spec.services{{}}.{f}" for f in _SERVICE_FIELDS),
    ),
    "dynamocomponentdeployments": tuple(f".spec.{f}" for f in _SERVICE_FIELDS),
    "dynamographdeploymentrequests": (".spec.runtimeVersionOverride", ".spec.profilingConfig.nodeSelector"),
}

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
    "x-kubernetes-validations",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)


def _v1alpha1_spec(crd: Json) -> Json | None:
    for version in crd["spec"]["versions"]:
        if version["name"] == "v1alpha1":
            spec: Json = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
            return spec
    return None


def _paths(node: Json, path: str, out: dict[str, Json]) -> dict[str, Json]:
    """Every property path under `node` (maps as `{}`, list items as `[]`) and its schema node."""
    out[path] = node
    for name, child in (node.get("properties") or {}).items():
        _paths(child, f"{path}.{name}", out)
    if isinstance(node.get("items"), dict):
        _paths(node["items"], f"{path}[]", out)
    if isinstance(node.get("additionalProperties"), dict):
        _paths(node["additionalProperties"], f"{path}{{}}", out)
    return out


def _facts(node: Json) -> Json:
    facts: Json = {}
    for key in COMPARED:
        if key not in node:
            continue
        value = node[key]
        if key in ("required", "enum"):
            value = sorted(value, key=str)
        elif key == "x-kubernetes-validations":
            value = sorted(({k: v for k, v in r.items()} for r in value), key=lambda r: r["rule"])
        facts[key] = json.dumps(value, sort_keys=True)
    return facts


def _upstream_crds() -> dict[str, Json]:
    crds = (yaml.safe_load(p.read_text()) for p in sorted(UPSTREAM.glob("*.yaml")))
    return {crd["spec"]["names"]["plural"]: crd for crd in crds}


UPSTREAM_CRDS = _upstream_crds() if UPSTREAM.is_dir() else {}
OURS = {crd["spec"]["names"]["plural"]: crd for crd in gen_crds.crds()}
# Kinds both operators serve as v1alpha1 (upstream's DynamoCheckpoint and DynamoWorkerMetadata are
# not served by this operator).
SHARED_KINDS = sorted(
    p for p in set(UPSTREAM_CRDS) & set(OURS) if _v1alpha1_spec(UPSTREAM_CRDS[p]) and _v1alpha1_spec(OURS[p])
)


def _allowed(path: str) -> bool:
    embedded = any(part in path for part in _EMBEDDED)
    return embedded and any(part in path for part in NEWER_KUBERNETES)


def _spec_paths(crds: dict[str, Json], plural: str) -> dict[str, Json]:
    spec = _v1alpha1_spec(crds[plural])
    assert spec is not None
    return _paths(spec, ".spec", {})


def test_every_kind_ours_serves_is_compared() -> None:
    """The comparison covers all five of our kinds (none dropped by a renamed plural)."""
    assert sorted(OURS) == SHARED_KINDS


@pytest.mark.parametrize("plural", SHARED_KINDS)
def test_v1alpha1_spec_has_every_upstream_property(plural: str) -> None:
    ours = _spec_paths(OURS, plural)
    missing = [p for p in _spec_paths(UPSTREAM_CRDS, plural) if p not in ours and not _allowed(p)]
    assert missing == []


@pytest.mark.parametrize("plural", sorted(CAUGHT_UP))
def test_caught_up_properties_have_upstreams_schema(plural: str) -> None:
    theirs = _spec_paths(UPSTREAM_CRDS, plural)
    ours = _spec_paths(OURS, plural)
    roots = CAUGHT_UP[plural]
    under = [p for p in theirs if any(p == r or p.startswith((f"{r}.", f"{r}[", f"{r}{{")) for r in roots)]
    assert {r for r in roots if r not in theirs} == set(), "a caught-up root is not upstream's"
    differences = [
        (path, key, theirs_facts.get(key), ours_facts.get(key))
        for path in sorted(under)
        if not _allowed(path)
        for theirs_facts, ours_facts in [(_facts(theirs[path]), _facts(ours.get(path, {})))]
        for key in sorted(set(theirs_facts) | set(ours_facts))
        if theirs_facts.get(key) != ours_facts.get(key)
    ]
    assert differences == []


def test_allow_list_entries_are_still_needed() -> None:
    """Each allowed difference is still missing from ours somewhere (re-vendoring would retire it)."""
    missing = {
        p
        for plural in SHARED_KINDS
        for p in _spec_paths(UPSTREAM_CRDS, plural)
        if p not in _spec_paths(OURS, plural)
    }
    assert {part for part in NEWER_KUBERNETES if not any(part in p for p in missing)} == set()


def test_standalone_component_deployment_has_no_provider_fragments() -> None:
    """As upstream's DCD schema: provider fragments are for a graph's generated workload only."""
    dcd = _spec_paths(OURS, "dynamocomponentdeployments")
    dgd = _spec_paths(OURS, "dynamographdeployments")
    fragments = (".providerOverride", ".multinode.leader", ".multinode.worker")
    assert [f for f in fragments if f".spec{f}" in dcd] == []
    assert [f for f in fragments if f".spec.services{{}}{f}" not in dgd] == []
