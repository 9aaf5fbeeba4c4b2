"""The base queue: dedup, in-flight tracking, replay after done, both shutdown modes."""

from __future__ import annotations

import asyncio

import pytest
from dynamo_operator.internal.workqueue import Queue


async def test_duplicate_adds_collapse_into_one_item() -> None:
    """Adding a queued key again is a no-op."""
    q: Queue[str] = Queue()
    for key in ("a", "b", "a", "a", "b"):
        q.add(key)
    assert len(q) == 2
    assert [await q.get(), await q.get()] == ["a", "b"]


async def test_add_while_processing_is_replayed_once_after_done() -> None:
    """Any number of adds during processing cause exactly one more hand-out, after done()."""
    q: Queue[str] = Queue()
    q.add("a")
    key = await q.get()
    for _ in range(5):
        q.add("a")
    assert len(q) == 0, "a parked key must not be handed out while in flight"
    q.done("a")
    assert len(q) == 1
    assert await q.get() == key
    q.done("a")
    assert len(q) == 0


async def test_done_without_readd_does_not_requeue() -> None:
    """done() of a key nobody re-added leaves the queue empty."""
    q: Queue[str] = Queue()
    q.add("a")
    await q.get()
    q.done("a")
    assert len(q) == 0 and q.processing_count == 0


async def test_get_waits_until_a_key_is_added() -> None:
    """A blocked get() returns the key added later."""
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.add("late")
    assert await asyncio.wait_for(getter, 1) == "late"


async def test_cancelled_getter_passes_its_wakeup_on() -> None:
    """A waiter cancelled after being woken does not swallow the key."""
    q: Queue[str] = Queue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("k")
    first.cancel()
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    assert results[1] == "k"


async def test_concurrent_workers_never_share_a_key() -> None:
    """Eight workers hammering three keys: each key is held by at most one worker at a time."""
    q: Queue[int] = Queue()
    holders: dict[int, int] = {}
    handled = 0

    async def worker() -> None:
        nonlocal handled
        while (key := await q.get()) is not None:
            holders[key] = holders.get(key, 0) + 1
            assert holders[key] == 1
            await asyncio.sleep(0)
            if handled < 300:
                q.add(key)  # re-add while processing
            await asyncio.sleep(0)
            holders[key] -= 1
            handled += 1
            q.done(key)

    for key in range(3):
        q.add(key)
    workers = [asyncio.create_task(worker()) for _ in range(8)]
    for _ in range(200):
        await asyncio.sleep(0)
        if handled >= 300 and len(q) == 0 and q.processing_count == 0:
            break
    q.shut_down()
    await asyncio.wait_for(asyncio.gather(*workers), 2)
    assert handled >= 300


async def test_shutdown_refuses_adds_but_hands_out_what_is_queued() -> None:
    """After shut_down() queued keys still drain; then get() returns None."""
    q: Queue[str] = Queue()
    q.add("a")
    q.shut_down()
    q.add("b")
    assert await q.get() == "a"
    q.done("a")
    assert await q.get() is None
    assert q.shutting_down


async def test_shutdown_wakes_blocked_getters() -> None:
    """Every waiting get() returns None on shutdown."""
    q: Queue[str] = Queue()
    getters = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    q.shut_down()
    assert await asyncio.wait_for(asyncio.gather(*getters), 1) == [None, None, None]


async def test_shutdown_with_drain_waits_for_in_flight_keys() -> None:
    """shut_down_with_drain() returns only after every handed-out key is done()."""
    q: Queue[str] = Queue()
    q.add("a")
    await q.get()
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0.01)
    assert not drain.done()
    q.done("a")
    await asyncio.wait_for(drain, 1)


async def test_shutdown_with_drain_processes_parked_key_first() -> None:
    """A key re-added before the drain is handed out once more before the drain completes."""
    q: Queue[str] = Queue()
    q.add("a")
    await q.get()
    q.add("a")
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    q.done("a")
    assert await q.get() == "a"
    assert not drain.done()
    q.done("a")
    await asyncio.wait_for(drain, 1)


async def test_plain_shutdown_aborts_a_drain_wait() -> None:
    """A later shut_down() releases a pending drain (client-go's escape hatch)."""
    q: Queue[str] = Queue()
    q.add("a")
    await q.get()
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    q.shut_down()
    await asyncio.wait_for(drain, 1)


@pytest.mark.parametrize(
    "processing",
    [pytest.param(False, id="idle-queue"), pytest.param(True, id="busy-then-done")],
)
async def test_drain_of_idle_queue_returns(processing: bool) -> None:
    """Draining with nothing in flight returns immediately."""
    q: Queue[str] = Queue()
    if processing:
        q.add("a")
        await q.get()
        q.done("a")
    await asyncio.wait_for(q.shut_down_with_drain(), 1)
