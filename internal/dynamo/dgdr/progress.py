"""What the profiler reports while it runs: its step and a message, relayed by the Job's sidecar into
the output ConfigMap (keys `phase` and `message`, upstream's contract; the final write of the results
keeps them). Pure.

The keys are the requester's data, like the rest of the output: a step outside the API's
`ProfilingPhase` values is refused (never written to the status, whose schema would refuse it too)
and the message is cut to a bound before it becomes a condition message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from dynamo_operator.api.v1beta1.enums import ProfilingPhase
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject
from dynamo_operator.internal.dynamo.dgdr.machine import ProfilerReport

PHASE_KEY: Final = "phase"
MESSAGE_KEY: Final = "message"
# A report's message is one line of the profiler's status file; a condition message may hold 32768
# characters, but a status that every `kubectl get -o yaml` prints needs no more than this.
MAX_MESSAGE: Final = 1024
_ELLIPSIS: Final = "..."


class UnknownStep(ValueError):
    """The output ConfigMap names a step the API does not know."""


def read_report(config_map: ForeignObject) -> ProfilerReport | None:
    """The profiler's last report in `config_map` (the output ConfigMap); None when it reported no
    step (no key, or an empty one: the sidecar writes an empty step before the profiler wrote one).
    Raises UnknownStep for a step outside `ProfilingPhase`."""
    data = config_map.get("data") or {}
    if not isinstance(data, Mapping):
        return None
    raw = data.get(PHASE_KEY)
    if not isinstance(raw, str) or not raw:
        return None
    try:
        phase = ProfilingPhase(raw)
    except ValueError:
        raise UnknownStep(f"unknown profiling step {raw[:64]!r}") from None
    message = data.get(MESSAGE_KEY)
    return ProfilerReport(phase, _bounded(message if isinstance(message, str) else ""))


def _bounded(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - len(_ELLIPSIS)] + _ELLIPSIS
