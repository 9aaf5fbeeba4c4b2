"""The CRD generator's building blocks: type -> schema, markers, and the vendored-schema normaliser."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
import vendor_k8s_openapi as vendor
from dynamo_operator.api.v1alpha1 import ApiModel, RestartStrategyType
from dynamo_operator.api.v1alpha1.base import EmbeddedObject, Quantity, RawObject
from dynamo_operator.api.v1alpha1.crd import field_schema, k8s_schema, object_schema, type_schema
from dynamo_operator.api.v1alpha1.markers import Cel, K8sType, ListType, Schema
from pydantic import Field


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        pytest.param(str, {"type": "string"}, id="str"),
        pytest.param(bool, {"type": "boolean"}, id="bool"),
        pytest.param(int | None, {"type": "integer"}, id="optional-int"),
        pytest.param(
            dict[str, str], {"type": "object", "additionalProperties": {"type": "string"}}, id="map"
        ),
        pytest.param(list[str], {"type": "array", "items": {"type": "string"}}, id="list"),
        pytest.param(
            RestartStrategyType,
            {"type": "string", "enum": ["Sequential", "Parallel"]},
            id="enum-as-string-enum",
        ),
        pytest.param(
            Quantity,
            {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
            id="quantity",
        ),
        pytest.param(RawObject, {"type": "object", "x-kubernetes-preserve-unknown-fields": True}, id="raw"),
        pytest.param(
            EmbeddedObject,
            {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-embedded-resource": True,
            },
            id="embedded",
        ),
        pytest.param(
            Annotated[list[str], ListType("set"), Schema({"maxItems": 3})],
            {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
            id="markers",
        ),
    ],
)
def test_type_schema(annotation: Any, expected: dict[str, Any]) -> None:
    assert type_schema(annotation) == expected


def test_unions_other_than_optional_need_a_marker() -> None:
    with pytest.raises(TypeError, match="unions"):
        type_schema(int | str)


def test_k8s_type_is_inlined_without_refs_and_required_can_be_dropped() -> None:
    container = type_schema(
        Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.Container", drop_required=("name",))]
    )
    assert "$ref" not in str(container)
    assert "required" not in container
    assert k8s_schema("io.k8s.api.core.v1.Container")["required"] == ["name"]


def test_k8s_schema_returns_an_independent_copy() -> None:
    first = k8s_schema("io.k8s.api.core.v1.EnvVar")
    first["properties"].clear()
    assert k8s_schema("io.k8s.api.core.v1.EnvVar")["properties"]


class _Sample(ApiModel):
    """A sample object."""

    __cel__ = (
        Cel(rule="self.a > 0", message="a must be positive", field_path=".a", reason="FieldValueInvalid"),
    )

    a: int = Field(ge=0, description="An integer.")
    mode: RestartStrategyType = Field(RestartStrategyType.SEQUENTIAL, description="A mode.")
    flag: bool = Field(False, description="A flag.")
    note: str | None = Field(None, description="A note.")


def test_object_schema_has_required_defaults_descriptions_and_rules() -> None:
    schema = object_schema(_Sample)
    assert schema["description"] == "A sample object."
    assert schema["required"] == ["a"]
    assert schema["properties"]["a"] == {"type": "integer", "minimum": 0, "description": "An integer."}
    assert schema["properties"]["mode"]["default"] == "Sequential"
    assert schema["properties"]["flag"]["default"] is False
    assert "default" not in schema["properties"]["note"]
    assert schema["x-kubernetes-validations"] == [
        {
            "rule": "self.a > 0",
            "message": "a must be positive",
            "fieldPath": ".a",
            "reason": "FieldValueInvalid",
        }
    ]


def test_field_schema_uses_the_alias() -> None:
    schema = object_schema(_Sample)
    assert set(schema["properties"]) == {"a", "mode", "flag", "note"}
    assert field_schema(_Sample.model_fields["note"])["type"] == "string"


@pytest.mark.parametrize(
    ("text", "first"),
    [
        pytest.param("One. Two.", "One.", id="two-sentences"),
        pytest.param("Use e.g. this. Then more.", "Use e.g. this.", id="keeps-e.g."),
        pytest.param("Ends without a period", "Ends without a period.", id="adds-period"),
        pytest.param("Line\n\nbreaks   collapse. Next", "Line breaks collapse.", id="whitespace"),
        pytest.param('Value "x". More', 'Value "x".', id="quote-after"),
    ],
)
def test_first_sentence(text: str, first: str) -> None:
    assert vendor.first_sentence(text) == first


def test_normalise_keeps_only_structural_keywords_and_list_map_key_defaults() -> None:
    raw = {
        "description": "A port. Long text.",
        "type": "object",
        "required": ["containerPort"],
        "properties": {
            "containerPort": {"type": "integer", "format": "int32", "default": 0},
            "protocol": {"type": "string", "default": "TCP"},
            "name": {"type": "string", "default": ""},
            "ref": {
                "allOf": [{"$ref": "#/components/schemas/io.k8s.X"}],
                "default": {},
                "description": "X. Y",
            },
        },
        "x-kubernetes-patch-strategy": "merge",
        "x-kubernetes-map-type": "atomic",
    }
    out = vendor.normalise(raw, owner="P", keep_defaults={("P", "protocol"), ("P", "containerPort")})
    assert out["description"] == "A port."
    assert "x-kubernetes-patch-strategy" not in out and out["x-kubernetes-map-type"] == "atomic"
    assert "default" not in out["properties"]["containerPort"]  # required keys need no default
    assert out["properties"]["protocol"]["default"] == "TCP"
    assert "default" not in out["properties"]["name"]
    assert out["properties"]["ref"] == {"$ref": "io.k8s.X", "description": "X."}
