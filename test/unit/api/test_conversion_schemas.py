"""api/conversion/schemas.json: the schemas the conversion reads, kept as data so that converting
needs no pydantic model (hack/gen_conversion_schemas.py writes it from the models)."""

from __future__ import annotations

import gen_conversion_schemas
from dynamo_operator.api import v1alpha1, v1beta1
from dynamo_operator.api.conversion import schemas
from dynamo_operator.api.v1alpha1.crd import root_schema


def test_the_committed_schemas_are_what_the_models_say() -> None:
    assert gen_conversion_schemas.OUT.read_text() == gen_conversion_schemas.text(), (
        "api/conversion/schemas.json is stale: run make manifests"
    )


def test_a_schema_read_is_the_crds_schema_without_descriptions() -> None:
    read = schemas.root(v1beta1.API_VERSION, "DynamoGraphDeployment")
    expected = gen_conversion_schemas.structural(root_schema(v1beta1.DynamoGraphDeployment))
    assert read == expected
    assert "description" not in read["properties"]["spec"]


def test_every_converted_kind_has_a_schema_in_both_versions() -> None:
    for kind in ("DynamoGraphDeployment", "DynamoComponentDeployment", "DynamoGraphDeploymentRequest"):
        for version in (v1alpha1.API_VERSION, v1beta1.API_VERSION):
            assert schemas.root(version, kind)["properties"]["spec"]["type"] == "object"


def test_a_field_named_description_is_kept_while_schema_descriptions_go() -> None:
    schema = {
        "type": "object",
        "description": "an object",
        "properties": {"description": {"type": "string", "description": "a field"}},
    }
    assert gen_conversion_schemas.structural(schema) == {
        "type": "object",
        "properties": {"description": {"type": "string"}},
    }
