"""Conversion against upstream's own data (../shared/upstream-examples-2a6da14c, read at test time).

- Every v1beta1 example converted to v1alpha1 equals what upstream's webhook rendered
  (golden-conversion/; DCDs: golden-conversion-dcd/), spec and conversion annotations.
- Every v1beta1 example comes back unchanged through v1alpha1, and every v1alpha1 example (the
  df888f68 ones and examples-v1alpha1-applied/) through v1beta1.

Inputs are first defaulted with our schema of their version (`sparse.normalize`), as the API server
defaults an object before it reaches the webhook: the goldens hold those defaults (GPU memory service
and failover modes, device class, shadows, a port's protocol).

What the goldens hold that a conversion does not produce, and is left out of the comparison:
- Go's encoder writes `extraPodSpec.mainContainer.name: ""` and `resources: {}` (corev1.Container has
  no omitempty on them), and `metadata: {}`/`resources: {}` inside payloads: empty strings and empty
  objects are dropped on both sides before comparing.
- `volumeMounts[].useAsCompilationCache: false`: our v1alpha1 schema defaults it, upstream's does not.
- `pvcs[].size: "0"`: upstream's v1alpha1 PVC.size is a non-pointer Quantity, written "0" when unset.
- Payload JSON is compared parsed, not as text (Go orders keys by struct field, we by insertion).
- Annotations other than the reserved `nvidia.com/dgd-*`/`dcd-*` ones come from upstream's operator
  (worker hash, origin version...), not from conversion; the status is the operator's too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, sparse
from dynamo_operator.api.v1alpha1.crd import root_schema

REPO = Path(__file__).resolve().parents[3]
SHARED = REPO.parent / "shared"
DATA = SHARED / "upstream-examples-2a6da14c"
RESERVED = ("nvidia.com/dgd-", "nvidia.com/dcd-")
KINDS = ("DynamoGraphDeployment", "DynamoComponentDeployment")


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and d.get("kind") in KINDS]


SCHEMAS = {
    (model.model_fields["kind"].default, version): root_schema(model)
    for version, package in ((V1ALPHA1, v1alpha1), (V1BETA1, v1beta1))
    for model in package.KINDS
}


def _defaulted(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` as the API server hands it to the webhook: defaulted with its version's schema."""
    out: dict[str, Any] = sparse.normalize(doc, SCHEMAS[doc["kind"], doc["apiVersion"]])
    out["metadata"] = doc["metadata"]  # ObjectMeta is the API server's own, never pruned by the schema
    return out


_DEFAULTS_NOT_UPSTREAMS = {("size", "0"), ("useAsCompilationCache", False)}


def _default_not_upstreams(key: str, value: Any) -> bool:
    return isinstance(value, str | bool) and (key, value) in _DEFAULTS_NOT_UPSTREAMS


def _without_go_zero_values(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _without_go_zero_values(v) for k, v in node.items()}
        return {k: v for k, v in out.items() if v not in ("", {}) and not _default_not_upstreams(k, v)}
    if isinstance(node, list):
        return [_without_go_zero_values(v) for v in node]
    return node


def _reserved(obj: dict[str, Any]) -> dict[str, Any]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {
        k: _without_go_zero_values(json.loads(v)) for k, v in annotations.items() if k.startswith(RESERVED)
    }


def _golden_cases(directory: str, _sources: str) -> list[Any]:
    cases = []
    for golden_file in sorted((DATA / directory).glob("*.json")):
        for key, expected in json.loads(golden_file.read_text()).items():
            cases.append(pytest.param(golden_file.stem, key, expected, id=f"{golden_file.stem}:{key}"))
    assert cases, f"no golden data under {DATA / directory}"
    return cases


def test_shared_reference_data_is_present() -> None:
    assert DATA.is_dir(), f"{DATA} is missing: the shared reference data is needed"


@pytest.mark.parametrize(
    ("example", "key", "expected"), _golden_cases("golden-conversion", "examples-applied")
)
def test_v1beta1_example_reads_as_upstreams_v1alpha1_view(
    example: str, key: str, expected: dict[str, Any]
) -> None:
    name = key.split("/", 1)[1]
    [source] = [
        d for d in _docs(DATA / "examples-applied" / f"{example}.yaml") if d["metadata"]["name"] == name
    ]
    converted = convert(_defaulted(source), V1ALPHA1)
    assert converted["apiVersion"] == V1ALPHA1
    assert _without_go_zero_values(converted["spec"]) == _without_go_zero_values(expected["spec"])
    assert _reserved(converted) == _reserved(expected)


