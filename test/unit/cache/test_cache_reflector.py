"""The reflector state machine: one test per arrow, driven by a scripted list/watch source and a
fake clock (nothing sleeps)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import (
    REPLAY_GRACE,
    ROUTINE_FAILURES,
    Listed,
    Phase,
    Reflector,
    Scope,
    Slept,
    WatchClosed,
    next_phase,
)
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.model import ListPage, WatchEvent
from dynamo_operator.internal.client.resource import CONFIG_MAP, Resource
from structlog.testing import capture_logs


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []
        self.step_per_event = 0.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


# A scripted watch: events to yield, then either a clean end (None) or an exception.
Script = tuple[list[WatchEvent], Exception | None]


class FakeSource:
    """Answers list_page/watch from scripts; records the resourceVersions watched from."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.lists: list[list[ListPage] | Exception] = []
        self.watches: list[Script | Exception] = []
        self.watched_from: list[str] = []
        self.list_calls: list[dict[str, Any]] = []
        self._pages: list[ListPage] = []

    async def list_page(self, resource: Resource, **kw: Any) -> ListPage:
        self.list_calls.append(kw)
        if kw.get("continue_token") is None:
            script = self.lists.pop(0)
            if isinstance(script, Exception):
                raise script
            self._pages = list(script)
        return self._pages.pop(0)

    @asynccontextmanager
    async def watch(self, resource: Resource, *, resource_version: str, **kw: Any) -> AsyncIterator[Any]:
        self.watched_from.append(resource_version)
        script = self.watches.pop(0)
        if isinstance(script, Exception):
            raise script
        events, end = script

        async def stream() -> AsyncIterator[WatchEvent]:
            for event in events:
                self.clock.t += 0.5  # a stream that delivers events lasts a while
                yield event
            if end is not None:
                raise end

        yield stream()


class RecordingSink:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.admitted: list[str] = []

    def admit(self, obj: Obj) -> Obj:
        self.admitted.append(obj["metadata"]["name"])
        return obj

    def replace_admitted(self, objects: Iterable[Obj]) -> None:
        self.calls.append(("replace", sorted(o["metadata"]["name"] for o in objects)))

    def upsert(self, obj: Obj) -> None:
        self.calls.append(("upsert", obj["metadata"]["name"]))

    def delete(self, obj: Obj) -> None:
        self.calls.append(("delete", obj["metadata"]["name"]))


def cm(name: str, rv: str) -> Obj:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def page(rv: str, *names: str, cont: str | None = None) -> ListPage:
    return ListPage([cm(n, rv) for n in names], rv, cont)


def ev(type_: str, name: str, rv: str) -> WatchEvent:
    return WatchEvent(type_, cm(name, rv))  # type: ignore[arg-type]


def bookmark(rv: str) -> WatchEvent:
    return WatchEvent("BOOKMARK", {"kind": "ConfigMap", "metadata": {"resourceVersion": rv}})


def error_event(code: int, reason: str, message: str = "") -> WatchEvent:
    return WatchEvent("ERROR", {"kind": "Status", "code": code, "reason": reason, "message": message})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def source(clock: FakeClock) -> FakeSource:
    return FakeSource(clock)


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def reflector(source: FakeSource, sink: RecordingSink, clock: FakeClock) -> Reflector:
    return Reflector(source, Scope(CONFIG_MAP, "ns"), sink, clock=clock, rng=random.Random(0))


