"""A DCD's status as data: `Available` / `DynamoComponentReady` and the workload's replica counts. Pure.

The conditions come from `status.ready_conditions` (a synced component) or `rejected_conditions`
(a refused one); `component_status` puts them over the status the DCD has. A refused component
keeps the replica counts it last reported: nothing was applied, so they still describe what runs.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.readiness import failed_conditions


def component_status(
    old: Mapping[str, Any],
    wants: Iterable[Condition],
    *,
    service: Mapping[str, Any] | None,
    generation: int | None,
    now: datetime.datetime,
) -> dict[str, Any]:
    """The whole status: `wants` upserted into the old conditions, `service` (the replica counts;
    None keeps the old ones) and the generation they describe."""
    status: dict[str, Any] = {
        "observedGeneration": generation,
        "conditions": conditions.set_conditions(
            old.get("conditions"), wants, observed_generation=generation, now=now
        ),
    }
    if service is not None:
        status["service"] = dict(service)
    elif old.get("service") is not None:
        status["service"] = old["service"]
    return status


def rejected_status(
    old: Mapping[str, Any], *, reason: str, message: str, generation: int | None, now: datetime.datetime
) -> dict[str, Any]:
    """Both conditions False with `reason` and `message`; the old replica counts kept."""
    return component_status(
        old, failed_conditions(reason, message), service=None, generation=generation, now=now
    )
