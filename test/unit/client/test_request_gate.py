"""The client's request gate: at most `limit` in flight, the rest handed out by priority then FIFO."""

from __future__ import annotations

import asyncio

import pytest
from dynamo_operator.internal.client.gate import Priority, RequestGate, current_priority, request_priority


async def hold(gate: RequestGate, label: str, order: list[str], release: asyncio.Event) -> None:
    async with gate.slot():
        order.append(label)
        await release.wait()


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_requests_beyond_the_limit_wait_for_a_slot() -> None:
    gate, order, release = RequestGate(2), [], asyncio.Event()
    tasks = [asyncio.create_task(hold(gate, f"r{i}", order, release)) for i in range(3)]
    await settle()
    assert order == ["r0", "r1"]
    assert (gate.in_flight, gate.waiting) == (2, 1)
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["r0", "r1", "r2"]
    assert (gate.in_flight, gate.waiting) == (0, 0)


async def test_waiters_are_served_by_priority_then_in_arrival_order() -> None:
    gate, order = RequestGate(1), []
    first = asyncio.Event()
    blocker = asyncio.create_task(hold(gate, "blocker", order, first))
    await settle()
    done = asyncio.Event()
    done.set()

    async def at(priority: Priority, label: str) -> None:
        with request_priority(priority):
            await hold(gate, label, order, done)

    waiters = [
        asyncio.create_task(at(Priority.LOW, "event")),
        asyncio.create_task(at(Priority.NORMAL, "graph-1")),
        asyncio.create_task(at(Priority.HIGH, "status")),
        asyncio.create_task(at(Priority.NORMAL, "graph-2")),
    ]
    await settle()
    first.set()
    await asyncio.gather(blocker, *waiters)
    assert order == ["blocker", "status", "graph-1", "graph-2", "event"]


async def test_critical_requests_never_wait_and_hold_no_slot() -> None:
    gate, order, release = RequestGate(1), [], asyncio.Event()
    blocker = asyncio.create_task(hold(gate, "blocker", order, release))
    await settle()
    with request_priority(Priority.EXEMPT):
        lease = asyncio.create_task(hold(gate, "lease", order, release))
    await settle()
    assert order == ["blocker", "lease"]
    assert gate.in_flight == 1
    release.set()
    await asyncio.gather(blocker, lease)


async def test_no_limit_never_waits() -> None:
    gate, order, release = RequestGate(None), [], asyncio.Event()
    tasks = [asyncio.create_task(hold(gate, f"r{i}", order, release)) for i in range(50)]
    await settle()
    assert len(order) == 50
    release.set()
    await asyncio.gather(*tasks)


async def test_a_cancelled_waiter_gives_up_its_place_and_loses_no_slot() -> None:
    gate, order, release = RequestGate(1), [], asyncio.Event()
    blocker = asyncio.create_task(hold(gate, "blocker", order, release))
    await settle()
    cancelled = asyncio.create_task(hold(gate, "cancelled", order, release))
    after = asyncio.create_task(hold(gate, "after", order, release))
    await settle()
    cancelled.cancel()
    await settle()
    release.set()
    await asyncio.gather(blocker, after)
    assert cancelled.cancelled()
    assert order == ["blocker", "after"]
    assert (gate.in_flight, gate.waiting) == (0, 0)


async def test_a_waiter_cancelled_after_being_handed_a_slot_passes_it_on() -> None:
    gate, order, release = RequestGate(1), [], asyncio.Event()
    held = gate.slot()
    await held.__aenter__()
    woken = asyncio.create_task(hold(gate, "woken", order, release))
    after = asyncio.create_task(hold(gate, "after", order, release))
    await settle()
    await held.__aexit__(None, None, None)  # hands the slot to `woken`, which has not run yet
    woken.cancel()
    release.set()
    await after
    assert woken.cancelled()
    assert order == ["after"]
    assert gate.in_flight == 0


async def test_a_failing_request_releases_its_slot() -> None:
    gate = RequestGate(1)
    with pytest.raises(RuntimeError):
        async with gate.slot():
            raise RuntimeError("server said no")
    assert gate.in_flight == 0
    async with gate.slot():
        assert gate.in_flight == 1


async def test_priority_follows_the_context_into_tasks_it_starts() -> None:
    with request_priority(Priority.LOW):
        inner = await asyncio.create_task(_priority_in_task())
    assert inner is Priority.LOW
    assert current_priority() is Priority.NORMAL


async def _priority_in_task() -> Priority:
    return current_priority()


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="limit"):
        RequestGate(0)