# -- the transition table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "outcome", "has_rv", "expected"),
    [
        pytest.param(Phase.LIST, Listed("5"), True, Phase.WATCH, id="list-listed-watch"),
        pytest.param(Phase.LIST, errors.ServerError(500), False, Phase.BACKOFF, id="list-error-backoff"),
        pytest.param(Phase.LIST, errors.Gone(410), False, Phase.LIST, id="list-gone-relist"),
        pytest.param(Phase.WATCH, WatchClosed(3, 300.0), True, Phase.WATCH, id="watch-closed-rewatch"),
        pytest.param(Phase.WATCH, WatchClosed(0, 0.1), True, Phase.BACKOFF, id="watch-very-short-backoff"),
        pytest.param(Phase.WATCH, WatchClosed(0, 2.0), True, Phase.WATCH, id="watch-quiet-but-long-rewatch"),
        pytest.param(Phase.WATCH, errors.Gone(410), True, Phase.LIST, id="watch-gone-relist"),
        pytest.param(Phase.WATCH, errors.TooManyRequests(429), True, Phase.BACKOFF, id="watch-429-backoff"),
        pytest.param(
            Phase.WATCH,
            errors.TransportError("reset", sent=True),
            True,
            Phase.BACKOFF,
            id="watch-reset-backoff",
        ),
        pytest.param(Phase.WATCH, errors.Forbidden(403), True, Phase.BACKOFF, id="watch-403-backoff"),
        pytest.param(Phase.BACKOFF, Slept(), True, Phase.WATCH, id="backoff-with-rv-watch"),
        pytest.param(Phase.BACKOFF, Slept(), False, Phase.LIST, id="backoff-without-rv-list"),
    ],
)
def test_transition_table(phase: Phase, outcome: Any, has_rv: bool, expected: Phase) -> None:
    """`next_phase` is the single decision point; every arrow of the diagram is one row."""
    assert next_phase(phase, outcome, has_resource_version=has_rv) is expected


# -- the arrows, driven through the real loop ----------------------------------------------------


async def test_list_pages_then_watch_from_the_list_rv(
    reflector: Reflector, source: FakeSource, sink: RecordingSink
) -> None:
    """LIST follows continue tokens (limit 500), replaces the store once, then WATCHes from its rv."""
    source.lists.append([page("10", "a", "b", cont="t1"), page("10", "c")])
    outcome = await reflector.step()
    assert outcome == Listed("10")
    assert sink.calls == [("replace", ["a", "b", "c"])]
    assert [c.get("continue_token") for c in source.list_calls] == [None, "t1"]
    assert all(c["limit"] == 500 for c in source.list_calls)
    assert (reflector.phase, reflector.resource_version) == (Phase.WATCH, "10")


async def test_list_admits_each_page_before_asking_for_the_next(
    reflector: Reflector, source: FakeSource, sink: RecordingSink
) -> None:
    """A LIST holds at most one page of whole objects: a page's objects are trimmed (admitted) before
    the next page is requested, so start-up memory is the trimmed cache plus one page."""
    admitted_when_asked: list[list[str]] = []
    ask = source.list_page

    async def recording_list_page(resource: Resource, **kw: Any) -> ListPage:
        admitted_when_asked.append(list(sink.admitted))
        return await ask(resource, **kw)

    source.list_page = recording_list_page  # type: ignore[method-assign]
    source.lists.append([page("10", "a", "b", cont="t1"), page("10", "c", cont="t2"), page("10", "d")])
    await reflector.step()
    assert admitted_when_asked == [[], ["a", "b"], ["a", "b", "c"]]
    assert sink.calls == [("replace", ["a", "b", "c", "d"])]


async def test_watch_events_reach_the_sink_and_move_the_rv(
    reflector: Reflector, source: FakeSource, sink: RecordingSink
) -> None:
    source.lists.append([page("10", "a")])
    source.watches.append(
        ([ev("ADDED", "b", "11"), ev("MODIFIED", "a", "12"), ev("DELETED", "b", "13")], None)
    )
    await reflector.step()
    outcome = await reflector.step()
    assert outcome == WatchClosed(events=3, seconds=1.5)
    assert sink.calls[1:] == [("upsert", "b"), ("upsert", "a"), ("delete", "b")]
    assert (reflector.phase, reflector.resource_version) == (Phase.WATCH, "13")
    assert source.watched_from == ["10"]


async def test_clean_close_rewatches_from_last_rv_without_relist(
    reflector: Reflector, source: FakeSource, sink: RecordingSink
) -> None:
    source.lists.append([page("10", "a")])
    source.watches += [([ev("MODIFIED", "a", "11")], None), ([ev("MODIFIED", "a", "12")], None)]
    for _ in range(3):
        await reflector.step()
    assert source.watched_from == ["10", "11"]
    assert [c[0] for c in sink.calls].count("replace") == 1


