"""Conversion of Dynamo objects between nvidia.com/v1alpha1 and nvidia.com/v1beta1.

Pure functions on plain JSON objects (no I/O), shared by the conversion webhook and the offline
`dynamo-operator convert` tool. v1beta1 is the hub: each kind's module converts its v1alpha1 form to
v1beta1 (`to_v1beta1`) and back (`to_v1alpha1`); whatever one version cannot hold travels in the
kind's reserved annotations (`preserve.py`), so both round trips give back the object they started
from.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

GROUP = "nvidia.com"
V1ALPHA1 = f"{GROUP}/v1alpha1"
V1BETA1 = f"{GROUP}/v1beta1"
API_VERSIONS = (V1ALPHA1, V1BETA1)


class ConversionError(ValueError):
    """The object cannot be converted: unknown kind or version, or a shape neither version allows."""


Converter = Callable[[dict[str, Any]], dict[str, Any]]


def _converters(kind: str) -> tuple[Converter, Converter]:
    # Imported here, not at module level: each kind's module imports ConversionError from this one.
    from . import component, graph, request, scaling_adapter

    table: dict[str, tuple[Converter, Converter]] = {
        "DynamoGraphDeployment": (graph.to_v1beta1, graph.to_v1alpha1),
        "DynamoComponentDeployment": (component.to_v1beta1, component.to_v1alpha1),
        "DynamoGraphDeploymentRequest": (request.to_v1beta1, request.to_v1alpha1),
        "DynamoGraphDeploymentScalingAdapter": (scaling_adapter.to_v1beta1, scaling_adapter.to_v1alpha1),
    }
    try:
        return table[kind]
    except KeyError:
        raise ConversionError(f"kind {kind!r} has no v1beta1 conversion") from None


SUPPORTED_KINDS = (
    "DynamoGraphDeployment",
    "DynamoComponentDeployment",
    "DynamoGraphDeploymentRequest",
    "DynamoGraphDeploymentScalingAdapter",
)


def convert(obj: Mapping[str, object], to_api_version: str, *, owned: bool = False) -> dict[str, object]:
    """A deep copy of `obj` in `to_api_version`; the same version gives back an equal copy.
    `owned`: the caller hands `obj` over (a response just decoded, nobody else holds it), so it is
    converted in place of a copy and must not be used afterwards.

    Raises ConversionError for an unknown kind or version, or an object neither version can hold
    (components sharing a name, for instance). A damaged reserved annotation is not such an error.
    """
    source = obj.get("apiVersion")
    for version in (to_api_version, source):
        if version not in API_VERSIONS:
            raise ConversionError(f"unsupported apiVersion {version!r}, want {' or '.join(API_VERSIONS)}")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in SUPPORTED_KINDS:
        raise ConversionError(f"kind {kind!r} has no v1beta1 conversion")
    out: dict[str, Any] = dict(obj) if owned else copy_tree(dict(obj))
    if source == to_api_version:
        return out
    to_beta, to_alpha = _converters(kind)
    converted = to_beta(out) if to_api_version == V1BETA1 else to_alpha(out)
    converted["apiVersion"] = to_api_version
    return converted


__all__ = ["API_VERSIONS", "SUPPORTED_KINDS", "V1ALPHA1", "V1BETA1", "ConversionError", "convert"]
