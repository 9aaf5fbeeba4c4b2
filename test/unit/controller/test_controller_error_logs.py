"""What the worker logs when a reconcile fails: a user's mistake (TerminalError) in one line without a
traceback; a bug (any other exception) with its traceback."""

from __future__ import annotations

import asyncio
from typing import Any

import pydantic
import structlog
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller import Controller, Result, TerminalError
from dynamo_operator.internal.workqueue import RateLimitingQueue


class Raises:
    """Raises the given error once for every key, then succeeds."""

    def __init__(self, error: Exception) -> None:
        self.error: Exception | None = error

    async def reconcile(self, key: str) -> Result:
        error, self.error = self.error, None
        if error is not None:
            raise error
        return Result()


class Spec(pydantic.BaseModel):
    replicas: pydantic.NonNegativeInt
    image: str


def validation_error() -> pydantic.ValidationError:
    try:
        Spec.model_validate({"replicas": -1})
    except pydantic.ValidationError as err:
        return err
    raise AssertionError("the spec validated")


async def reconcile_once(name: str, error: Exception) -> list[dict[str, Any]]:
    """Run one failing reconcile of ns/a and return the log entries of the worker."""
    reconciler = Raises(error)
    queue: RateLimitingQueue[str] = RateLimitingQueue(name=name, clock=FakeClock())
    controller = Controller(name=name, reconciler=reconciler, queue=queue, max_concurrent_reconciles=1)
    queue.add("ns/a")
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(controller.run())
        try:
            for _ in range(500):
                if reconciler.error is None and any(e["log_level"] == "error" for e in logs):
                    break
                await asyncio.sleep(0.002)
        finally:
            controller.stop()
            await asyncio.wait_for(task, 5)
    return [e for e in logs if e["log_level"] == "error"]


async def test_terminal_user_error_is_one_line_without_traceback() -> None:
    """A spec the user got wrong (a pydantic error of several lines, wrapped as TerminalError) is logged
    as one line that names the fields, and without exc_info."""
    cause = validation_error()
    assert "\n" in str(cause)
    terminal = TerminalError(str(cause))
    terminal.__cause__ = cause
    [entry] = await reconcile_once("ctl-terminal-log", terminal)
    assert "exc_info" not in entry
    assert "\n" not in entry["error"]
    assert "replicas" in entry["error"] and "image" in entry["error"]


async def test_unexpected_error_keeps_its_traceback() -> None:
    """Any other exception is a bug to investigate: logged with its exception info."""
    [entry] = await reconcile_once("ctl-bug-log", KeyError("spec"))
    assert isinstance(entry.get("exc_info"), KeyError)


class RaisesAgain:
    """Raises each of `errors` in turn, one per reconcile of any key, then succeeds."""

    def __init__(self, errors: list[Exception | None]) -> None:
        self.errors = list(errors)

    async def reconcile(self, key: str) -> Result:
        error = self.errors.pop(0) if self.errors else None
        if error is not None:
            raise error
        return Result()


async def reconcile_in_turn(name: str, errors: list[Exception | None]) -> list[dict[str, Any]]:
    """Reconcile ns/a once per entry of `errors`; the worker's error and debug log entries."""
    reconciler = RaisesAgain(errors)
    queue: RateLimitingQueue[str] = RateLimitingQueue(name=name, clock=FakeClock())
    controller = Controller(name=name, reconciler=reconciler, queue=queue, max_concurrent_reconciles=1)
    with structlog.testing.capture_logs() as logs:
        task = asyncio.create_task(controller.run())
        try:
            for _ in range(len(errors)):
                queue.add("ns/a")
                for _ in range(500):
                    await asyncio.sleep(0.002)
                    if len(queue) == 0 and queue.processing_count == 0:
                        break
        finally:
            controller.stop()
            await asyncio.wait_for(task, 5)
    assert not reconciler.errors, "a reconcile did not run"
    return [e for e in logs if e["event"].startswith("Reconciler error")]


async def test_the_same_refusal_of_a_key_is_logged_once_as_an_error() -> None:
    """A refused object is reconciled again by the operator's own writes: the repeat is debug."""
    entries = await reconcile_in_turn("ctl-told-once", [TerminalError("bad"), TerminalError("bad")])
    # (The repeat goes to debug, which a logging setup of another test may filter out of the capture.)
    assert [e["error"] for e in entries if e["log_level"] == "error"] == ["bad"]


async def test_a_new_refusal_or_one_after_a_success_is_logged_again() -> None:
    errors: list[Exception | None] = [
        TerminalError("bad"),
        TerminalError("worse"),
        None,
        TerminalError("worse"),
    ]
    entries = await reconcile_in_turn("ctl-told-again", errors)
    assert [(e["log_level"], e["error"]) for e in entries if e["log_level"] == "error"] == [
        ("error", "bad"),
        ("error", "worse"),
        ("error", "worse"),
    ]
