"""Scalar and embedded-type aliases the v1beta1 models share (formats as upstream's schema spells them)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Annotated, Any

from ..v1alpha1.markers import Cel, IntOrString, K8sType, ListType, PreserveUnknown, Schema

Json = dict[str, Any]

Int32 = Annotated[int, Schema({"format": "int32"})]
Int64 = Annotated[int, Schema({"format": "int64"})]
NonNegativeInt32 = Annotated[int, Schema({"format": "int32", "minimum": 0})]
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
Quantity = Annotated[int | str, IntOrString(), Schema({"pattern": QUANTITY_PATTERN})]
Time = Annotated[str, Schema({"format": "date-time"})]
DNSLabel = Annotated[
    str, Schema({"minLength": 1, "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"})
]
TopologyDomain = Annotated[str, Schema({"pattern": "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"})]
RawObject = Annotated[dict[str, Any], PreserveUnknown()]
StringMap = dict[str, str]
EnvVar = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.EnvVar")]
CoreConfigMapKeySelector = Annotated[dict[str, Any], K8sType("io.k8s.api.core.v1.ConfigMapKeySelector")]


@dataclass(frozen=True, slots=True)
class Replace:
    """A schema given whole (`crd.py` starts from it instead of the Python type's schema)."""

    schema: Json = field(default_factory=dict)
    # The Kubernetes type the value is, for its typed view (hack/gen_views.py), when the schema is
    # that type's with bounds added.
    view: str | None = None

    def __hash__(self) -> int:
        return hash(repr(sorted(self.schema.items())))

    def replacement(self) -> Json:
        return copy.deepcopy(self.schema)


@dataclass(frozen=True, slots=True)
class ItemRules:
    """CEL rules added to the items of one array property of the schema (inside embedded k8s types)."""

    prop: str
    rules: tuple[Cel, ...]

    def transform_schema(self, schema: Json) -> Json:
        items = schema["properties"][self.prop]["items"]
        items.setdefault("x-kubernetes-validations", []).extend(
            {"rule": rule.rule, "message": rule.message} for rule in self.rules
        )
        return schema


# A value of any JSON type kept as written (EPP plugin parameters).
AnyJson = Annotated[Any, Replace({"x-kubernetes-preserve-unknown-fields": True})]

# metav1.Condition with the bounds of its Go markers (the published OpenAPI of Condition lacks them).
_CONDITION_SCHEMA: Json = {
    "type": "object",
    "required": ["lastTransitionTime", "message", "reason", "status", "type"],
    "properties": {
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "message": {"type": "string", "maxLength": 32768},
        "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
        "reason": {
            "type": "string",
            "maxLength": 1024,
            "minLength": 1,
            "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        },
        "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "type": {
            "type": "string",
            "maxLength": 316,
            "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
        },
    },
}
Condition = Annotated[
    dict[str, Any], Replace(_CONDITION_SCHEMA, view="io.k8s.apimachinery.pkg.apis.meta.v1.Condition")
]
Conditions = Annotated[list[Condition], ListType("map", ("type",))]

__all__ = [
    "AnyJson",
    "Cel",
    "Condition",
    "Conditions",
    "CoreConfigMapKeySelector",
    "DNSLabel",
    "EnvVar",
    "Int32",
    "Int64",
    "ItemRules",
    "Json",
    "ListType",
    "NonNegativeInt32",
    "Quantity",
    "RawObject",
    "Replace",
    "Schema",
    "StringMap",
    "Time",
    "TopologyDomain",
]
