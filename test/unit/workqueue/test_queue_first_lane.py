"""The queue's first lane (`add_first`): handed out before plain adds, with the base queue's rules."""

from __future__ import annotations

import asyncio

from dynamo_operator.internal.workqueue import Queue, RateLimitingQueue
from unit.workqueue.queue_testlib import drain


async def test_first_lane_keys_are_handed_out_before_plain_ones() -> None:
    q: Queue[str] = Queue()
    q.add("resync-1")
    q.add("resync-2")
    q.add_first("new-1")
    assert await drain(q) == ["new-1", "resync-1", "resync-2"]


async def test_first_lane_is_fifo_within_itself() -> None:
    q: Queue[str] = Queue()
    for key in ("new-1", "new-2", "new-3"):
        q.add_first(key)
    assert await drain(q) == ["new-1", "new-2", "new-3"]


async def test_add_first_moves_a_key_waiting_in_the_plain_lane_up() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.add_first("b")
    assert len(q) == 2
    assert await drain(q) == ["b", "a"]


async def test_plain_add_of_a_first_lane_key_is_a_no_op() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add_first("b")
    q.add("b")
    assert len(q) == 2
    assert await drain(q) == ["b", "a"]


async def test_add_first_twice_collapses_into_one_item() -> None:
    q: Queue[str] = Queue()
    q.add_first("a")
    q.add_first("a")
    assert len(q) == 1
    assert await drain(q) == ["a"]


async def test_add_first_while_processing_is_replayed_once_after_done() -> None:
    """A key in flight is parked as with `add`: never handed out twice at once."""
    q: Queue[str] = Queue()
    q.add_first("a")
    assert await q.get() == "a"
    q.add_first("a")
    q.add_first("a")
    assert len(q) == 0
    q.done("a")
    assert await drain(q) == ["a"]


async def test_add_first_after_shutdown_is_refused() -> None:
    q: Queue[str] = Queue()
    q.shut_down()
    q.add_first("a")
    assert len(q) == 0
    assert await q.get() is None


async def test_queued_first_lane_keys_drain_after_shutdown() -> None:
    q: Queue[str] = Queue()
    q.add_first("a")
    q.shut_down()
    assert await q.get() == "a"


async def test_add_first_wakes_a_waiting_getter() -> None:
    q: Queue[str] = Queue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add_first("late")
    assert await asyncio.wait_for(getter, 1) == "late"


async def test_delayed_adds_go_to_the_plain_lane() -> None:
    """A key whose delay has passed (retries, requeue_after) queues behind first-lane keys."""
    q: RateLimitingQueue[str] = RateLimitingQueue()
    q.add_after("retry", 0)
    q.add_first("new")
    assert await drain(q) == ["new", "retry"]
