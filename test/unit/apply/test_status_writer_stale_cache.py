"""StatusWriter patches against what the server has, as far as this process knows: while the cache
still shows the version from before our previous status write, a second write that changes a field
back must still carry it (found by the multinode scaling test: a graph scaled 1 -> 0 was left
`state: pending` under a Ready=True condition)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import StatusWriter


class RecordingClient:
    """Records the status patches; nothing else is called."""

    def __init__(self) -> None:
        self.patches: list[dict[str, Any]] = []

    async def patch(self, resource: Any, name: str, body: Any, **kwargs: Any) -> dict[str, Any]:
        self.patches.append(body["status"])
        return {}


def graph(status: dict[str, Any], rv: str = "1") -> dict[str, Any]:
    return {"metadata": {"name": "g", "namespace": "ns", "resourceVersion": rv}, "status": status}


async def test_a_field_changed_back_before_the_cache_caught_up_is_sent() -> None:
    client = RecordingClient()
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    stale = graph({"state": "successful", "observedGeneration": 1})
    assert await writer.write(stale, {"state": "pending", "observedGeneration": 2})
    # The cache still shows the object from before that write.
    assert await writer.write(stale, {"state": "successful", "observedGeneration": 2})
    assert client.patches == [
        {"state": "pending", "observedGeneration": 2},
        {"state": "successful"},
    ]


async def test_a_write_equal_to_the_one_in_flight_is_not_sent() -> None:
    client = RecordingClient()
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    stale = graph({"state": "successful"})
    assert await writer.write(stale, {"state": "pending"})
    assert not await writer.write(stale, {"state": "pending"})
    assert len(client.patches) == 1


async def test_with_the_cache_caught_up_the_patch_is_against_it() -> None:
    client = RecordingClient()
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    assert await writer.write(graph({"state": "successful"}, rv="1"), {"state": "pending"})
    fresh = graph({"state": "pending", "observedGeneration": 3}, rv="2")
    assert await writer.write(fresh, {"state": "pending", "observedGeneration": 4})
    assert client.patches[-1] == {"observedGeneration": 4}
