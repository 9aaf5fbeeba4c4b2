"""Upstream's v1beta1 examples are whole under our v1beta1 models and schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api import v1beta1
from dynamo_operator.api.conversion import sparse
from dynamo_operator.api.v1alpha1.crd import root_schema

EXAMPLES = Path(__file__).resolve().parents[4] / "shared" / "upstream-examples-2a6da14c" / "examples-applied"
SCHEMA = root_schema(v1beta1.DynamoGraphDeployment)


def _graphs() -> list[Any]:
    params = [
        pytest.param(doc, id=f"{path.stem}:{doc['metadata']['name']}")
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict) and doc.get("kind") == "DynamoGraphDeployment"
    ]
    assert params, f"no examples under {EXAMPLES}"
    return params


@pytest.mark.parametrize("doc", _graphs())
def test_schema_keeps_every_field_of_the_example(doc: dict[str, Any]) -> None:
    """Nothing an example writes is pruned by our v1beta1 schema (the API server would drop it)."""
    assert sparse.prune(doc["spec"], SCHEMA["properties"]["spec"]) == doc["spec"]


@pytest.mark.parametrize("doc", _graphs())
def test_model_reads_the_example(doc: dict[str, Any]) -> None:
    graph = v1beta1.DynamoGraphDeployment.model_validate(doc)
    assert [c.name for c in graph.spec.components or []] == [c["name"] for c in doc["spec"]["components"]]
