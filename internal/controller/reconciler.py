"""The one method a reconciler has."""

from __future__ import annotations

from typing import Protocol

from dynamo_operator.internal.controller.result import Result


class Reconciler(Protocol):
    """Brings the world in line with the object named by `key` ("namespace/name" or "name").

    Level-based: it is told only which object, never which event. Return a `Result`, raise
    `TerminalError` for a permanent failure, or raise anything else to be retried with backoff.
    """

    async def reconcile(self, key: str) -> Result: ...
