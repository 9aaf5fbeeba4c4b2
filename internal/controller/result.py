"""What a reconcile can return or raise; `settle` maps each to a queue action."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Result:
    """A finished reconcile. `requeue_after`: seconds until the next run; None waits for a watch event.

    There is deliberately no `requeue=True`: polling should name its interval, and backoff is
    for errors (raise instead).
    """

    requeue_after: float | None = None

    def is_zero(self) -> bool:
        return not self.requeue_after


class TerminalError(Exception):
    """Cannot succeed until the object changes: counted as an error, never retried."""


class ReconcileTimeout(Exception):
    """A reconcile outlived its controller's reconcile timeout and was cancelled. An error like any
    other (retried with backoff): what it waited for may answer next time."""

    def __init__(self, key: str, seconds: float) -> None:
        super().__init__(f"reconcile of {key} cancelled after the {seconds:g} s reconcile timeout")
        self.key, self.seconds = key, seconds
