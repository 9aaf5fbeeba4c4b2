"""Kubernetes `metav1.Condition` lists as plain dicts: find, set, compare.

Setting a condition keeps its `lastTransitionTime` unless the status flips, so writing the same
condition again yields an identical list and therefore no status write. The time is a value the
caller read from its clock (internal.clock.Clock.wall): generation never reads a clock itself.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

from dynamo_operator.api.views import k8s
from dynamo_operator.internal.timestamps import rfc3339

Status = Literal["True", "False", "Unknown"]
# A condition as written in a status (`metav1.Condition`).
StatusCondition: TypeAlias = k8s.Condition


@dataclass(frozen=True, slots=True)
class Condition:
    """What a reconciler wants a condition to say; the timestamp is filled in by `set_condition`."""

    type: str
    status: Status
    reason: str
    message: str


def find(conditions: Iterable[StatusCondition] | None, type_: str) -> StatusCondition | None:
    """The condition of that type, or None."""
    for cond in conditions or ():
        if cond.get("type") == type_:
            return cond
    return None


def is_true(conditions: Iterable[StatusCondition] | None, type_: str) -> bool:
    cond = find(conditions, type_)
    return cond is not None and cond.get("status") == "True"


def set_condition(
    conditions: Sequence[StatusCondition] | None,
    want: Condition,
    *,
    observed_generation: int | None,
    now: datetime.datetime,
) -> list[StatusCondition]:
    """A new list with `want` upserted by type. The transition time moves (to `now`) only when the
    status changes."""
    out: list[StatusCondition] = []
    replaced = False
    for cond in conditions or ():
        if cond.get("type") != want.type:
            out.append(StatusCondition(**cond))
            continue
        replaced = True
        out.append(_render(want, observed_generation, _transition_time(cond, want, now)))
    if not replaced:
        out.append(_render(want, observed_generation, rfc3339(now)))
    return out


def set_conditions(
    conditions: Sequence[StatusCondition] | None,
    wants: Iterable[Condition],
    *,
    observed_generation: int | None,
    now: datetime.datetime,
) -> list[StatusCondition]:
    """`set_condition` for several conditions at once."""
    out = [StatusCondition(**c) for c in conditions or ()]
    for want in wants:
        out = set_condition(out, want, observed_generation=observed_generation, now=now)
    return out


def same(a: Sequence[StatusCondition] | None, b: Sequence[StatusCondition] | None) -> bool:
    """Equal as sets of conditions by type, comparing every field (timestamps included)."""
    by_type_a = {c.get("type"): dict(c) for c in a or ()}
    by_type_b = {c.get("type"): dict(c) for c in b or ()}
    return by_type_a == by_type_b


def _transition_time(old: StatusCondition, want: Condition, now: datetime.datetime) -> str:
    if old.get("status") == want.status and isinstance(old.get("lastTransitionTime"), str):
        return str(old["lastTransitionTime"])
    return rfc3339(now)


def _render(want: Condition, observed_generation: int | None, when: str) -> StatusCondition:
    cond: StatusCondition = {
        "type": want.type,
        "status": want.status,
        "reason": want.reason,
        # The API server requires a message field on metav1.Condition (it may be empty).
        "message": want.message,
        "lastTransitionTime": when,
    }
    if observed_generation is not None:
        cond["observedGeneration"] = observed_generation
    return cond