@pytest.mark.parametrize(("example", "key", "expected"), _golden_cases("golden-conversion-dcd", "golden"))
def test_stored_v1beta1_dcd_reads_as_upstreams_v1alpha1_view(
    example: str, key: str, expected: dict[str, Any]
) -> None:
    source = json.loads((DATA / "golden" / f"{example}.json").read_text())[key]
    converted = convert(source, V1ALPHA1)
    assert _without_go_zero_values(converted["spec"]) == _without_go_zero_values(expected["spec"])
    assert _reserved(converted) == _reserved(expected)


def _example_params(directory: Path, version: str) -> list[Any]:
    params = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in _docs(path):
            if doc.get("apiVersion") == version:
                params.append(pytest.param(doc, id=f"{path.stem}:{doc['metadata']['name']}"))
    assert params, f"no {version} examples under {directory}"
    return params


@pytest.mark.parametrize("doc", _example_params(DATA / "examples-applied", V1BETA1))
def test_v1beta1_example_round_trips_through_v1alpha1(doc: dict[str, Any]) -> None:
    assert convert(convert(doc, V1ALPHA1), V1BETA1) == doc


@pytest.mark.parametrize(
    "doc",
    _example_params(SHARED / "upstream-examples", V1ALPHA1)
    + _example_params(DATA / "examples-v1alpha1-applied", V1ALPHA1),
)
def test_v1alpha1_example_round_trips_through_v1beta1(doc: dict[str, Any]) -> None:
    assert convert(convert(doc, V1BETA1), V1ALPHA1) == doc


@pytest.mark.parametrize(
    ("example", "key", "expected"),
    _golden_cases("golden-v1alpha1-input-conversion", "examples-v1alpha1-applied"),
)
def test_v1alpha1_example_reads_back_as_upstream_renders_it(
    example: str, key: str, expected: dict[str, Any]
) -> None:
    """v1alpha1 in, v1beta1 (as stored upstream), v1alpha1 out: the spec upstream shows."""
    name = key.split("/", 1)[1]
    docs = _docs(DATA / "examples-v1alpha1-applied" / f"{example}.yaml")
    [source] = [d for d in docs if d["metadata"]["name"] == name]
    back = convert(convert(_defaulted(source), V1BETA1), V1ALPHA1)
    assert _without_go_zero_values(back["spec"]) == _without_go_zero_values(expected["spec"])


@pytest.mark.parametrize(("example", "key", "view"), _golden_cases("golden-conversion", "examples-applied"))
def test_upstreams_v1alpha1_view_converts_back_to_the_v1beta1_example(
    example: str, key: str, view: dict[str, Any]
) -> None:
    """A v1alpha1 client writing back what upstream's webhook showed it (`kubectl get -o yaml` as
    v1alpha1, then `kubectl apply`) loses nothing: the payload upstream wrote, Go's zero values in it
    included, restores what v1alpha1 cannot hold (a mount's readOnly and subPath...)."""
    name = key.split("/", 1)[1]
    [source] = [
        d for d in _docs(DATA / "examples-applied" / f"{example}.yaml") if d["metadata"]["name"] == name
    ]
    back = convert(view, V1BETA1)
    assert _without_go_zero_values(back["spec"]) == _without_go_zero_values(_defaulted(source)["spec"])


def _upstream_stored_cases() -> list[Any]:
    return list(_golden_cases("golden-v1alpha1-input-conversion", "golden-v1alpha1-input"))


@pytest.mark.parametrize(("example", "key", "expected"), _upstream_stored_cases())
def test_a_graph_upstream_stored_from_v1alpha1_reads_as_upstream_shows_it(
    example: str, key: str, expected: dict[str, Any]
) -> None:
    """A graph upstream's operator stored from a v1alpha1 manifest (a cluster taken over) reads as
    upstream's webhook shows it. Its payload records the v1alpha1 split of each main container's
    fields as a Go struct; read literally, `envFromSecret` came back beside the same entry in the
    container's `envFrom` (the pods got the Secret twice)."""
    stored = json.loads((DATA / "golden-v1alpha1-input" / f"{example}.json").read_text())[key]
    view = convert(stored, V1ALPHA1)
    assert _without_go_zero_values(view["spec"]) == _without_go_zero_values(expected["spec"])
