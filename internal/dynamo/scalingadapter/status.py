"""A scaling adapter's status: what it reports of its service, and its `Ready` condition. Pure.

An adapter that drives its service (`Ready=True`) reports the service's running replicas, the pod
selector HPA averages over and its last scale time (adapter.status). One that does not keeps what it
reported before: its graph or service is gone or not scalable, and the old figures are the last true
ones (an adapter that never drove one reports 0 replicas: v1beta1 requires the field). `Ready` is
upserted either way; its `lastTransitionTime` moves only when its status flips.
"""

from __future__ import annotations

import datetime

from dynamo_operator.internal.dynamo.common.inputs import AdapterStatus, StoredGraph
from dynamo_operator.internal.dynamo.scalingadapter import adapter
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition


def adapter_status(
    previous: AdapterStatus,
    ready: Condition,
    *,
    dgd: StoredGraph | None,
    service: str,
    scaled_at: str | None,
    generation: int | None,
    now: datetime.datetime,
) -> AdapterStatus:
    """The whole status to write (see the module docstring); `dgd` is the graph as last written."""
    if ready.status == "True" and dgd is not None:
        status = adapter.status(previous, dgd, service, scaled_at=scaled_at)
    else:
        status = AdapterStatus(**previous)
    # v1beta1, the stored version, requires `replicas`: an adapter that never drove its service
    # reports none running.
    status.setdefault("replicas", 0)
    status["conditions"] = conditions.set_condition(
        previous.get("conditions"), ready, observed_generation=generation, now=now
    )
    return status
