"""What the rest of the operator records Events through: one method, so a reconciler's unit test can
pass a list-backed fake, and production passes `EventRecorder` (never blocks, never raises for API
trouble)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol

EventTypeName = Literal["Normal", "Warning"]


class Recorder(Protocol):
    """Records an Event about an object (as stored: apiVersion, kind, metadata)."""

    def event(self, obj: Mapping[str, Any], *, type: EventTypeName, reason: str, message: str) -> None: ...
