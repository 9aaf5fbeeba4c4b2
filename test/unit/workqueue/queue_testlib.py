"""Helpers shared by the queue's lane tests."""

from __future__ import annotations

from dynamo_operator.internal.workqueue import Queue


async def drain(q: Queue[str]) -> list[str]:
    """Every key the queue hands out now, in order, each marked done."""
    out = []
    while len(q):
        key = await q.get()
        assert key is not None
        out.append(key)
        q.done(key)
    return out
