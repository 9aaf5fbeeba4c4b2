"""The order of one sync's writes: kinds the API server checks against others go last."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

WRITTEN_LAST = frozenset({"RoleBinding"})
"""Kinds written after all others: the API server checks a RoleBinding against the Role it names
(RBAC's escalation check) and answers 404 "role not found" while that Role is not yet there."""

W = TypeVar("W")


def waves(writes: Sequence[W], kind: Callable[[W], str]) -> list[list[W]]:
    """`writes` in order, as waves each sent concurrently: everything else, then `WRITTEN_LAST`."""
    first = [w for w in writes if kind(w) not in WRITTEN_LAST]
    last = [w for w in writes if kind(w) in WRITTEN_LAST]
    return [wave for wave in (first, last) if wave]
