"""Every manifest the docs and the README show is one the API server would accept as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.v1alpha1 import ApiModel
from dynamo_operator.api.v1alpha1.crd import root_schema
from dynamo_operator.internal.dynamo.render.unknownfields import unknown_fields

REPO = Path(__file__).resolve().parents[3]
# Generated pages hold no examples; design notes are the lead's and quote fragments.
PAGES = sorted(
    [REPO / "README.md"]
    + [p for p in (REPO / "docs").rglob("*.md") if not p.is_relative_to(REPO / "docs" / "design")]
)
MODELS: dict[tuple[str, str], type[ApiModel]] = {
    (api_version, str(kind.model_fields["kind"].default)): kind
    for api_version, kinds in ((v1alpha1.API_VERSION, v1alpha1.KINDS), (v1beta1.API_VERSION, v1beta1.KINDS))
    for kind in kinds
}


def _manifests() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for page in PAGES:
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S):
            for doc in yaml.safe_load_all(block):
                if isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("nvidia.com/"):
                    found.append((f"{page.relative_to(REPO)}:{doc['kind']}/{doc['metadata']['name']}", doc))
    return found


MANIFESTS = _manifests()


def test_the_docs_show_an_example_of_every_kind() -> None:
    assert {doc["kind"] for _, doc in MANIFESTS} == {kind for _, kind in MODELS}


@pytest.mark.parametrize(("where", "doc"), MANIFESTS, ids=[where for where, _ in MANIFESTS])
def test_example_has_no_field_the_crd_would_drop(where: str, doc: dict[str, Any]) -> None:
    model = MODELS[(doc["apiVersion"], doc["kind"])]
    model.model_validate(doc)
    assert unknown_fields(doc, root_schema(model)) == []
