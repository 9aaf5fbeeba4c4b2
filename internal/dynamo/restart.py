"""The restart state machine (`spec.restart` → `status.restart` and which services carry `restartAt`).

Pure: the caller says which services have finished restarting (`service_restarted`), and writes
the result. Phases written: Restarting, Completed (Pending/Failed exist in the API but no transition
produces them).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dynamo_operator.internal import consts as c

Obj = dict[str, Any]


class RestartPhase(enum.StrEnum):
    """`status.restart.phase` values."""

    PENDING = "Pending"
    RESTARTING = "Restarting"
    COMPLETED = "Completed"
    FAILED = "Failed"
    SUPERSEDED = "Superseded"


TERMINAL = frozenset({RestartPhase.COMPLETED, RestartPhase.FAILED, RestartPhase.SUPERSEDED})


def restart_order(restart: Mapping[str, Any], services: Sequence[str]) -> list[str]:
    """`strategy.order` when given, else the service names sorted."""
    order = list((restart.get("strategy") or {}).get("order") or [])
    return order or sorted(services)


def _parallel(restart: Mapping[str, Any]) -> bool:
    return (restart.get("strategy") or {}).get("type") == "Parallel"


def next_restart_status(
    restart: Mapping[str, Any] | None,
    previous: Mapping[str, Any] | None,
    services: Sequence[str],
    restarted: Callable[[str], bool],
    *,
    first_deploy: bool,
) -> Obj | None:
    """The next `status.restart`. `restarted(svc)` says a service's pods run with the current id.

    A graph created with a restart id is not restarted: its pods start fresh with the id already
    set (upstream bounced pods that were still loading their model).
    """
    restart_id = (restart or {}).get("id") or ""
    prev = dict(previous or {})
    prev_phase = prev.get("phase")
    if not restart_id:
        return prev if prev_phase in TERMINAL else None
    assert restart is not None
    if prev.get("observedID") == restart_id and prev_phase in TERMINAL:
        return prev
    new_id = prev.get("observedID") != restart_id
    if new_id and first_deploy:
        return {"observedID": restart_id, "phase": RestartPhase.COMPLETED.value}
    if _parallel(restart):
        pending = sorted(services) if new_id else list(prev.get("inProgress") or sorted(services))
        if not new_id:
            pending = [s for s in pending if not restarted(s)]
        if not pending:
            return {"observedID": restart_id, "phase": RestartPhase.COMPLETED.value}
        return {"observedID": restart_id, "phase": RestartPhase.RESTARTING.value, "inProgress": pending}
    order = restart_order(restart, services)
    if not order:
        return {"observedID": restart_id, "phase": RestartPhase.COMPLETED.value}
    if new_id:
        return {"observedID": restart_id, "phase": RestartPhase.RESTARTING.value, "inProgress": [order[0]]}
    current = (prev.get("inProgress") or [order[0]])[0]
    index = order.index(current) if current in order else 0
    while index < len(order) and restarted(order[index]):
        index += 1
    if index >= len(order):
        return {"observedID": restart_id, "phase": RestartPhase.COMPLETED.value}
    return {"observedID": restart_id, "phase": RestartPhase.RESTARTING.value, "inProgress": [order[index]]}


def restart_selection(
    restart: Mapping[str, Any] | None,
    status: Mapping[str, Any] | None,
    services: Sequence[str],
    existing: Mapping[str, str],
) -> dict[str, str]:
    """Service → restart id its DCD must carry. Services not selected keep the value their DCD has
    (`existing`), so a service restarted earlier is not bounced again."""
    out = {s: existing[s] for s in services if existing.get(s)}
    if not status:
        return out
    observed = str(status.get("observedID") or "")
    restart_id = (restart or {}).get("id") or ""
    phase = status.get("phase")
    if not restart_id:
        return {s: observed for s in services} if observed else out
    if phase == RestartPhase.SUPERSEDED:
        return out
    if phase == RestartPhase.COMPLETED or _parallel(restart or {}):
        return {s: restart_id for s in services}
    order = restart_order(restart or {}, services)
    in_progress = [s for s in status.get("inProgress") or [] if s in order]
    last = max((order.index(s) for s in in_progress), default=0)
    for s in order[: last + 1]:
        out[s] = restart_id
    return out


def service_restarted(dcd: Mapping[str, Any] | None, restart_id: str) -> bool:
    """A DCD has finished restarting for `restart_id`: it carries the id, its controller observed that
    generation, and it is Available."""
    if not dcd:
        return False
    spec_annotations = (dcd.get("spec") or {}).get("annotations") or {}
    if spec_annotations.get(c.ANNOTATION_RESTART_AT) != restart_id:
        return False
    status = dcd.get("status") or {}
    generation = (dcd.get("metadata") or {}).get("generation") or 0
    if (status.get("observedGeneration") or 0) < generation:
        return False
    return any(
        cond.get("type") == c.CONDITION_AVAILABLE and cond.get("status") == "True"
        for cond in status.get("conditions") or []
    )
