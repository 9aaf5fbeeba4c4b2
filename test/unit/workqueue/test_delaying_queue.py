"""add_after on a fake clock: nothing early, earlier deadline wins, one timer armed."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.workqueue import DelayingQueue


def make() -> tuple[DelayingQueue[str], FakeClock]:
    clock = FakeClock()
    return DelayingQueue(clock=clock), clock


async def test_key_arrives_at_its_deadline_not_before() -> None:
    """A delayed key is invisible until the clock reaches its deadline."""
    q, clock = make()
    q.add_after("a", 10)
    clock.advance(9.999)
    assert len(q) == 0
    clock.advance(0.001)
    assert len(q) == 1
    assert await q.get() == "a"


@pytest.mark.parametrize(
    "delay",
    [pytest.param(0, id="zero"), pytest.param(-5, id="negative")],
)
async def test_non_positive_delay_adds_immediately(delay: float) -> None:
    """add_after with delay <= 0 is add()."""
    q, _ = make()
    q.add_after("a", delay)
    assert len(q) == 1


@pytest.mark.parametrize(
    ("first", "second", "arrives_at"),
    [
        pytest.param(10, 5, 5, id="later-call-earlier-deadline-wins"),
        pytest.param(5, 10, 5, id="earlier-first-call-kept"),
        pytest.param(7, 7, 7, id="same-deadline"),
    ],
)
async def test_same_key_waiting_twice_keeps_earlier_deadline(
    first: float, second: float, arrives_at: float
) -> None:
    """Two add_after calls for one key yield one item, at the earlier deadline."""
    q, clock = make()
    q.add_after("a", first)
    q.add_after("a", second)
    assert q.waiting_count == 1
    clock.advance(arrives_at - 0.001)
    assert len(q) == 0
    clock.advance(0.001)
    assert len(q) == 1
    clock.advance(100)
    assert len(q) == 1, "the superseded deadline must not add the key again"


async def test_keys_arrive_in_deadline_order() -> None:
    """Keys become ready in order of their deadlines, not of the calls."""
    q, clock = make()
    q.add_after("c", 3)
    q.add_after("a", 1)
    q.add_after("b", 2)
    clock.advance(5)
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]


async def test_only_one_timer_is_armed_for_many_waiting_keys() -> None:
    """The queue keeps a single clock timer, for the earliest deadline."""
    q, clock = make()
    for i in range(50):
        q.add_after(f"k{i}", 100 - i)
    assert clock.pending_timers == 1
    clock.advance(100)
    assert len(q) == 50
    assert clock.pending_timers == 0


async def test_delayed_key_already_queued_is_deduplicated() -> None:
    """A delayed add of a key that is already queued does not duplicate it."""
    q, clock = make()
    q.add("a")
    q.add_after("a", 1)
    clock.advance(1)
    assert len(q) == 1


async def test_shutdown_drops_waiting_keys() -> None:
    """Waiting keys are discarded at shutdown; later add_after is ignored."""
    q, clock = make()
    q.add_after("a", 1)
    q.shut_down()
    q.add_after("b", 1)
    clock.advance(10)
    assert len(q) == 0
    assert await q.get() is None
