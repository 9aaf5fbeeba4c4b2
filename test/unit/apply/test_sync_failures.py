"""What a failed child sync becomes in the owner's reconcile: a reason for its condition, and a
retry only where one can succeed."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import (
    ChildrenOwnedByOthers,
    ChildWriteError,
    Desired,
    DuplicateChildren,
    report_sync_failure,
)
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.controller.result import TerminalError
from unit.apply.fakes import (
    OWNER,
    FakeCache,
    FakeRecorder,
    RefusingClient,
    cm,
    namespace_gone,
    syncer,
    terminating_namespace,
)


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


@pytest.mark.parametrize("refusal", [terminating_namespace(), namespace_gone()], ids=["terminating", "gone"])
async def test_a_create_refused_by_a_dying_namespace_ends_the_reconcile_quietly(
    refusal: errors.ApiError,
) -> None:
    """The namespace never comes back and takes the owner with it: no retry (it cannot succeed), no
    condition, no Warning (it would be refused too), no error."""
    reported: list[str] = []

    async def fail(r: str, message: str) -> None:
        reported.append(r)

    err = ChildWriteError(kinds.CONFIG_MAP, "c", "apply", refusal)
    result = await report_sync_failure(err, fail)
    assert result.requeue_after is None
    assert reported == []


async def test_the_syncer_sends_no_warning_for_a_create_its_dying_namespace_refused() -> None:
    cache = FakeCache()
    client, recorder = RefusingClient(cache, terminating_namespace()), FakeRecorder()
    with pytest.raises(ChildWriteError):
        await syncer(client, cache, recorder).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[])
    assert recorder.events == []


async def test_the_syncer_still_warns_of_other_refused_writes() -> None:
    cache = FakeCache()
    rbac = errors.Forbidden(403, "Forbidden", 'configmaps is forbidden: User "op" cannot create', {})
    client, recorder = RefusingClient(cache, rbac), FakeRecorder()
    with pytest.raises(ChildWriteError):
        await syncer(client, cache, recorder).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[])
    assert recorder.events == [("Warning", "ApplyConfigMapFailed")]
