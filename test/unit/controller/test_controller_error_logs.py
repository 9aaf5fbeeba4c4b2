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
