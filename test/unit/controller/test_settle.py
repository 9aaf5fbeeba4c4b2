"""settle(): the outcome → queue action table (controller-runtime's reconcileHandler switch)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from dynamo_operator.internal.controller import Outcome, Result, TerminalError, settle


@dataclass
class RecordingQueue:
    """Records the queue calls settle makes (only settle's subset of WorkQueue is exercised)."""

    calls: list[tuple[str, ...]] = field(default_factory=list)

    def add(self, key: str) -> None:
        self.calls.append(("add", key))

    def add_after(self, key: str, delay: float) -> None:
        self.calls.append(("add_after", key, str(delay)))

    def add_rate_limited(self, key: str) -> None:
        self.calls.append(("add_rate_limited", key))

    def forget(self, key: str) -> None:
        self.calls.append(("forget", key))


@pytest.mark.parametrize(
    ("outcome", "label", "calls"),
    [
        pytest.param(Result(), Outcome.SUCCESS, [("forget", "ns/a")], id="empty-result-forgets"),
        pytest.param(
            Result(requeue_after=0), Outcome.SUCCESS, [("forget", "ns/a")], id="zero-delay-is-success"
        ),
        pytest.param(
            Result(requeue_after=30),
            Outcome.REQUEUE_AFTER,
            [("forget", "ns/a"), ("add_after", "ns/a", "30")],
            id="requeue-after-resets-backoff-then-delays",
        ),
        pytest.param(
            RuntimeError("boom"), Outcome.ERROR, [("add_rate_limited", "ns/a")], id="error-backs-off"
        ),
        pytest.param(TerminalError("bad spec"), Outcome.ERROR, [], id="terminal-error-not-retried"),
        pytest.param(
            KeyboardInterrupt(), Outcome.ERROR, [("add_rate_limited", "ns/a")], id="panic-backs-off"
        ),
    ],
)
def test_settle_maps_outcome_to_queue_action(
    outcome: Result | BaseException, label: Outcome, calls: list[tuple[str, ...]]
) -> None:
    """Each outcome yields exactly its queue calls and its `result` label."""
    queue = RecordingQueue()
    assert settle(queue, "ns/a", outcome) is label  # type: ignore[arg-type]
    assert queue.calls == calls


def test_terminal_error_subclass_is_terminal() -> None:
    """Classification is by type, so subclasses of TerminalError are terminal too."""

    class SpecInvalid(TerminalError):
        pass

    queue = RecordingQueue()
    assert settle(queue, "k", SpecInvalid()) is Outcome.ERROR  # type: ignore[arg-type]
    assert queue.calls == []
