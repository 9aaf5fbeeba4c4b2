"""A DGDR's status after one transition of its lifecycle (machine.py). Pure.

The state, the conditions the transition upserts (their `lastTransitionTime` moves only when their
status flips), the fields the state's work produced (`generatedDeployment`, `deployment`, ...) over
the status the request had. `observedGeneration` and `backend` are recorded only when the transition
says the spec was taken in (validation): a frozen request's later edits are reported, not observed.
"""

from __future__ import annotations

import copy
import datetime

from dynamo_operator.internal.dynamo.common.inputs import RequestStatus
from dynamo_operator.internal.dynamo.dgdr.machine import Transition
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition


def request_status(
    old: RequestStatus,
    transition: Transition,
    fields: RequestStatus,
    *,
    generation: int | None,
    backend: str | None,
    now: datetime.datetime,
) -> RequestStatus:
    """The whole status to write after `transition` at `now` (see the module docstring)."""
    new = copy.deepcopy(old)
    new.update(fields)
    new["state"] = transition.state.value
    if transition.observe_generation:
        # An unknown one is no field at all, as the status writer drops a None.
        if generation is None:
            new.pop("observedGeneration", None)
        else:
            new["observedGeneration"] = generation
        if backend is None:
            new.pop("backend", None)
        else:
            new["backend"] = backend
    new["conditions"] = conditions.set_conditions(
        old.get("conditions"),
        [
            Condition(str(c.type), "True" if c.status else "False", str(c.reason), c.message)
            for c in transition.conditions
        ],
        observed_generation=generation,
        now=now,
    )
    return new
