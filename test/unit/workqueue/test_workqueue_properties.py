"""Property tests: any interleaving of add/add_first/get/done keeps the queue's invariant."""

from __future__ import annotations

import asyncio

from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.workqueue import (
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    Queue,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

KEYS = st.sampled_from(["a", "b", "c", "d"])
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), KEYS),
        st.tuples(st.just("add_first"), KEYS),
        st.tuples(st.just("get"), st.integers(0, 3)),
        st.tuples(st.just("done"), st.integers(0, 3)),
    ),
    max_size=60,
)


def run_ops(ops: list[tuple[str, object]]) -> None:
    """Four simulated holders; get() only when something is queued, so nothing blocks."""

    async def scenario() -> None:
        q: Queue[str] = Queue()
        held: dict[int, str] = {}
        wanted: set[str] = set()  # keys added since their last hand-out
        for op, arg in ops:
            if op in ("add", "add_first"):
                assert isinstance(arg, str)
                q.add(arg) if op == "add" else q.add_first(arg)
                wanted.add(arg)
            elif op == "get" and len(q) and arg not in held:
                assert isinstance(arg, int)
                key = await q.get()
                assert key is not None
                assert key not in held.values(), "a key reached two holders"
                held[arg] = key
                wanted.discard(key)
            elif op == "done" and arg in held:
                assert isinstance(arg, int)
                q.done(held.pop(arg))
            # Invariant: queued keys are exactly the wanted keys nobody holds.
            assert len(q) == len(wanted - set(held.values()))
        for key in held.values():
            q.done(key)
        assert len(q) == len(wanted), "every wanted key is handed out after done()"

    asyncio.run(scenario())


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_no_key_is_ever_held_twice_and_no_add_is_lost(ops: list[tuple[str, object]]) -> None:
    """A random add/get/done sequence never yields a key to two holders and loses no add."""
    run_ops(ops)


DELAYS = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.floats(min_value=-1, max_value=50, allow_nan=False)),
    max_size=30,
)
# How far past its deadline a re-armed timer may land (see the test below): far above an ulp at 100 s.
ROUNDING = 1e-9
STEPS = st.lists(st.floats(min_value=0, max_value=20, allow_nan=False), min_size=1, max_size=10)


@settings(max_examples=300, deadline=None)
@given(DELAYS, STEPS)
# The re-armed timer of `a` lands one ulp past 10.152818794585647.
@example(adds=[("a", 10.152818794585647), ("b", 1.9844741397421997)], steps=[10.152818794585647])
def test_delayed_keys_arrive_once_at_their_earliest_deadline(
    adds: list[tuple[str, float]], steps: list[float]
) -> None:
    """Whatever add_after calls and clock steps: a key is queued at most once, never before the
    earliest deadline asked for it, and by then for sure. "By then" allows a rounding of the clock:
    a timer re-armed at `now` for a deadline fires at `now + (deadline - now)`, which floating point
    may put one ulp past the deadline (a real loop then fires it that much later, harmlessly)."""
    clock = FakeClock(start=0.0)
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    earliest: dict[str, float] = {}
    for key, delay in adds:
        q.add_after(key, delay)
        earliest[key] = min(earliest.get(key, float("inf")), max(delay, 0.0))
    for step in steps:
        clock.advance(step)
        now = clock.now()
        surely_due = {k for k, t in earliest.items() if t <= now - ROUNDING}
        due = {k for k, t in earliest.items() if t <= now}
        assert len(surely_due) <= len(q) <= len(due), (now, earliest)
        assert clock.pending_timers <= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=80))
def test_exponential_delays_never_shrink_and_stay_capped(failures: int) -> None:
    """Consecutive failures of one key: delays are non-decreasing and never above the cap."""
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("k") for _ in range(failures)]
    assert delays == sorted(delays)
    assert max(delays) <= 1000.0
    assert limiter.num_requeues("k") == failures
