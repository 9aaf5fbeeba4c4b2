"""The queue's urgent lane (`add_urgent`): before the first lane and the plain one, same rules."""

from __future__ import annotations

from dynamo_operator.internal.workqueue import Queue, RateLimitingQueue
from unit.workqueue.queue_testlib import drain


async def test_urgent_keys_go_before_first_lane_and_plain_keys() -> None:
    q: Queue[str] = Queue()
    q.add("resync")
    q.add_first("new")
    q.add_urgent("finished")
    assert await drain(q) == ["finished", "new", "resync"]


async def test_urgent_lane_is_fifo_within_itself() -> None:
    q: Queue[str] = Queue()
    for key in ("u1", "u2", "u3"):
        q.add_urgent(key)
    assert await drain(q) == ["u1", "u2", "u3"]


async def test_add_urgent_moves_a_waiting_key_up_from_either_lane() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    q.add_first("c")
    q.add_urgent("b")
    q.add_urgent("c")
    assert len(q) == 3
    assert await drain(q) == ["b", "c", "a"]


async def test_lesser_adds_of_an_urgent_key_leave_it_urgent() -> None:
    q: Queue[str] = Queue()
    q.add_first("f")
    q.add_urgent("u")
    q.add("u")
    q.add_first("u")
    assert len(q) == 2
    assert await drain(q) == ["u", "f"]


async def test_urgent_add_while_processing_is_replayed_once_in_the_urgent_lane() -> None:
    """Parked as with `add` (never handed out twice at once), and queued urgent when done."""
    q: Queue[str] = Queue()
    q.add("busy")
    assert await q.get() == "busy"
    q.add("plain")
    q.add_first("new")
    q.add("busy")
    q.add_urgent("busy")
    assert len(q) == 2
    q.done("busy")
    assert await drain(q) == ["busy", "new", "plain"]


async def test_a_parked_key_asked_for_nothing_better_is_replayed_in_the_plain_lane() -> None:
    q: Queue[str] = Queue()
    q.add("busy")
    assert await q.get() == "busy"
    q.add("busy")
    q.add_first("new")
    q.done("busy")
    assert await drain(q) == ["new", "busy"]


async def test_add_urgent_after_shutdown_is_refused() -> None:
    q: Queue[str] = Queue()
    q.shut_down()
    q.add_urgent("a")
    assert len(q) == 0
    assert await q.get() is None


async def test_rate_limiting_queue_has_the_urgent_lane() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue()
    q.add("plain")
    q.add_urgent("urgent")
    assert await drain(q) == ["urgent", "plain"]
