"""Event recording: non-blocking, repeats folded into count/lastTimestamp, per-object spam limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from dynamo_operator.internal.client.errors import Forbidden, NotFound, ServerError
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.events import EventBroadcaster
from structlog.testing import capture_logs
from unit.controller.events_testlib import drain


class FakeSink:
    def __init__(self) -> None:
        self.events: dict[tuple[str, str], dict[str, Any]] = {}
        self.creates = 0
        self.patches = 0
        self.fail_next: list[Exception] = []

    async def create(self, event: dict[str, Any]) -> dict[str, Any]:
        if self.fail_next:
            raise self.fail_next.pop(0)
        self.creates += 1
        meta = event["metadata"]
        self.events[(meta["namespace"], meta["name"])] = event
        return event

    async def patch(self, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        if self.fail_next:
            raise self.fail_next.pop(0)
        self.patches += 1
        if (namespace, name) not in self.events:
            raise NotFound(404, "NotFound", "gone", {})
        self.events[(namespace, name)].update(body)
        return self.events[(namespace, name)]


def dgd(name: str = "graph", ns: str = "team") -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": "7"},
    }


def make(sink: FakeSink, clock: FakeClock, **kw: Any) -> EventBroadcaster:
    return EventBroadcaster(sink, host="node-1", clock=clock, retry_delay=0, **kw)


async def test_first_event_creates_a_core_v1_event() -> None:
    """An Event carries involvedObject, reason, message, type, source and count 1."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock)
    b.recorder("dynamographdeployment").event(dgd(), type="Normal", reason="Created", message="made 2 DCDs")
    await drain(b)
    [event] = sink.events.values()
    assert event["involvedObject"] == {
        "apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "name": "graph",
        "namespace": "team", "uid": "uid-graph", "resourceVersion": "7",
    }  # fmt: skip
    assert (event["reason"], event["message"], event["type"], event["count"]) == (
        "Created",
        "made 2 DCDs",
        "Normal",
        1,
    )
    assert event["source"] == {"component": "dynamographdeployment", "host": "node-1"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"
    assert event["metadata"]["namespace"] == "team" and event["metadata"]["name"].startswith("graph.")


async def test_repeats_patch_count_and_last_timestamp() -> None:
    """The same object+type+reason+message is one Event whose count grows."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock)
    rec = b.recorder("c")
    for _ in range(3):
        rec.event(dgd(), type="Warning", reason="Failed", message="no capacity")
        clock.advance(10)
    rec.event(dgd(), type="Warning", reason="Failed", message="other message")
    await drain(b)
    assert (sink.creates, sink.patches) == (2, 2)
    folded = next(e for e in sink.events.values() if e["message"] == "no capacity")
    assert folded["count"] == 3
    assert folded["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert folded["lastTimestamp"] == "2026-01-01T00:00:20Z"


async def test_spam_filter_limits_one_object_not_others() -> None:
    """25 events per object pass at once; then one per 300 s. Another object is unaffected."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock)
    rec = b.recorder("c")
    for i in range(40):
        rec.event(dgd("noisy"), type="Normal", reason="R", message=f"m{i}")
    rec.event(dgd("quiet"), type="Normal", reason="R", message="m")
    await drain(b)
    assert sink.creates == 26
    clock.advance(300)
    rec.event(dgd("noisy"), type="Normal", reason="R", message="later")
    await drain(b)
    assert sink.creates == 27


async def test_event_never_blocks_and_drops_when_queue_is_full() -> None:
    """With the sender stopped, event() still returns; beyond the queue size events are dropped."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock, queue_size=5)
    for i in range(8):
        b.recorder("c").event(dgd(), type="Normal", reason="R", message=f"m{i}")
    assert b.dropped == 3


async def test_transient_failures_are_retried_and_vanished_events_recreated() -> None:
    """A 500 is retried; a patch of an Event that expired creates a new one; a 403 is given up."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock)
    rec = b.recorder("c")
    sink.fail_next = [ServerError(500, "InternalError", "x", {})]
    rec.event(dgd(), type="Normal", reason="R", message="m")
    await drain(b)
    assert sink.creates == 1
    sink.events.clear()  # the server's event TTL removed it
    rec.event(dgd(), type="Normal", reason="R", message="m")
    await drain(b)
    assert sink.creates == 2
    sink.fail_next = [Forbidden(403, "Forbidden", "no RBAC", {})]
    rec.event(dgd("other"), type="Normal", reason="R", message="m")
    await drain(b)
    assert sink.creates == 2


def test_event_type_is_validated() -> None:
    """Only Normal and Warning exist."""
    b = make(FakeSink(), FakeClock())
    with pytest.raises(ValueError):
        b.recorder("c").event(dgd(), type="Info", reason="R", message="m")


class SlowSink(FakeSink):
    """A sink whose writes take a moment, counting how many are in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = self.most_in_flight = 0

    async def create(self, event: dict[str, Any]) -> dict[str, Any]:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            return await super().create(event)
        finally:
            self.in_flight -= 1


async def test_events_of_different_objects_are_sent_concurrently() -> None:
    sink, clock = SlowSink(), FakeClock()
    b = make(sink, clock, senders=4)
    for i in range(8):
        b.recorder("c").event(dgd(f"g{i}"), type="Normal", reason="Created", message="created")
    await drain(b)
    assert sink.creates == 8
    assert sink.most_in_flight == 4


async def test_repeats_sent_by_concurrent_senders_still_fold_into_one_event() -> None:
    sink, clock = SlowSink(), FakeClock()
    b = make(sink, clock, senders=4)
    for _ in range(3):
        b.recorder("c").event(dgd(), type="Warning", reason="Failed", message="same")
    await drain(b)
    assert (sink.creates, sink.patches) == (1, 2)
    [event] = sink.events.values()
    assert event["count"] == 3


@pytest.mark.parametrize(
    ("refusal", "warned"),
    [
        pytest.param(
            Forbidden(
                403,
                "Forbidden",
                'events "graph.1" is forbidden: unable to create new content in namespace team because it is'
                " being terminated",
                {"causes": [{"reason": "NamespaceTerminating"}]},
            ),
            False,
            id="namespace-terminating",
        ),
        pytest.param(Forbidden(403, "Forbidden", "no RBAC", {}), True, id="rbac"),
    ],
)
async def test_an_event_refused_with_its_dying_namespace_is_no_warning(
    refusal: Exception, warned: bool
) -> None:
    """As client-go: an Event refused because its namespace is being deleted is expected (logged at
    debug, which the session's logging may filter); any other refusal is a warning. Neither is sent
    again."""
    sink, clock = FakeSink(), FakeClock()
    b = make(sink, clock)
    sink.fail_next = [refusal]
    with capture_logs() as logs:
        b.recorder("c").event(dgd(), type="Warning", reason="ApplyFailed", message="m")
        await drain(b)
    warnings = [e for e in logs if e["event"] == "Event rejected" and e["log_level"] == "warning"]
    assert len(warnings) == (1 if warned else 0)
    assert sink.creates == 0 and sink.fail_next == []
