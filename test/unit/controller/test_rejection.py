"""A rejected object gets its condition, one Warning Event per change of it, and a terminal result."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from dynamo_operator.internal.controller.rejection import Rejected, reject, warn
from dynamo_operator.internal.controller.result import TerminalError

OBJ: dict[str, Any] = {"metadata": {"namespace": "ns", "name": "g"}}


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def event(
        self, obj: dict[str, Any], *, type: Literal["Normal", "Warning"], reason: str, message: str
    ) -> None:
        self.seen.append((type, reason, message))


def writer(changed: bool, calls: list[tuple[str, str]]) -> Any:
    async def write(reason: str, message: str) -> bool:
        calls.append((reason, message))
        return changed

    return write


@pytest.mark.parametrize(
    ("changed", "events"),
    [
        pytest.param(True, [("Warning", "InvalidSpec", "spec: bad")], id="new-condition-one-warning"),
        pytest.param(False, [], id="same-condition-no-repeat"),
    ],
)
async def test_a_rejection_writes_the_condition_and_warns_only_when_it_changed(
    changed: bool, events: list[tuple[str, str, str]]
) -> None:
    calls: list[tuple[str, str]] = []
    recorder = Events()
    with pytest.raises(TerminalError, match="spec: bad"):
        await reject(
            OBJ, Rejected("InvalidSpec", "spec: bad"), write=writer(changed, calls), recorder=recorder
        )
    assert calls == [("InvalidSpec", "spec: bad")]
    assert recorder.seen == events


async def test_the_terminal_error_keeps_the_rejection_as_its_cause() -> None:
    rejected = Rejected("NameCollision", "two services")
    with pytest.raises(TerminalError) as raised:
        await reject(OBJ, rejected, write=writer(True, []), recorder=Events())
    assert raised.value.__cause__ is rejected


async def test_a_failed_condition_write_records_no_event_and_propagates() -> None:
    async def failing(reason: str, message: str) -> bool:
        raise ConnectionError("api down")

    recorder = Events()
    with pytest.raises(ConnectionError):
        await reject(OBJ, Rejected("InvalidSpec", "x"), write=failing, recorder=recorder)
    assert recorder.seen == []


@pytest.mark.parametrize(
    ("changed", "events"), [pytest.param(True, 1, id="changed"), pytest.param(False, 0, id="same")]
)
async def test_warn_reports_without_ending_the_reconcile(changed: bool, events: int) -> None:
    recorder = Events()
    await warn(OBJ, "ApplyRejected", "m", write=writer(changed, []), recorder=recorder)
    assert len(recorder.seen) == events
