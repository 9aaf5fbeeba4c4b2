"""Copying decoded JSON: the trees of plain dicts and lists every Kubernetes object is here.

`copy.deepcopy` is general (a memo of every node, a dispatch per type, `__reduce_ex__` for the rest)
and costs several times what a JSON tree needs; at scale it was a sizeable share of the operator's CPU.
`copy_tree` copies plain dicts and lists node by node, shares the immutable leaves (str, int, float,
bool, None) as deepcopy does, and hands anything else to deepcopy, so its result is always a deep copy.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar, cast

T = TypeVar("T")

_LEAVES = (str, int, float, bool, type(None))


def copy_tree(value: T) -> T:
    """A deep copy of `value`: new dicts and lists all the way down, leaves shared."""
    return cast(T, _copy(value))


def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: _copy(item) for key, item in value.items()}
    if kind is list:
        return [_copy(item) for item in value]
    if kind in _LEAVES:
        return value
    return copy.deepcopy(value)
