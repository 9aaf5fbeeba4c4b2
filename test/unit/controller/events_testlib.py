"""Helpers shared by the tests of the Event broadcaster."""

from __future__ import annotations

import asyncio

from dynamo_operator.internal.events import EventBroadcaster


async def drain(broadcaster: EventBroadcaster) -> None:
    """Run the broadcaster until everything queued is sent, then stop it."""
    task = asyncio.create_task(broadcaster.run())
    try:
        assert await broadcaster.flush(5)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
