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


class ReconcilePanic(Exception):
    """A reconcile raised a BaseException that is not an Exception (nor cancellation); the worker
    survives it and treats it like an error, as controller-runtime recovers a panic."""
