"""DynamoGraphDeploymentScalingAdapter between v1alpha1 and v1beta1.

The two versions differ in one name: the reference to the scaled part of the graph says
`serviceName` in v1alpha1 and `componentName` in v1beta1 (the graph's services became components).
Everything else, metadata and status included, is the same in both, so nothing needs a reserved
annotation; any other field is carried over untouched.
"""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

from . import V1ALPHA1, V1BETA1

_ALPHA_KEY = "serviceName"
_BETA_KEY = "componentName"


def _renamed(obj: dict[str, Any], old: str, new: str, api_version: str) -> dict[str, Any]:
    out = copy_tree(obj)
    out["apiVersion"] = api_version
    spec = out.get("spec")
    ref = spec.get("dgdRef") if isinstance(spec, dict) else None
    if isinstance(spec, dict) and isinstance(ref, dict) and old in ref:
        # Rebuilt in order so the renamed key keeps its place among the reference's keys.
        spec["dgdRef"] = {(new if key == old else key): value for key, value in ref.items() if key != new}
    return out


def to_v1beta1(obj: dict[str, Any]) -> dict[str, Any]:
    """The v1beta1 form of a v1alpha1 adapter (`obj` is not changed)."""
    return _renamed(obj, _ALPHA_KEY, _BETA_KEY, V1BETA1)


def to_v1alpha1(obj: dict[str, Any]) -> dict[str, Any]:
    """The v1alpha1 form of a v1beta1 adapter (`obj` is not changed)."""
    return _renamed(obj, _BETA_KEY, _ALPHA_KEY, V1ALPHA1)
