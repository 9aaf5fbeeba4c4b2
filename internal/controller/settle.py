"""The single place that turns a reconcile outcome into a queue action."""

from __future__ import annotations

import enum

from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.workqueue.interface import WorkQueue


class Outcome(enum.StrEnum):
    """The `result` label of `controller_runtime_reconcile_total`."""

    SUCCESS = "success"
    ERROR = "error"
    REQUEUE = "requeue"  # kept for dashboards; `Result` cannot ask for it
    REQUEUE_AFTER = "requeue_after"


def settle(queue: WorkQueue[str], key: str, outcome: Result | BaseException) -> Outcome:
    """Apply the queue action for `outcome` and return its label. The caller still calls `done()`.

    `forget` (reset backoff) differs from `done` (release the key): a terminal error does neither
    forget nor retry, so a later event for the object starts from the backoff it had.
    """
    match outcome:
        case TerminalError():
            return Outcome.ERROR
        case BaseException():
            queue.add_rate_limited(key)
            return Outcome.ERROR
        case Result(requeue_after=delay) if delay:
            queue.forget(key)  # polling is not failing: restart the backoff
            queue.add_after(key, delay)
            return Outcome.REQUEUE_AFTER
        case _:
            queue.forget(key)
            return Outcome.SUCCESS
