"""A DCD's status as data: `Available` / `DynamoComponentReady` and the workload's replica counts. Pure.

The conditions come from `status.ready_conditions` (a synced component) or `rejected_conditions`
(a refused one); `component_status` puts them over the status the DCD has. A refused component
keeps the replica counts it last reported: nothing was applied, so they still describe what runs.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from dynamo_operator.internal.dynamo.common.inputs import DcdStatus, ServiceReplicas, dcd_status_view
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.readiness import failed_conditions
from dynamo_operator.internal.dynamo.status.replicas import as_component_replicas


def component_status(
    old: DcdStatus,
    wants: Iterable[Condition],
    *,
    service: ServiceReplicas | None,
    generation: int | None,
    now: datetime.datetime,
) -> DcdStatus:
    """The whole status, in v1beta1 as the DCD is stored: `wants` upserted into the old conditions,
    the replica counts measured of the workload (`service`, as `status.component`; None keeps the old
    ones) and the generation they describe."""
    status: DcdStatus = {
        "conditions": conditions.set_conditions(
            old.get("conditions"), wants, observed_generation=generation, now=now
        ),
    }
    # An unknown generation is left out: the writer drops None fields anyway.
    if generation is not None:
        status["observedGeneration"] = generation
    if service is not None:
        status["component"] = as_component_replicas(service)
    elif (kept := old.get("component")) is not None:
        status["component"] = kept
    return status


def rejected_status(
    old: Mapping[str, object], *, reason: str, message: str, generation: int | None, now: datetime.datetime
) -> DcdStatus:
    """Both conditions False with `reason` and `message`; the old replica counts kept. `old` comes
    as any kind's refusal reporter holds it (internal/apply/refusal.py), hence the view here."""
    return component_status(
        dcd_status_view(old), failed_conditions(reason, message), service=None, generation=generation, now=now
    )
