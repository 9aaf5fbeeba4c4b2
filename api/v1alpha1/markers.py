"""Schema markers carried in `Annotated[...]` metadata and read by the CRD generator (`crd.py`).

Pydantic ignores these objects; they describe what a plain JSON schema cannot say: which embedded
Kubernetes type a `dict` field stands for, CEL rules, list semantics and schemaless subtrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class K8sType:
    """The field is the Kubernetes type `name` (an OpenAPI definition name, vendored in k8s_schemas.json).

    `optional` lists properties whose `required` marker is dropped (PodSpec.containers in extraPodSpec).
    """

    name: str
    drop_required: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Cel:
    """One `x-kubernetes-validations` entry; `field_path` makes the error name the offending field."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    field_path: str | None = None
    reason: str | None = None
    optional_old_self: bool = False


@dataclass(frozen=True, slots=True)
class ListType:
    """`x-kubernetes-list-type` (atomic, set or map) and, for maps, the key properties."""

    kind: str
    keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PreserveUnknown:
    """A schemaless object subtree (`x-kubernetes-preserve-unknown-fields`)."""

    embedded_resource: bool = False


@dataclass(frozen=True, slots=True)
class IntOrString:
    """A Kubernetes Quantity or IntOrString value (`x-kubernetes-int-or-string`)."""


@dataclass(frozen=True, slots=True)
class Schema:
    """Extra OpenAPI keywords merged verbatim into the field schema (maxLength, pattern, format...)."""

    extra: dict[str, object] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self.extra.items())))


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """One `additionalPrinterColumns` entry of `kubectl get`."""

    name: str
    json_path: str
    type: str = "string"
    description: str | None = None
    priority: int = 0


@dataclass(frozen=True, slots=True)
class ScaleSubresource:
    """The paths of a `scale` subresource."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


@dataclass(frozen=True, slots=True)
class CrdInfo:
    """What the CRD of a top-level kind says beyond its schema."""

    plural: str
    singular: str
    short_names: tuple[str, ...]
    printer_columns: tuple[PrinterColumn, ...]
    categories: tuple[str, ...] = ("dynamo",)
    scale: ScaleSubresource | None = None
