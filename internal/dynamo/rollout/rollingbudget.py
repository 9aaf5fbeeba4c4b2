"""How many replicas the old and the new worker DCDs of one service get during a managed rolling update.
Pure arithmetic, the same as upstream's operator (reference `dynamo-dgd-dcd.md` §2.6 step 4), plus one
guarantee upstream leaves to the annotations: a service never drops to zero ready workers.

Per service, with `desired` its replica count and `new_ready` the ready replicas of its new DCD:
- `maxSurge` / `maxUnavailable` come from the service's annotations (an integer or a percentage,
  default 25%); percentages of `desired` round up for surge and down for unavailable, and when both
  come to 0 surge becomes 1 (else nothing could ever move);
- old = max(0, desired - new_ready - maxUnavailable): the old set shrinks as the new one turns ready;
- new = clamp(desired + maxSurge - old, 0, desired).

The guarantee: while the new DCD has no ready replica the old set keeps at least one, and the new DCD
then gets at least one (a single surged pod), so `maxUnavailable: 100%` or `1` with one replica
cannot take every worker of the service away at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from dynamo_operator.internal import consts as c


@dataclass(frozen=True, slots=True)
class Budget:
    """Replica counts for one service this round: its old DCDs together, and its new DCD."""

    old: int
    new: int


def scaled(value: str, desired: int, *, round_up: bool) -> int:
    """An int-or-percent annotation value resolved against `desired`; unreadable values count as the
    default 25% (an annotation typo must not stall or stampede a rollout)."""
    text = value.strip()
    if text.endswith("%"):
        try:
            percent = float(text[:-1])
        except ValueError:
            return scaled(c.DEFAULT_ROLLING_UPDATE_PERCENT, desired, round_up=round_up)
        exact = max(percent, 0.0) * desired / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    try:
        return max(int(text), 0)
    except ValueError:
        return scaled(c.DEFAULT_ROLLING_UPDATE_PERCENT, desired, round_up=round_up)


def surge_and_unavailable(annotations: Mapping[str, str], desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a service, resolved against its `desired` replicas."""
    surge = scaled(
        str(annotations.get(c.ANNOTATION_MAX_SURGE) or c.DEFAULT_ROLLING_UPDATE_PERCENT),
        desired,
        round_up=True,
    )
    unavailable = scaled(
        str(annotations.get(c.ANNOTATION_MAX_UNAVAILABLE) or c.DEFAULT_ROLLING_UPDATE_PERCENT),
        desired,
        round_up=False,
    )
    if surge == 0 and unavailable == 0:
        surge = 1
    return surge, unavailable


def budget(*, desired: int, new_ready: int, annotations: Mapping[str, str]) -> Budget:
    """The old and new replica counts of one service for this round (see the module docstring)."""
    surge, unavailable = surge_and_unavailable(annotations, desired)
    old = max(0, desired - new_ready - unavailable)
    new = min(max(desired + surge - old, 0), desired)
    if desired > 0 and new_ready == 0:
        old, new = max(old, 1), max(new, 1)
    return Budget(old=old, new=new)


def share_out(total: int, current: list[tuple[str, int]]) -> dict[str, int]:
    """Give `total` replicas to a service's old DCDs, listed newest first with their current replicas:
    each keeps up to what it has, the rest go to zero (so old sets only ever shrink)."""
    out: dict[str, int] = {}
    left = total
    for name, replicas in current:
        out[name] = min(replicas, left)
        left -= out[name]
    return out
