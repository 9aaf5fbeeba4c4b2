"""Telling an owner's author that it was refused or could not be synced: its kind's failure status
(written only when it changed) and then one Warning Event.

Every reconciler that refuses objects needs the same two moves, a refusal (`Rejected`: terminal
until the object changes) and a failed sync (`report_sync_failure`: retried); only the shape of the
failure status differs by kind, so that comes in as `failed_status`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NoReturn, Protocol

from dynamo_operator.internal.apply.interface import Obj
from dynamo_operator.internal.apply.status import StatusWriter
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.rejection import Rejected, reject, warn
from dynamo_operator.internal.events.interface import Recorder


class FailedStatus(Protocol):
    """The kind's status saying why (built on the status as it was)."""

    def __call__(
        self, old: Mapping[str, Any], *, reason: str, message: str, generation: int | None, now: datetime
    ) -> Mapping[str, object]: ...


class RefusalReporter:
    """Writes a kind's failure status through its `StatusWriter` and records the Warning."""

    def __init__(
        self,
        status: StatusWriter,
        failed_status: FailedStatus,
        recorder: Recorder,
        *,
        clock: Clock | None = None,
    ) -> None:
        self._status, self._failed_status, self._recorder = status, failed_status, recorder
        self._clock: Clock = clock or RealClock()

    async def write(self, raw: Obj, reason: str, message: str) -> bool:
        """Say on `raw` why; True when that changed its status."""
        generation = raw["metadata"].get("generation")
        status = self._failed_status(
            self._status.current(raw),
            reason=reason,
            message=message,
            generation=generation,
            now=self._clock.wall(),
        )
        return await self._status.write(raw, status)

    async def fail(self, raw: Obj, reason: str, message: str) -> None:
        """A failed sync, as `report_sync_failure` reports it: the status and one Warning Event."""
        await warn(raw, reason, message, write=functools.partial(self.write, raw), recorder=self._recorder)

    async def reject(self, raw: Obj, rejected: Rejected) -> NoReturn:
        """A refusal: the status, one Warning Event, and the reconcile ends as terminal."""
        await reject(raw, rejected, write=functools.partial(self.write, raw), recorder=self._recorder)
