"""Builds the CustomResourceDefinitions of the five kinds from the pydantic models.

The schema of each field comes from its type annotation and the markers in `markers.py`; embedded
Kubernetes types are inlined from `k8s_schemas.json` (vendored by hack/vendor_k8s_openapi.py).
`hack/gen_crds.py` writes the result to config/crd/bases; a unit test keeps the two in sync.
"""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import enum
import functools
import inspect
import json
import types
import typing
from importlib import resources
from typing import Any, Union

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from .base import ApiModel
from .groupversion import GROUP, VERSION
from .markers import Cel, CrdInfo, IntOrString, K8sType, ListType, PreserveUnknown, Schema

Json = dict[str, Any]

_INT_OR_STRING: Json = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
_TYPE_META_DESCRIPTIONS = {
    "apiVersion": f"Versioned schema of this representation of an object ({GROUP}/{VERSION}).",
    "kind": "REST resource this object represents.",
}


@functools.cache
def k8s_definitions() -> dict[str, Json]:
    """The vendored Kubernetes schemas, keyed by OpenAPI definition name (with `$ref` between them)."""
    text = resources.files(__package__).joinpath("k8s_schemas.json").read_text()
    data: dict[str, Json] = json.loads(text)
    return data


# Whether inlined Kubernetes types keep their upstream descriptions. A CRD serving two versions that
# both embed PodSpec would not fit the 256 KiB last-applied annotation of a client-side apply with
# them (about 430 KB), so multi-version CRDs leave them out (`build_crd`); our own fields keep theirs.
_K8S_DESCRIPTIONS: contextvars.ContextVar[bool] = contextvars.ContextVar("k8s_descriptions", default=True)


def k8s_schema(name: str) -> Json:
    """A Kubernetes type with every `$ref` inlined; a fresh copy the caller may change."""
    if _K8S_DESCRIPTIONS.get():
        return copy.deepcopy(_inlined(name))
    undescribed: Json = _undescribed(_inlined(name))
    return undescribed


def _undescribed(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _undescribed(value) for key, value in node.items() if key != "description"}
    if isinstance(node, list):
        return [_undescribed(value) for value in node]
    return node


@functools.cache
def _inlined(name: str) -> Json:
    inlined: Json = _inline(k8s_definitions()[name])
    return inlined


def _inline(node: Any) -> Any:
    if isinstance(node, dict):
        if "$ref" in node:
            out = dict(_inlined(node["$ref"]))
            if "description" in node:
                out["description"] = node["description"]
            return out
        return {key: _inline(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(value) for value in node]
    return node


def _describe(text: str | None) -> str | None:
    if not text:
        return None
    return inspect.cleandoc(text).strip() or None


def _cel(rule: Cel) -> Json:
    out: Json = {"rule": rule.rule}
    if rule.message:
        out["message"] = rule.message
    if rule.message_expression:
        out["messageExpression"] = rule.message_expression
    if rule.field_path:
        out["fieldPath"] = rule.field_path
    if rule.reason:
        out["reason"] = rule.reason
    if rule.optional_old_self:
        out["optionalOldSelf"] = True
    return out


def _apply_markers(schema: Json, metadata: typing.Iterable[Any]) -> Json:
    """Merges Annotated metadata (our markers and annotated_types constraints) into a schema."""
    for marker in metadata:
        match marker:
            case Cel():
                schema.setdefault("x-kubernetes-validations", []).append(_cel(marker))
            case ListType(kind=kind, keys=keys):
                schema["x-kubernetes-list-type"] = kind
                if keys:
                    schema["x-kubernetes-list-map-keys"] = list(keys)
            case Schema(extra=extra):
                schema.update(extra)
            case annotated_types.Ge(ge=value):
                schema["minimum"] = value
            case annotated_types.Le(le=value):
                schema["maximum"] = value
            case annotated_types.MinLen(min_length=value):
                schema["minItems" if schema.get("type") == "array" else "minLength"] = value
            case annotated_types.MaxLen(max_length=value):
                schema["maxItems" if schema.get("type") == "array" else "maxLength"] = value
            case _ if callable(getattr(marker, "replacement", None)):
                # A schema given whole (api/v1beta1/types.py: Replace); put it before other markers.
                schema = marker.replacement()
            case _ if callable(getattr(marker, "transform_schema", None)):
                # A marker that edits the schema it is given (api/v1beta1/types.py: ItemRules).
                schema = marker.transform_schema(schema)
    return schema


def type_schema(annotation: Any) -> Json:
    """The structural schema of one Python type annotation."""
    if annotation is Any:
        return {}  # any JSON value: a marker says what the schema is (api/v1beta1/types.py: AnyJson)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        return _annotated_schema(base, metadata)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return type_schema(args[0])
        raise TypeError(f"unions other than Optional need a marker: {annotation}")
    if origin is list:
        (item,) = typing.get_args(annotation)
        return {"type": "array", "items": type_schema(item)}
    if origin is dict:
        key, value = typing.get_args(annotation)
        if key is not str:
            raise TypeError(f"map keys must be strings: {annotation}")
        if value is Any:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object", "additionalProperties": type_schema(value)}
    if inspect.isclass(annotation):
        if issubclass(annotation, enum.Enum):
            return {"type": "string", "enum": [member.value for member in annotation]}
        if issubclass(annotation, bool):
            return {"type": "boolean"}
        if issubclass(annotation, float):
            return {"type": "number"}
        if issubclass(annotation, int):
            return {"type": "integer"}
        if issubclass(annotation, str):
            return {"type": "string"}
        if issubclass(annotation, BaseModel):
            return object_schema(annotation)
    raise TypeError(f"no schema for {annotation!r}")


def _annotated_schema(base: Any, metadata: list[Any]) -> Json:
    for marker in metadata:
        match marker:
            case K8sType(name=name, drop_required=drop):
                schema = k8s_schema(name)
                _drop_required(schema, drop)
                return _apply_markers(schema, metadata)
            case IntOrString():
                return _apply_markers(copy.deepcopy(_INT_OR_STRING), metadata)
            case PreserveUnknown(embedded_resource=embedded):
                schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                if embedded:
                    schema["x-kubernetes-embedded-resource"] = True
                return _apply_markers(schema, metadata)
    return _apply_markers(type_schema(base), metadata)


def _drop_required(schema: Json, names: typing.Iterable[str]) -> None:
    required = [name for name in schema.get("required", []) if name not in set(names)]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)


