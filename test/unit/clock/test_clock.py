"""The one clock: the fake moves only when advanced, monotonic and wall time together, and its
sleeps and timers end inside `advance()` in deadline order."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from dynamo_operator.internal.clock import Clock, FakeClock, RealClock


def test_both_clocks_are_the_one_protocol() -> None:
    clocks: list[Clock] = [RealClock(), FakeClock()]
    assert all(isinstance(c.now(), float) and c.wall().tzinfo is UTC for c in clocks)


def test_fake_wall_time_moves_with_monotonic_time() -> None:
    start = datetime(2030, 1, 1, tzinfo=UTC)
    clock = FakeClock(5.0, wall_start=start)
    clock.advance(90.0)
    assert (clock.now(), clock.wall()) == (95.0, start + timedelta(seconds=90))


def test_fake_timers_fire_in_deadline_order_and_not_before() -> None:
    clock = FakeClock()
    fired: list[str] = []
    clock.call_later(2.0, lambda: fired.append("late"))
    clock.call_later(1.0, lambda: fired.append("early"))
    cancelled = clock.call_later(1.5, lambda: fired.append("cancelled"))
    cancelled.cancel()
    clock.advance(0.5)
    assert fired == []
    clock.advance(1.5)
    assert fired == ["early", "late"]
    assert clock.pending_timers == 0


async def test_a_fake_sleep_ends_when_time_is_advanced_past_it() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(10.0))
    await asyncio.sleep(0)
    clock.advance(9.0)
    await asyncio.sleep(0)
    assert not sleeper.done()
    clock.advance(1.0)
    await asyncio.wait_for(sleeper, 5)


async def test_a_cancelled_fake_sleep_leaves_no_timer_behind() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(10.0))
    await asyncio.sleep(0)
    sleeper.cancel()
    await asyncio.gather(sleeper, return_exceptions=True)
    assert clock.pending_timers == 0