async def test_bookmark_moves_the_rv_only(
    reflector: Reflector, source: FakeSource, sink: RecordingSink
) -> None:
    source.lists.append([page("10", "a")])
    source.watches += [([bookmark("50")], None), ([], None)]
    await reflector.step()
    await reflector.step()
    assert reflector.resource_version == "50"
    assert sink.calls == [("replace", ["a"])]
    await reflector.step()
    assert source.watched_from == ["10", "50"]


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(([], errors.Gone(410)), id="http-410-on-open-stream"),
        pytest.param(
            ([error_event(410, "Expired", "too old resource version: 5 (9)")], None), id="error-event-410"
        ),
        pytest.param(
            ([error_event(500, "InternalError", "too old resource version: 5")], None), id="too-old-msg"
        ),
        pytest.param(errors.Gone(410, "Gone"), id="410-opening-watch"),
    ],
)
async def test_gone_relists_and_emits_deletes_through_replace(
    reflector: Reflector, source: FakeSource, sink: RecordingSink, clock: FakeClock, failure: Any
) -> None:
    """410 in any form → LIST with no rv; the new LIST replaces the store (the informer diffs it)."""
    source.lists += [[page("10", "a", "b")], [page("20", "a")]]
    source.watches.append(failure)
    await reflector.step()
    outcome = await reflector.step()
    assert isinstance(outcome, errors.Gone)
    assert (reflector.phase, reflector.resource_version) == (Phase.LIST, None)
    await reflector.step()
    assert sink.calls[-1] == ("replace", ["a"])
    assert (reflector.phase, reflector.resource_version) == (Phase.WATCH, "20")
    assert clock.sleeps == []  # relist is immediate


async def test_error_backs_off_then_rewatches_from_the_same_rv(
    reflector: Reflector, source: FakeSource, clock: FakeClock
) -> None:
    source.lists.append([page("10", "a")])
    source.watches += [errors.TransportError("refused", sent=False), ([], None)]
    await reflector.step()
    await reflector.step()
    assert reflector.phase is Phase.BACKOFF
    assert await reflector.step() == Slept()
    assert 0.8 <= clock.sleeps[0] < 1.6
    assert reflector.phase is Phase.WATCH
    await reflector.step()
    assert source.watched_from == ["10", "10"]


async def test_failed_first_list_backs_off_then_lists_again(
    reflector: Reflector, source: FakeSource, sink: RecordingSink, clock: FakeClock
) -> None:
    source.lists += [errors.TransportError("refused", sent=False), [page("7", "a")]]
    await reflector.step()
    assert reflector.phase is Phase.BACKOFF
    await reflector.step()
    assert reflector.phase is Phase.LIST
    await reflector.step()
    assert sink.calls == [("replace", ["a"])]
    assert len(clock.sleeps) == 1


async def test_very_short_empty_watch_backs_off(
    reflector: Reflector, source: FakeSource, clock: FakeClock
) -> None:
    """A watch the server closes at once without events is treated as a failure (no hot loop)."""
    source.lists.append([page("10", "a")])
    source.watches.append(([], None))
    await reflector.step()
    await reflector.step()
    assert reflector.phase is Phase.BACKOFF


async def test_backoff_doubles_to_the_cap_and_resets_after_a_healthy_period(
    reflector: Reflector, source: FakeSource, clock: FakeClock
) -> None:
    """0.8 s doubling (jitter within [d, 2d)) capped at 30 s; two quiet minutes start over."""
    source.lists.append([page("10", "a")])
    await reflector.step()
    refused = errors.TransportError("refused", sent=False)
    for _ in range(8):
        source.watches.append(refused)
        await reflector.step()  # WATCH fails
        await reflector.step()  # BACKOFF sleeps
    floors = [min(0.8 * 2**i, 30.0) for i in range(8)]
    assert all(f <= s < 2 * f for f, s in zip(floors, clock.sleeps, strict=True))
    clock.t += 121.0  # healthy for longer than the reset period
    source.watches.append(refused)
    await reflector.step()
    await reflector.step()
    assert 0.8 <= clock.sleeps[-1] < 1.6


async def test_run_survives_any_exception_and_only_cancellation_stops_it(
    reflector: Reflector, source: FakeSource
) -> None:
    """A bug-shaped error in the source is an outcome like any other: back off and retry."""
    source.lists += [RuntimeError("boom"), [page("3", "a")]]
    await reflector.step()
    assert isinstance(reflector.last_error, RuntimeError)
    assert reflector.phase is Phase.BACKOFF


# -- whether the sink is current (follows the server at watch lag) ------------------------------


async def test_current_once_a_list_lands(reflector: Reflector, source: FakeSource) -> None:
    """Nothing is followed before the first LIST; a landed LIST is the server's state, current at once."""
    assert not reflector.is_current()
    source.lists.append([page("10", "a")])
    await reflector.step()
    assert reflector.is_current()


