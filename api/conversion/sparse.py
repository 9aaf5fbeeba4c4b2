"""Sparse differences between JSON objects, and the schema-driven pruning the API server applies.

Each kind's converter maps the fields both versions hold natively. Whatever a round trip through the
other version would not give back is recorded as a *sparse difference*: the keys, nested object by
nested object, where the original differs from what the round trip yields (a key the original lacks is
recorded as null, which means "remove"). Lists are compared whole. Applying the difference to the
round trip's result gives the original back.

A difference is applied only when it is still true to the live object: the restored candidate must
convert back to exactly the live value (after the pruning and defaulting the API server applies to
that version). An object edited in the other version since the difference was recorded therefore
keeps its live fields, and the stale difference is dropped (issue #36: live fields win).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

Json = dict[str, Any]


# Lists compared entry by entry when both sides name the same entries in the same order: a pod's
# containers, as upstream keeps them (`[{"name": "main", <what differs>}, {"name": "sidecar"}]`).
KEYED_LISTS = frozenset({"containers", "initContainers"})


def _names(value: Any) -> list[str] | None:
    if not isinstance(value, list) or not all(
        isinstance(v, dict) and isinstance(v.get("name"), str) for v in value
    ):
        return None
    names = [v["name"] for v in value]
    return names if len(set(names)) == len(names) else None


def _child(schema: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    if schema is None:
        return None
    properties = schema.get("properties") or {}
    if key in properties:
        child: Mapping[str, Any] = properties[key]
        return child
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        return additional
    return {} if schema.get("x-kubernetes-preserve-unknown-fields") else None


def diff(
    original: Mapping[str, Any], projected: Mapping[str, Any], schema: Mapping[str, Any] | None = None
) -> Json:
    """The sparse difference that turns `projected` into `original` (empty when they are equal).

    With `schema` (that of `original`'s version), a key `projected` has and `original` lacks is marked
    for removal only where the schema declares it: a key the version cannot hold is never stored, so
    its absence says nothing.
    """
    out: Json = {}
    for key, value in original.items():
        if key not in projected:
            out[key] = copy_tree(value)
            continue
        other = projected[key]
        if value == other:
            continue
        child = _child(schema, key) if schema is not None else None
        if isinstance(value, dict) and isinstance(other, dict) and value:
            inner = diff(value, other, child if schema is not None else None)
            if inner:
                out[key] = inner
        elif key in KEYED_LISTS and _names(value) is not None and _names(value) == _names(other):
            item_schema = child.get("items") if isinstance(child, Mapping) else None
            out[key] = [
                {"name": v["name"], **diff(v, o, item_schema if schema is not None else None)}
                for v, o in zip(value, other, strict=True)
            ]
        else:
            out[key] = copy_tree(value)
    for key in projected:
        if key not in original and (schema is None or _child(schema, key) is not None):
            out[key] = None
    return out


def overlay(base: Mapping[str, Any], sparse: Mapping[str, Any], *, empty_is_unset: bool = False) -> Json:
    """`base` with a sparse difference applied (a fresh object; neither input is changed).

    An empty object in the difference replaces what `base` holds there, as `diff` means it. With
    `empty_is_unset` it leaves a non-empty object alone instead: upstream's operator, written in Go,
    records a struct it did not change as `{}` (a container's `"resources": {}`), which means "no
    difference here", not "make it empty"."""
    out: Json = copy_tree(dict(base))
    for key, value in sparse.items():
        current = out.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(current, dict) and value:
            out[key] = overlay(current, value, empty_is_unset=empty_is_unset)
        elif empty_is_unset and value == {} and isinstance(current, dict) and current:
            continue
        elif (
            key in KEYED_LISTS
            and isinstance(current, list)
            and _names(value) is not None
            and _names(value) == _names(current)
        ):
            out[key] = [
                overlay(base_item, item, empty_is_unset=empty_is_unset)
                for base_item, item in zip(current, value, strict=True)
            ]
        else:
            out[key] = copy_tree(value)
    return out


def prune(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` without the fields `schema` does not declare (what the API server drops on write)."""
    return _structural(value, schema, defaults=False)


def normalize(value: Any, schema: Mapping[str, Any]) -> Any:
    """`value` pruned and defaulted as the API server stores it under `schema`."""
    return _structural(value, schema, defaults=True)


def _structural(value: Any, schema: Mapping[str, Any], *, defaults: bool) -> Any:
    if isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        keep_unknown = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
        if not properties and not isinstance(additional, dict):
            return copy_tree(value) if keep_unknown or schema.get("type") != "object" else {}
        out: Json = {}
        for key, child in value.items():
            if child is None:
                continue  # null in a non-nullable field is dropped
            if key in properties:
                out[key] = _structural(child, properties[key], defaults=defaults)
            elif isinstance(additional, dict):
                out[key] = _structural(child, additional, defaults=defaults)
            elif keep_unknown:
                out[key] = copy_tree(child)
        if defaults:
            for key, child_schema in properties.items():
                if key not in out and "default" in child_schema:
                    out[key] = _structural(copy_tree(child_schema["default"]), child_schema, defaults=True)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_structural(item, items, defaults=defaults) for item in value]
        return copy_tree(value)
    return value


@functools.cache
def _schemas() -> dict[str, Json]:
    """The version schemas the converters prune and default with (read once, `schemas.py`)."""
    from . import schemas

    alpha, beta = "nvidia.com/v1alpha1", "nvidia.com/v1beta1"
    alpha_dgd = schemas.root(alpha, "DynamoGraphDeployment")["properties"]
    beta_dgd = schemas.root(beta, "DynamoGraphDeployment")["properties"]
    return {
        "alpha.dgd.spec": alpha_dgd["spec"],
        "alpha.dgd.service": alpha_dgd["spec"]["properties"]["services"]["additionalProperties"],
        "beta.dgd.spec": beta_dgd["spec"],
        "beta.dgd.component": beta_dgd["spec"]["properties"]["components"]["items"],
        "alpha.dcd.spec": schemas.root("nvidia.com/v1alpha1", "DynamoComponentDeployment")["properties"][
            "spec"
        ],
        "beta.dcd.spec": schemas.root("nvidia.com/v1beta1", "DynamoComponentDeployment")["properties"][
            "spec"
        ],
    }


def schema(name: str) -> Json:
    """One of the schemas above, by name (`alpha.dgd.service`, `beta.dcd.spec`...)."""
    return _schemas()[name]


Convert = Callable[[Json], Json]


def carry_over(
    source: Json,
    forward: Convert,
    backward: Convert,
    *,
    target_schema: str,
    source_schema: str,
    saved: Json | None,
) -> tuple[Json, Json]:
    """Convert one unit (a component, or the top of a spec) and say what the target cannot hold.

    `saved` is the sparse difference the source carries from an earlier conversion out of the target
    version; it is applied when the candidate it gives converts back to exactly `source`. Returns the
    converted unit and the sparse difference of `source` that the target must carry.
    """
    converted = forward(source)
    if saved:
        # True to the live object: the candidate gives the source back, or, when the source holds
        # fields the target has no place for (a generated DCD's v1alpha1 labels), it shows the source
        # version exactly what the live fields alone show: the difference only adds what that
        # version cannot see. A difference recorded before an edit in the source version moves a
        # field the source sees, and is dropped. Read as upstream writes it (`empty_is_unset`) when
        # read as ours fails.
        source_schema_ = schema(source_schema)
        wanted = (normalize(source, source_schema_), normalize(backward(converted), source_schema_))
        for lenient in (False, True):
            candidate = overlay(converted, saved, empty_is_unset=lenient)
            if normalize(backward(candidate), source_schema_) in wanted:
                converted = candidate
                break
    round_trip = backward(prune(converted, schema(target_schema)))
    return converted, diff(source, round_trip, schema(source_schema))
