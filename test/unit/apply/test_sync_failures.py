"""What a failed child sync becomes in the owner's reconcile: a reason for its condition, and a
retry only where one can succeed."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import (
    ChildrenOwnedByOthers,
    ChildWriteError,
    DuplicateChildren,
    report_sync_failure,
)
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.controller.result import TerminalError


@pytest.mark.parametrize(
    ("err", "reason", "outcome"),
    [
        pytest.param(
            ChildWriteError(kinds.CONFIG_MAP, "c", "apply", errors.Invalid(422, "Invalid")),
            "ApplyRejected",
            "terminal",
            id="refused-content",
        ),
        pytest.param(
            ChildWriteError(
                kinds.CONFIG_MAP,
                "c",
                "apply",
                errors.Forbidden(403, "Forbidden", 'admission webhook "w" denied the request: no'),
            ),
            "ApplyRejected",
            "terminal",
            id="refused-by-admission",
        ),
        pytest.param(
            ChildrenOwnedByOthers(["ConfigMap c is controlled by K o"]), "NameConflict", 60.0, id="conflict"
        ),
        pytest.param(DuplicateChildren(["configmaps/c"]), "DuplicateChildren", "terminal", id="duplicate"),
    ],
)
async def test_a_failed_sync_is_reported_once_with_its_reason(
    err: Exception, reason: str, outcome: Any
) -> None:
    """Each refusal becomes a reason for the owner's condition; only a conflict is looked at again
    (after a minute), the rest wait for a change of the owner."""
    reported: list[tuple[str, str]] = []

    async def fail(r: str, message: str) -> None:
        reported.append((r, message))

    if outcome == "terminal":
        with pytest.raises(TerminalError):
            await report_sync_failure(err, fail)
    else:
        assert (await report_sync_failure(err, fail)).requeue_after == outcome
    assert [r for r, _ in reported] == [reason]


async def test_a_transient_write_error_is_left_to_the_queue_backoff() -> None:
    reported: list[str] = []

    async def fail(r: str, message: str) -> None:
        reported.append(r)

    transient = ChildWriteError(kinds.CONFIG_MAP, "c", "apply", errors.ServerError(504, "Timeout"))
    with pytest.raises(ChildWriteError):
        await report_sync_failure(transient, fail)
    assert reported == []
