#!/usr/bin/env python3
"""Vendor the OpenAPI v3 schemas of the Kubernetes types our CRDs embed into api/v1alpha1/k8s_schemas.json.

Source: the OpenAPI v3 documents shipped in the k8s.io/kubernetes Go module (the version pinned in
hack/tools/k8s; located with `go mod download -json`), or a live API server (`--kubeconfig`, read with
`kubectl get --raw /openapi/v3/...`).

The output keeps one entry per type; a property that refers to another type says `{"$ref": "<name>"}`
and `api/v1alpha1/crd.py` inlines it when it builds a CRD. Everything else is already in the form a CRD
structural schema accepts:
- int-or-string types (IntOrString, Quantity) become `x-kubernetes-int-or-string: true`;
- RawExtension becomes a schemaless object (`x-kubernetes-preserve-unknown-fields`);
- list/map markers valid in CRDs stay; strategic-merge and GVK markers go;
- defaults go, except on list-map keys that are not required (the API server demands one there, e.g.
  ContainerPort.protocol = TCP);
- nested ObjectMeta is cut down to name, namespace, labels and annotations.

Usage: hack/vendor_k8s_openapi.py [--kubeconfig PATH] [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

# Run as a script under PYTHONSAFEPATH (the Makefile sets it) its own directory is not on sys.path.
if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))
import generated_files

REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "api" / "v1alpha1" / "k8s_schemas.json"
TOOLS_MODULE = REPO / "hack" / "tools" / "k8s"
KUBERNETES_MODULE = "k8s.io/kubernetes"

# The OpenAPI v3 documents (one per group/version) holding the roots below and their closure.
DOCUMENTS = ("api/v1", "apis/autoscaling/v2", "apis/batch/v1")
ROOTS = (
    "io.k8s.api.core.v1.PodSpec",
    "io.k8s.api.core.v1.Container",
    "io.k8s.api.core.v1.Probe",
    "io.k8s.api.core.v1.EnvVar",
    "io.k8s.api.core.v1.Toleration",
    "io.k8s.api.core.v1.ResourceRequirements",
    "io.k8s.api.core.v1.ResourceClaim",
    "io.k8s.api.core.v1.ConfigMapKeySelector",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerBehavior",
    "io.k8s.api.autoscaling.v2.MetricSpec",
    # v1beta1 DGDR's overrides.profilingJob.
    "io.k8s.api.batch.v1.JobSpec",
)
INT_OR_STRING = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
}
RAW_EXTENSION = "io.k8s.apimachinery.pkg.runtime.RawExtension"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
OBJECT_META_KEPT = ("name", "namespace", "labels", "annotations")
# Keywords a CRD structural schema accepts (others are dropped).
KEPT_KEYWORDS = {
    "type",
    "format",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "anyOf",
    "$ref",
}
KEPT_FORMATS = {"int32", "int64", "byte", "date-time", "double", "float"}
REF_PREFIX = "#/components/schemas/"
# Only the first sentence of each upstream description is kept: it is what `kubectl explain` readers
# need, and it halves the size of the CRDs that embed PodSpec (DGD and DCD).
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!etc)\.\s+(?=[A-Z`\"])")


def module_openapi_dir() -> Path:
    """The openapi-spec/v3 folder of the pinned k8s.io/kubernetes module, downloading it if needed."""
    version = _pinned_version()
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{KUBERNETES_MODULE}@{version}"],
        cwd=TOOLS_MODULE,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return Path(json.loads(out)["Dir"]) / "api" / "openapi-spec" / "v3"


def _pinned_version() -> str:
    for line in (TOOLS_MODULE / "go.mod").read_text().splitlines():
        parts = line.split()
        if parts[:1] == ["require"] and len(parts) >= 3 and parts[1] == KUBERNETES_MODULE:
            return parts[2]
        if len(parts) >= 2 and parts[0] == KUBERNETES_MODULE:
            return parts[1]
    raise SystemExit(f"{KUBERNETES_MODULE} is not required by {TOOLS_MODULE / 'go.mod'}")


def load_documents(kubeconfig: str | None) -> dict[str, Any]:
    """All component schemas of DOCUMENTS, keyed by definition name."""
    schemas: dict[str, Any] = {}
    for doc in DOCUMENTS:
        if kubeconfig:
            raw = subprocess.run(
                ["kubectl", "--kubeconfig", kubeconfig, "get", "--raw", f"/openapi/v3/{doc}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            data = json.loads(raw)
        else:
            path = module_openapi_dir() / (doc.replace("/", "__") + "_openapi.json")
            data = json.loads(path.read_text())
        schemas.update(data["components"]["schemas"])
    return schemas


def _ref_name(node: dict[str, Any]) -> str | None:
    """The definition a node stands for: `$ref` directly or the single-element `allOf` wrapper."""
    if "$ref" in node:
        return str(node["$ref"]).removeprefix(REF_PREFIX)
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).removeprefix(REF_PREFIX)
    return None


def first_sentence(text: str) -> str:
    """The first sentence of an upstream description, whitespace collapsed."""
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0].rstrip(".") + "."


def _list_map_key_defaults(schemas: dict[str, Any]) -> set[tuple[str, str]]:
    """(definition, property) pairs that are keys of some list-type=map list: their defaults must stay."""
    pairs: set[tuple[str, str]] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            keys = node.get("x-kubernetes-list-map-keys")
            if keys and isinstance(node.get("items"), dict) and (name := _ref_name(node["items"])):
                pairs.update((name, key) for key in keys)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schemas)
    return pairs


def normalise(node: dict[str, Any], *, owner: str, keep_defaults: set[tuple[str, str]]) -> dict[str, Any]:
    """One schema node in CRD form; references stay as `{"$ref": name}` (plus the local description)."""
    if (name := _ref_name(node)) is not None:
        ref: dict[str, Any] = {"$ref": name}
        if "description" in node:
            ref["description"] = first_sentence(node["description"])
        return ref
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEPT_KEYWORDS:
            continue
        if key == "format" and value not in KEPT_FORMATS:
            continue
        if key == "properties":
            props: dict[str, Any] = {}
            for prop, sub in value.items():
                fixed = normalise(sub, owner=owner, keep_defaults=keep_defaults)
                fixed.pop("default", None)
                needs_default = (owner, prop) in keep_defaults and prop not in node.get("required", ())
                if needs_default and sub.get("default") is not None:
                    fixed["default"] = sub["default"]
                props[prop] = fixed
            out[key] = props
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = normalise(value, owner=owner, keep_defaults=keep_defaults)
            out[key].pop("default", None)
        elif key == "default":
            continue  # property-level defaults are handled by the parent
        elif key == "description":
            out[key] = first_sentence(value)
        else:
            out[key] = value
    return out


def definition(name: str, schemas: dict[str, Any], keep_defaults: set[tuple[str, str]]) -> dict[str, Any]:
    """The CRD form of one definition."""
    raw = schemas[name]
    if name in INT_OR_STRING:
        return {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "description": first_sentence(raw.get("description", "")),
            "x-kubernetes-int-or-string": True,
        }
    if name == RAW_EXTENSION:
        return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    if name == OBJECT_META:
        raw = {**raw, "properties": {k: v for k, v in raw["properties"].items() if k in OBJECT_META_KEPT}}
    out = normalise(raw, owner=name, keep_defaults=keep_defaults)
    if "properties" in out:
        out.setdefault("type", "object")
        if "required" in out:
            out["required"] = sorted(out["required"])
    return out


def closure(schemas: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every definition reachable from ROOTS, in CRD form, sorted by name."""
    keep_defaults = _list_map_key_defaults(schemas)
    result: dict[str, dict[str, Any]] = {}
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in result:
            continue
        if name not in schemas:
            raise SystemExit(f"definition {name} not found in {DOCUMENTS}")
        result[name] = definition(name, schemas, keep_defaults)
        pending.extend(_refs(result[name]))
    return dict(sorted(result.items()))


def _refs(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node:
            found.append(node["$ref"])
        for value in node.values():
            found.extend(_refs(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_refs(value))
    return found


def render(definitions: dict[str, dict[str, Any]]) -> str:
    return json.dumps(definitions, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", help="read /openapi/v3 from this cluster instead of the Go module")
    parser.add_argument("--check", action="store_true", help="fail if the committed file differs")
    args = parser.parse_args(argv)
    text = render(closure(load_documents(args.kubeconfig)))
    return generated_files.sync({OUTPUT: text}, check=args.check, fix="hack/vendor_k8s_openapi.py")


if __name__ == "__main__":
    sys.exit(main())
