"""One way to refuse an object: a condition saying why, one Warning Event, a terminal result.

Reconcilers raise `Rejected(reason, message)` from wherever they find that an object cannot be
acted on until its author changes it (what a CRD schema cannot express: cross-field references, a
missing optional API, a name collision). The reconcile entry catches it once and hands it to
`reject`, which writes the kind's condition through the callback it is given, records the Event only
when that write changed something (so a requeued rejection does not repeat it), and raises
`TerminalError`, which the worker counts and does not retry: the object's next change brings it back.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from dynamo_operator.internal.controller.result import TerminalError
from dynamo_operator.internal.events.interface import Recorder


class Rejected(Exception):
    """The object is wrong in a way only its author can fix. `reason` is CamelCase (a condition reason
    and the Event's reason); `message` says what to change."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


WriteRejection = Callable[[str, str], Awaitable[bool]]
"""Writes the kind's failure condition for (reason, message); True when the status changed."""


async def warn(
    obj: dict[str, Any], reason: str, message: str, *, write: WriteRejection, recorder: Recorder
) -> None:
    """Write the failure condition through `write`, then one Warning Event if that changed the status
    (a failed write raises before any Event, so the retry decides again)."""
    if await write(reason, message):
        recorder.event(obj, type="Warning", reason=reason, message=message)


async def reject(
    obj: dict[str, Any], rejected: Rejected, *, write: WriteRejection, recorder: Recorder
) -> NoReturn:
    """Report `rejected` on `obj` (`warn`) and end the reconcile as terminal."""
    await warn(obj, rejected.reason, rejected.message, write=write, recorder=recorder)
    raise TerminalError(rejected.message) from rejected
