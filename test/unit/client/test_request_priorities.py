"""Who asks the client's gate for what priority: Lease renewals never wait, status writes and the
component controller go first, every other controller after them; Event senders never wait (their
own queue is bounded)."""

from __future__ import annotations

import asyncio
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import StatusWriter
from dynamo_operator.internal.client.gate import Priority, current_priority
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller import Controller, Result
from dynamo_operator.internal.events import EventBroadcaster
from dynamo_operator.internal.workqueue import RateLimitingQueue
from unit.controller.events_testlib import drain


class PriorityRecordingClient:
    """Records the gate priority each request was made at."""

    def __init__(self) -> None:
        self.seen: list[Priority] = []

    async def patch(self, resource: Any, name: str, body: Any, **_: Any) -> dict[str, Any]:
        self.seen.append(current_priority())
        return {"metadata": {"name": name}}

    async def create(self, event: dict[str, Any]) -> dict[str, Any]:
        self.seen.append(current_priority())
        return event


def graph() -> dict[str, Any]:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u", "resourceVersion": "1"},
    }


async def test_status_writes_go_ahead_of_their_controllers_other_requests() -> None:
    client = PriorityRecordingClient()
    await StatusWriter(client, kinds.DGD).write(graph(), {"state": "successful"})  # type: ignore[arg-type]
    assert client.seen == [Priority.HIGH]


async def test_events_never_wait_in_the_gate() -> None:
    """Their own queue is bounded: held behind a rollout's requests it overflowed and dropped them."""
    sink = PriorityRecordingClient()
    broadcaster = EventBroadcaster(sink, host="h", clock=FakeClock(), retry_delay=0)  # type: ignore[arg-type]
    broadcaster.recorder("x").event(graph(), type="Normal", reason="Created", message="m")
    await drain(broadcaster)
    assert sink.seen == [Priority.EXEMPT]


async def controller_priority(**kw: Any) -> Priority:
    seen: list[Priority] = []

    class Reconciler:
        async def reconcile(self, key: str) -> Result:
            seen.append(current_priority())
            return Result()

    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=FakeClock())
    controller = Controller(name="prio", reconciler=Reconciler(), queue=queue, **kw)
    queue.add("ns/a")
    task = asyncio.create_task(controller.run())
    for _ in range(200):
        if seen:
            break
        await asyncio.sleep(0.001)
    controller.stop()
    await task
    return seen[0]


async def test_a_controllers_reconciles_make_requests_at_its_priority() -> None:
    assert await controller_priority(request_priority=Priority.HIGH) is Priority.HIGH


async def test_a_controller_without_one_makes_normal_requests() -> None:
    assert await controller_priority() is Priority.NORMAL