async def test_current_across_a_clean_rewatch(reflector: Reflector, source: FakeSource) -> None:
    """A watch that ends cleanly resumes from its last resourceVersion at once: nothing to catch up."""
    source.lists.append([page("10", "a")])
    source.watches.append(([ev("MODIFIED", "a", "11")], None))
    await reflector.step()
    await reflector.step()
    assert reflector.phase is Phase.WATCH
    assert reflector.is_current()


async def test_not_current_after_a_broken_watch_until_the_resumed_one_has_replayed(
    reflector: Reflector, source: FakeSource
) -> None:
    """A failed watch may have missed events: not current; the watch that resumes from the old
    resourceVersion replays them first, so it counts as current only after `REPLAY_GRACE`."""
    source.lists.append([page("10", "a")])
    source.watches.append(([ev("MODIFIED", "a", "11")], errors.TransportError("reset", sent=True)))
    source.watches.append(([ev("DELETED", "a", "12")], None))
    await reflector.step()  # LIST
    await reflector.step()  # WATCH, broken
    assert reflector.phase is Phase.BACKOFF
    assert not reflector.is_current()
    await reflector.step()  # BACKOFF
    opened_at = source.clock.t
    await reflector.step()  # WATCH again, from rv 11
    assert not reflector.is_current()
    source.clock.t = opened_at + REPLAY_GRACE
    assert reflector.is_current()


async def test_not_current_while_relisting(reflector: Reflector, source: FakeSource) -> None:
    """410 Gone: the store is about to be replaced wholesale; until the LIST lands it is not current."""
    source.lists.append([page("10", "a")])
    source.watches.append(([error_event(410, "Expired")], None))
    await reflector.step()
    await reflector.step()
    assert reflector.phase is Phase.LIST
    assert not reflector.is_current()


# -- what a failure logs -------------------------------------------------------------------------


def _levels(logs: list[dict[str, Any]]) -> list[str]:
    return [entry["log_level"] for entry in logs if entry["event"] == "reflector step failed"]


async def test_a_compacted_history_and_a_reinitialising_storage_log_at_debug(
    reflector: Reflector, source: FakeSource
) -> None:
    """What a CRD update does to every watch of its kind (the CA bundle written at an install): 429
    while the storage re-initialises, then 410 for the old resourceVersion. Both are routine."""
    source.lists = [[page("5", "a")], [page("9", "a")]]
    source.watches = [
        ([], errors.TooManyRequests(429, "TooManyRequests", "storage is (re)initializing")),
        errors.Gone(410, "Expired", "too old resource version: 5 (8)"),
        ([ev("ADDED", "b", "10")], None),
    ]
    with capture_logs() as logs:
        for _ in range(7):  # LIST, WATCH 429, BACKOFF, WATCH 410, LIST, WATCH, WATCH...
            if not source.watches:
                break
            await reflector.step()
    assert _levels(logs) == ["debug", "debug"]


async def test_routine_failures_in_a_row_become_a_warning(reflector: Reflector, source: FakeSource) -> None:
    source.lists = [[page("5", "a")]]
    source.watches = [errors.TooManyRequests(429) for _ in range(ROUTINE_FAILURES)]
    with capture_logs() as logs:
        await reflector.step()  # LIST
        for _ in range(ROUTINE_FAILURES):
            await reflector.step()  # WATCH: 429
            await reflector.step()  # BACKOFF
    assert _levels(logs) == ["debug"] * (ROUTINE_FAILURES - 1) + ["warning"]


async def test_any_other_failure_is_a_warning_at_once(reflector: Reflector, source: FakeSource) -> None:
    source.lists = [errors.ServerError(500, "InternalError", "etcd timed out")]
    with capture_logs() as logs:
        await reflector.step()
    assert _levels(logs) == ["warning"]


async def test_a_landed_list_resets_the_count_of_failures(reflector: Reflector, source: FakeSource) -> None:
    source.lists = [[page("5", "a")], [page("9", "a")], [page("12", "a")]]
    source.watches = [errors.Gone(410), errors.Gone(410), errors.Gone(410)]
    with capture_logs() as logs:
        for _ in range(6):  # LIST, WATCH 410, LIST, WATCH 410, LIST, WATCH 410
            await reflector.step()
    assert _levels(logs) == ["debug"] * 3
