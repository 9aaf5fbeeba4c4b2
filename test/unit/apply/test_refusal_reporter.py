"""RefusalReporter: a refused or failed owner gets its kind's failure status, written only when it
changed, and one Warning Event per change (in-memory fakes)."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import RefusalReporter, StatusWriter
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.rejection import Rejected
from dynamo_operator.internal.controller.result import TerminalError
from dynamo_operator.internal.dynamo.status import dcd_status, dgd_status

Obj = dict[str, Any]


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[dict[str, str]] = []

    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        self.events.append({"type": type, "reason": reason, "message": message})


class StatusClient:
    """Applies status merge patches to one stored object, as the API server would."""

    def __init__(self, obj: Obj, *, refuse: errors.ApiError | None = None) -> None:
        self.obj, self.refuse = obj, refuse
        self.patches: list[Obj] = []

    async def patch(self, resource: Resource, name: str, body: Obj, **_: Any) -> Obj:
        if self.refuse is not None:
            raise self.refuse
        self.patches.append(body["status"])
        status = dict(self.obj.get("status") or {})
        for key, value in body["status"].items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        self.obj = {**self.obj, "status": status}
        return self.obj


def owner(generation: int = 3, status: Obj | None = None) -> Obj:
    return {
        "metadata": {"name": "o", "namespace": "ns", "uid": "u", "generation": generation},
        "status": status or {},
    }


def failed(
    old: Mapping[str, Any], *, reason: str, message: str, generation: int | None, now: datetime.datetime
) -> Obj:
    return {**old, "failure": {"reason": reason, "message": message, "generation": generation}}


def reporter(client: StatusClient, recorder: FakeRecorder) -> RefusalReporter:
    return RefusalReporter(StatusWriter(client, kinds.DGD), failed, recorder)


async def test_write_builds_the_failure_status_on_the_old_one_with_the_owners_generation() -> None:
    client = StatusClient(owner(status={"state": "pending"}))
    assert await reporter(client, FakeRecorder()).write(client.obj, "Bad", "fix it")
    assert client.obj["status"] == {
        "state": "pending",
        "failure": {"reason": "Bad", "message": "fix it", "generation": 3},
    }


async def test_fail_writes_the_status_and_one_warning() -> None:
    client, recorder = StatusClient(owner()), FakeRecorder()
    await reporter(client, recorder).fail(client.obj, "ApplyRejected", "the API server refused it")
    assert len(client.patches) == 1
    assert [(e["type"], e["reason"], e["message"]) for e in recorder.events] == [
        ("Warning", "ApplyRejected", "the API server refused it")
    ]


async def test_the_same_failure_again_writes_nothing_and_warns_no_more() -> None:
    """A retried failure whose status is already said costs no request and no Event."""
    client, recorder = StatusClient(owner()), FakeRecorder()
    refusals = reporter(client, recorder)
    await refusals.fail(client.obj, "ApplyRejected", "refused")
    await refusals.fail(client.obj, "ApplyRejected", "refused")
    assert len(client.patches) == 1
    assert len(recorder.events) == 1


async def test_a_new_reason_is_written_and_warned_again() -> None:
    client, recorder = StatusClient(owner()), FakeRecorder()
    refusals = reporter(client, recorder)
    await refusals.fail(client.obj, "ApplyRejected", "refused")
    await refusals.fail(client.obj, "NameConflict", "taken")
    assert [e["reason"] for e in recorder.events] == ["ApplyRejected", "NameConflict"]


async def test_reject_says_why_then_ends_the_reconcile_as_terminal() -> None:
    client, recorder = StatusClient(owner()), FakeRecorder()
    with pytest.raises(TerminalError, match=r"spec\.x names nothing"):
        await reporter(client, recorder).reject(
            client.obj, Rejected("InvalidReference", "spec.x names nothing")
        )
    assert client.obj["status"]["failure"]["reason"] == "InvalidReference"
    assert [e["reason"] for e in recorder.events] == ["InvalidReference"]


async def test_a_status_write_that_fails_sends_no_event() -> None:
    """The Event follows the status: a refused write raises before any Event, so a retry decides
    again instead of leaving a Warning the object does not explain."""
    client = StatusClient(owner(), refuse=errors.ApiError(500, "InternalError", "etcd is down"))
    recorder = FakeRecorder()
    with pytest.raises(errors.ApiError):
        await reporter(client, recorder).fail(client.obj, "ApplyRejected", "refused")
    assert recorder.events == []


@pytest.mark.parametrize(
    ("resource", "failed_status", "condition"),
    [
        pytest.param(kinds.DGD, dgd_status.rejected_status, "Ready", id="graph"),
        pytest.param(kinds.DCD, dcd_status.rejected_status, "Available", id="component"),
    ],
)
async def test_each_kinds_own_failure_status_is_written(
    resource: Resource, failed_status: Any, condition: str
) -> None:
    """With the graph's and the component's real failure statuses: the condition False with the
    reason and message."""
    client, recorder = StatusClient(owner()), FakeRecorder()
    refusals = RefusalReporter(StatusWriter(client, resource), failed_status, recorder)
    await refusals.fail(client.obj, "ApplyRejected", "refused")
    conditions = {c["type"]: c for c in client.obj["status"]["conditions"]}
    assert conditions[condition]["status"] == "False"
    assert conditions[condition]["reason"] == "ApplyRejected"
    assert conditions[condition]["message"] == "refused"