def field_schema(info: FieldInfo) -> Json:
    """The schema of one model field: its type, constraints, default and description."""
    schema = _apply_markers(type_schema(info.annotation), info.metadata)
    if (description := _describe(info.description)) is not None:
        schema["description"] = description
    default = info.default
    if default is not PydanticUndefined and default is not None:
        schema["default"] = default.value if isinstance(default, enum.Enum) else default
    return schema


def object_schema(model: type[BaseModel]) -> Json:
    """The schema of a model: its own fields (plus the Kubernetes base type it extends, if any)."""
    base: K8sType | None = getattr(model, "__k8s_base__", None)
    if base is not None:
        schema = k8s_schema(base.name)
        _drop_required(schema, base.drop_required)
    else:
        schema = {"type": "object"}
    if (description := _describe(model.__doc__)) is not None:
        schema["description"] = description
    properties: Json = schema.setdefault("properties", {})
    required: list[str] = list(schema.get("required", []))
    for name, info in model.model_fields.items():
        key = info.alias or name
        properties[key] = field_schema(info)
        if info.is_required():
            required.append(key)
    if required:
        schema["required"] = sorted(required)
    rules: tuple[Cel, ...] = getattr(model, "__cel__", ())
    if rules:
        schema["x-kubernetes-validations"] = [_cel(rule) for rule in rules]
    for path in getattr(model, "__crd_omit__", ()):
        _omit(schema, path.split("."))
    return schema


def _omit(schema: Json, path: list[str]) -> None:
    """Drop the property at `path` (a fresh schema: nested ones are built per use, never shared)."""
    *parents, leaf = path
    node = schema
    for key in parents:
        node = node["properties"][key]
    del node["properties"][leaf]


def root_schema(kind: type[ApiModel]) -> Json:
    """The openAPIV3Schema of a top-level kind."""
    schema = object_schema(kind)
    for key, description in _TYPE_META_DESCRIPTIONS.items():
        schema["properties"][key] = {"type": "string", "description": description}
    # The API server refuses any keyword but `type` on the root metadata.
    schema["properties"]["metadata"] = {"type": "object"}
    schema["required"] = ["spec"]
    return schema


def crd_info(kind: type[ApiModel]) -> CrdInfo:
    """The CRD-only facts (names, columns, subresources) a top-level kind declares."""
    info: CrdInfo = getattr(kind, "__crd__")  # noqa: B009 - dunder ClassVar, not a pydantic field
    return info


