"""Restart of a graph's services (`spec.restart`), decided from what the cluster shows. Pure.

Each DCD carries the restart id it was last restarted for (`dcd_restart_id`: in its pod template's
annotations, or in the v1alpha1 `spec.annotations` of one written as v1alpha1) and reports
whether its workload has rolled; `plan_restart` turns that into the ids to stamp next and the
`status.restart` that describes the progress, so a restarted operator picks up where it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from dynamo_operator.api.v1alpha1.enums import RestartStrategyType
from dynamo_operator.api.views import v1beta1 as views
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.inputs import ComponentDeployment, RestartStatus
from dynamo_operator.internal.dynamo.common.stored_component import pod_annotation

# Plain strings in the status written (a str subclass would not survive every serialiser).
# Spelt out, so the status view's phase type checks them; equal to RestartPhase's (test_restart_phases.py).
RESTARTING: Final = "Restarting"
COMPLETED: Final = "Completed"


def dcd_restart_id(dcd: ComponentDeployment) -> str | None:
    """The restart id a DCD carries: its pod template's, else (a DCD written as v1alpha1, whose
    `spec.annotations` v1beta1 keeps in its reserved annotation) its v1alpha1 spec's."""
    return pod_annotation(dcd, consts.ANNOTATION_RESTART_AT)


@dataclass(frozen=True, slots=True)
class RestartPlan:
    """Which restart id each service's DCD should carry, and the status that describes the progress."""

    values: dict[str, str]  # service → restartAt value to write (absent: write none)
    status: RestartStatus | None  # None: nothing to report


def plan_restart(
    restart: views.Restart | None,
    services: Sequence[str],
    *,
    live_values: Mapping[str, str | None],
    rolled: Mapping[str, bool],
    previous: RestartStatus | None,
) -> RestartPlan:
    """Decide the restart step from what the cluster shows.

    `live_values[s]` is the restart id on service s's DCD (None: none, or no DCD yet); `rolled[s]`
    whether that DCD's workload runs its latest spec. Sequential restarts stamp the next service in
    `order` only once every earlier one is stamped and rolled; Parallel stamps all at once. A
    service whose DCD does not exist yet is stamped directly: new pods need no restart (user report
    #10955: adding an id at creation is not a restart).
    """
    values = {s: v for s in services if (v := live_values.get(s))}
    rid = restart.get("id") if restart else None
    if not rid:
        keep = previous if previous and previous.get("phase") == COMPLETED else None
        return RestartPlan(values, keep.copy() if keep else None)
    for s in services:
        if s not in live_values:
            values[s] = rid
    strategy = (restart.get("strategy") if restart else None) or {}
    if strategy.get("type") == RestartStrategyType.PARALLEL.value:
        for s in services:
            values[s] = rid
        in_progress = [s for s in sorted(services) if not (live_values.get(s) == rid and rolled.get(s))]
    else:
        order = [s for s in strategy.get("order") or () if s in services]
        order += sorted(s for s in services if s not in order)
        in_progress = []
        for s in order:
            if live_values.get(s) == rid:
                if rolled.get(s):
                    continue
                in_progress = [s]
                break
            values[s] = rid
            in_progress = [s]
            break
    status: RestartStatus = {"observedID": rid, "phase": RESTARTING if in_progress else COMPLETED}
    if in_progress:
        status["inProgress"] = in_progress
    return RestartPlan(values, status)
