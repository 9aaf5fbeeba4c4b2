"""The committed CRDs are what the models generate, and they have the shape `kubectl` users rely on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import gen_crds
import pytest
import vendor_k8s_openapi
import yaml
from dynamo_operator.api.v1alpha1 import KINDS, ApiModel
from dynamo_operator.api.v1alpha1.crd import build_crd

REPO = Path(__file__).resolve().parents[3]
CRDS = {str(kind.model_fields["kind"].default): build_crd(kind) for kind in KINDS}
# A client-side `kubectl apply` stores the whole object in the last-applied-configuration annotation, and
# all annotations together may hold 256 KiB: keep every CRD below that, with room for other annotations,
# so GitOps tools that apply client-side keep working (etcd's 1.5 MiB limit is then far away too).
MAX_CRD_JSON_BYTES = 256 * 1024 - 16 * 1024


def test_committed_crds_match_the_models() -> None:
    """`make manifests` was run after the last model change (else: run it and commit)."""
    stale = [
        str(path.relative_to(REPO))
        for path, text in gen_crds.generated().items()
        if not path.exists() or path.read_text() != text
    ]
    assert stale == [], "stale CRDs, run `make manifests`"


def test_crd_kustomization_lists_every_generated_crd() -> None:
    listed = yaml.safe_load((REPO / "config" / "crd" / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(f"bases/{p.name}" for p in gen_crds.generated())


@pytest.mark.skipif(shutil.which("go") is None, reason="needs the Go toolchain to locate k8s.io/kubernetes")
def test_vendored_kubernetes_schemas_match_the_pinned_kubernetes() -> None:
    """api/v1alpha1/k8s_schemas.json is regenerated from the pinned k8s.io/kubernetes module."""
    assert vendor_k8s_openapi.main(["--check"]) == 0


@pytest.mark.parametrize(
    ("kind", "short_name", "columns"),
    [
        pytest.param(
            "DynamoGraphDeployment", "dgd", ["Ready", "State", "Reason", "Backend", "Age"], id="dgd"
        ),
        pytest.param(
            "DynamoComponentDeployment", "dcd", ["Component", "Available", "Backend", "Age"], id="dcd"
        ),
        pytest.param(
            "DynamoGraphDeploymentRequest",
            "dgdr",
            ["Model", "Backend", "State", "DGD-State", "Age"],
            id="dgdr",
        ),
        pytest.param(
            "DynamoGraphDeploymentScalingAdapter",
            "dgdsa",
            ["DGD", "Service", "Replicas", "Ready", "Reason", "Age"],
            id="dgdsa",
        ),
        pytest.param("DynamoModel", "dm", ["BaseModel", "Type", "Ready", "Total", "Age"], id="dm"),
    ],
)
def test_crd_names_and_printer_columns(kind: str, short_name: str, columns: list[str]) -> None:
    """Short names and `kubectl get` columns as upstream (the adapter adds Ready and Reason, the graph
    State and Reason); every kind has a status subresource."""
    crd = CRDS[kind]
    assert crd["spec"]["names"]["shortNames"] == [short_name]
    assert crd["spec"]["scope"] == "Namespaced"
    [version] = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1alpha1", True, True)
    assert [c["name"] for c in version["additionalPrinterColumns"]] == columns
    assert version["subresources"]["status"] == {}


def test_scaling_adapter_has_a_scale_subresource() -> None:
    """HPA/KEDA scale the adapter through /scale."""
    [version] = CRDS["DynamoGraphDeploymentScalingAdapter"]["spec"]["versions"]
    assert version["subresources"]["scale"] == {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.selector",
    }
    others = [k for k, crd in CRDS.items() if "scale" in crd["spec"]["versions"][0]["subresources"]]
    assert others == ["DynamoGraphDeploymentScalingAdapter"]


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_crd_fits_a_client_side_apply_annotation(kind: str) -> None:
    assert len(json.dumps(CRDS[kind], separators=(",", ":"))) < MAX_CRD_JSON_BYTES


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.get("properties", {}).items():
            found += _walk(value, f"{path}.{key}")
        if isinstance(node.get("items"), dict):
            found += _walk(node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            found += _walk(node["additionalProperties"], f"{path}{{}}")
    return found


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_schema_is_structural(kind: str) -> None:
    """No `$ref`; every node has a type unless it is int-or-string or schemaless; enums are strings."""
    schema = CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "$ref" not in json.dumps(schema)
    for path, node in _walk(schema):
        if node.get("x-kubernetes-int-or-string"):
            continue
        if node.get("x-kubernetes-preserve-unknown-fields") and "properties" not in node:
            continue  # schemaless: any JSON value (an EPP plugin's parameters, as upstream has them)
        assert "type" in node, path
        if "enum" in node:
            assert node["type"] == "string", path


@pytest.mark.parametrize("kind", sorted(CRDS))
def test_every_cel_rule_explains_itself(kind: str) -> None:
    """A refused object gets a message naming the problem, never the bare rule text."""
    schema = CRDS[kind]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for path, node in _walk(schema):
        for rule in node.get("x-kubernetes-validations", []):
            assert rule.get("message") or rule.get("messageExpression"), (path, rule["rule"])


def _model_paths(model: type[ApiModel], prefix: str) -> list[str]:
    paths = []
    for name, info in model.model_fields.items():
        paths.append(f"{prefix}.{info.alias or name}")
    return paths


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_every_model_field_is_in_the_schema_with_a_description(kind: type[ApiModel]) -> None:
    """`kubectl explain` documents every field of spec and status."""
    crd = build_crd(kind)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    for part in ("spec", "status"):
        sub = schema["properties"][part]
        model = kind.model_fields[part].annotation
        model = next(a for a in getattr(model, "__args__", (model,)) if a is not type(None))
        omitted = set(getattr(model, "__crd_omit__", ()))  # left out on purpose (a DCD's graph-only fields)
        for name, info in model.model_fields.items():
            if (info.alias or name) in omitted:
                continue
            prop = sub["properties"][info.alias or name]
            assert prop.get("description"), f"{part}.{info.alias or name}"


def test_extra_pod_spec_is_a_pod_spec_with_optional_containers_and_main_container() -> None:
    """extraPodSpec carries every PodSpec field plus mainContainer; containers are not required."""
    spec = CRDS["DynamoGraphDeployment"]["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"][
        "spec"
    ]
    extra = spec["properties"]["services"]["additionalProperties"]["properties"]["extraPodSpec"]
    assert {"containers", "tolerations", "volumes", "affinity", "mainContainer"} <= set(extra["properties"])
    assert "containers" not in extra.get("required", [])
    assert "name" not in extra["properties"]["mainContainer"].get("required", [])
    port = extra["properties"]["containers"]["items"]["properties"]["ports"]
    assert port["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert port["items"]["properties"]["protocol"]["default"] == "TCP"