def _version(kind: type[ApiModel], name: str, storage: bool, deprecated_for: str | None = None) -> Json:
    """One `spec.versions[]` entry of a kind's CRD: schema, subresources and printer columns."""
    info = crd_info(kind)
    subresources: Json = {"status": {}}
    if info.scale is not None:
        scale: Json = {
            "specReplicasPath": info.scale.spec_replicas_path,
            "statusReplicasPath": info.scale.status_replicas_path,
        }
        if info.scale.label_selector_path:
            scale["labelSelectorPath"] = info.scale.label_selector_path
        subresources["scale"] = scale
    columns = []
    for column in info.printer_columns:
        entry: Json = {"name": column.name, "type": column.type, "jsonPath": column.json_path}
        if column.description:
            entry["description"] = column.description
        if column.priority:
            entry["priority"] = column.priority
        columns.append(entry)
    schema = root_schema(kind)
    if name != VERSION:
        # Later versions follow upstream's roots: spec may be omitted (it is `omitempty` there).
        schema.pop("required", None)
        schema["properties"]["apiVersion"]["description"] = (
            f"Versioned schema of this representation of an object ({GROUP}/{name})."
        )
    kind_name = str(kind.model_fields["kind"].default)
    entry_out: Json = {"name": name, "served": True, "storage": storage}
    if deprecated_for is not None:
        # kubectl prints the warning on every request of this version; the text says what to do.
        entry_out["deprecated"] = True
        entry_out["deprecationWarning"] = (
            f"{GROUP}/{name} {kind_name} is deprecated; write {GROUP}/{deprecated_for} "
            f"(`dynamo-operator convert --to {deprecated_for}` rewrites a manifest)"
        )
    entry_out["subresources"] = subresources
    entry_out["additionalPrinterColumns"] = columns
    entry_out["schema"] = {"openAPIV3Schema": schema}
    return entry_out


@dataclasses.dataclass(frozen=True, slots=True)
class WebhookConversion:
    """`spec.conversion` of a multi-version CRD: the API server calls `path` on this Service.

    No caBundle here: the operator (or cert-manager) injects it at run time, and until then only
    requests that need a conversion fail.
    """

    service_name: str
    service_namespace: str
    path: str = "/convert"
    # The Service's port, which is also the operator's: on a local control plane an ExternalName
    # Service to a loopback address is dialled on this port (docs/operating/conversion-webhook.md).
    port: int = 443

    def stanza(self) -> Json:
        return {
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {
                    "service": {
                        "name": self.service_name,
                        "namespace": self.service_namespace,
                        "path": self.path,
                        "port": self.port,
                    }
                },
                "conversionReviewVersions": ["v1"],
            },
        }


def build_crd(
    kind: type[ApiModel],
    others: typing.Sequence[tuple[str, type[ApiModel]]] = (),
    conversion: WebhookConversion | None = None,
    *,
    storage_version: str = VERSION,
) -> Json:
    """The CustomResourceDefinition of one top-level kind.

    `kind` is the v1alpha1 model; `others` are further served versions, (name, model), converted by
    `conversion`; `storage_version` names the stored one. A v1alpha1 that is not stored is served
    deprecated (the operator reads and writes the storage version).
    """
    info = crd_info(kind)
    kind_name = str(kind.model_fields["kind"].default)
    token = _K8S_DESCRIPTIONS.set(not others)
    try:
        alpha_stored = storage_version == VERSION
        deprecated_for = None if alpha_stored else storage_version
        versions = [_version(kind, VERSION, storage=alpha_stored, deprecated_for=deprecated_for)]
        versions += [_version(model, name, storage=name == storage_version) for name, model in others]
    finally:
        _K8S_DESCRIPTIONS.reset(token)
    spec: Json = {
        "group": GROUP,
        "names": {
            "kind": kind_name,
            "listKind": f"{kind_name}List",
            "plural": info.plural,
            "singular": info.singular,
            "shortNames": list(info.short_names),
            "categories": list(info.categories),
        },
        "scope": "Namespaced",
        "versions": versions,
    }
    if conversion is not None and others:
        spec["conversion"] = conversion.stanza()
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{info.plural}.{GROUP}",
            "labels": {"app.kubernetes.io/name": "dynamo-operator", "app.kubernetes.io/part-of": "dynamo"},
        },
        "spec": spec,
    }


def crd_file_name(kind: type[ApiModel]) -> str:
    """`nvidia.com_<plural>.yaml`, the file under config/crd/bases."""
    return f"{GROUP}_{crd_info(kind).plural}.yaml"
