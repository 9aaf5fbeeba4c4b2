"""Time for leader election: a monotonic clock for expiry, wall time for the Lease, and sleep."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Protocol


class ElectionClock(Protocol):
    def monotonic(self) -> float: ...
    def wall(self) -> datetime: ...
    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """Real time."""

    def monotonic(self) -> float:
        return time.monotonic()

    def wall(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
