"""JSON merge patches (RFC 7386) computed from two versions of a document.

The API server stores no `null`s: a field set to None is absent when read back. `without_none`
gives a desired document that form before it is compared with what the server holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_patch(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """The patch turning `old` into `new`: maps recurse, anything else replaces, null deletes."""
    old = old or {}
    patch: dict[str, Any] = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        before = old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            sub = merge_patch(before, value)
            if sub:
                patch[key] = sub
        elif before != value or key not in old:
            patch[key] = value
    return patch


def without_none(value: Any) -> Any:
    """`value` with None dropped at every depth: the form the API server stores and hands back."""
    if isinstance(value, Mapping):
        return {k: without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_none(v) for v in value]
    return value
