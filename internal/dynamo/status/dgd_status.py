"""A DGD's status as data: what to write given the status it has and what this round found. Pure.

Two outcomes: the graph was refused (`rejected_status`: state `failed`, a `Ready=False` condition
naming the reason, the rest of status kept), or it was synced (`synced_status`: state, the `Ready`
condition, the components' replica picture, restart and rolling-update progress). `explain` adds what
the DCDs alone cannot say (old workers still serving, PVCs the graph waits for) to the verdict first.
The `Ready` condition's `lastTransitionTime` moves only when its status flips (`conditions`), so
the same round twice yields the same status and no write.

The status is built as the graph stores it (v1beta1): each service's counts under
`status.components`, the rolled workers in `rollingUpdate.updatedComponents`.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Final, cast

from dynamo_operator.internal.dynamo.common.inputs import (
    DgdStatus,
    RestartStatus,
    RollingUpdateStatus,
    dgd_status_view,
)
from dynamo_operator.internal.dynamo.rollout.rollingupdate import (
    MESSAGE_IN_PROGRESS,
    REASON_IN_PROGRESS,
    RollingPlan,
)
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.readiness import GraphStatus
from dynamo_operator.internal.dynamo.status.replicas import as_component_replicas

READY = "Ready"
STATE_PENDING: Final = "pending"
STATE_SUCCESSFUL: Final = "successful"
STATE_FAILED: Final = "failed"
REASON_ALL_READY = "all_resources_are_ready"
REASON_SOME_NOT_READY = "some_resources_are_not_ready"


def rejected_status(
    old: Mapping[str, object], *, reason: str, message: str, generation: int | None, now: datetime.datetime
) -> DgdStatus:
    """`old` turned `failed` with `Ready=False` (reason, message); services, restart and rolling
    progress stay as they were (nothing was applied, so they still describe the cluster). `old`
    comes as any kind's refusal reporter holds it (internal/apply/refusal.py), hence the view here."""
    before = dgd_status_view(old)
    status = DgdStatus(**before)
    status["state"] = STATE_FAILED
    status["conditions"] = conditions.set_condition(
        before.get("conditions"),
        Condition(READY, "False", reason, message),
        observed_generation=generation,
        now=now,
    )
    return status


def explain(
    verdict: GraphStatus, *, keep_serving: str | None = None, missing_pvcs: Sequence[str] = ()
) -> GraphStatus:
    """`verdict` with what the DCDs cannot tell: `keep_serving`, the sentence saying old workers
    serve until new ones are ready; `missing_pvcs`, user PVCs the graph names that do not exist
    (the graph is not ready without them)."""
    out = GraphStatus(
        ready=verdict.ready, message=verdict.message, services=verdict.services, reason=verdict.reason
    )
    if keep_serving:
        out.message += f"; {keep_serving}"
    if missing_pvcs:
        out.ready = False
        extra = f"waiting for PVC {', '.join(missing_pvcs)}"
        out.message = extra if out.message.startswith("All") else f"{out.message}; {extra}"
    return out


def synced_status(
    old: DgdStatus,
    verdict: GraphStatus,
    *,
    generation: int | None,
    restart: RestartStatus | None = None,
    rolling: RollingPlan | None = None,
    extra: Sequence[Condition] = (),
    now: datetime.datetime,
) -> DgdStatus:
    """The status of a graph whose children were synced: `successful` iff `verdict.ready` and no
    managed rolling update runs (upstream reports a graph mid-rollout as pending, whatever its
    DCDs say). The result replaces the whole status: `restart` / `rolling.status` not given are
    absent from it (a graph no longer restarting or rolling has neither). `extra`: further
    conditions to upsert beside Ready (the Grove pathway's TopologyLevelsAvailable)."""
    rolling_now = rolling is not None and rolling.in_progress
    ready = verdict.ready and not rolling_now
    if rolling_now:
        condition = Condition(READY, "False", REASON_IN_PROGRESS, f"{MESSAGE_IN_PROGRESS}: {verdict.message}")
    elif verdict.ready:
        condition = Condition(READY, "True", REASON_ALL_READY, verdict.message)
    else:
        condition = Condition(READY, "False", verdict.reason or REASON_SOME_NOT_READY, verdict.message)
    status: DgdStatus = {
        "state": STATE_SUCCESSFUL if ready else STATE_PENDING,
        "conditions": conditions.set_conditions(
            old.get("conditions"), [condition, *extra], observed_generation=generation, now=now
        ),
        "components": {name: as_component_replicas(counts) for name, counts in verdict.services.items()},
    }
    # An unknown generation is left out: the writer drops None fields anyway.
    if generation is not None:
        status["observedGeneration"] = generation
    if restart is not None:
        status["restart"] = restart.copy()
    if rolling is not None and rolling.status is not None:
        # The plan's status may hold None for a field to clear (`updatedComponents`), which the
        # writer drops; otherwise it is a RollingUpdateStatus.
        status["rollingUpdate"] = cast(RollingUpdateStatus, rolling.status)
    return status
