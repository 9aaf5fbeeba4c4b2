"""StatusWriter builds each status patch on what the server holds as far as it knows: its own last
write while the cache still shows the status from before it (in-memory fakes)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.controllers.apply import StatusWriter
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource

Obj = dict[str, Any]


class PatchingClient:
    """Applies merge patches to one stored status, as the API server would."""

    def __init__(self, status: Obj) -> None:
        self.status = dict(status)
        self.patches: list[Obj] = []

    async def patch(self, resource: Resource, name: str, body: Obj, **_: Any) -> Obj:
        self.patches.append(body["status"])
        for key, value in body["status"].items():
            if value is None:
                self.status.pop(key, None)
            else:
                self.status[key] = value
        return {"status": self.status}


def graph(status: Obj, rv: str = "1") -> Obj:
    return {"metadata": {"name": "g", "namespace": "ns", "resourceVersion": rv}, "status": status}


READY = {"state": "successful", "conditions": [{"type": "Ready", "status": "True"}]}
PENDING = {"state": "pending", "conditions": [{"type": "Ready", "status": "False"}]}


async def test_a_status_going_back_to_what_the_stale_cache_shows_is_still_sent_whole() -> None:
    client = PatchingClient(READY)
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    stale = graph(READY)
    assert await writer.write(stale, PENDING)
    # The cache has not seen that write yet; the next status is the cache's own again.
    assert await writer.write(stale, READY)
    assert client.status == READY  # not a Ready condition beside the earlier write's state


async def test_an_unchanged_status_is_not_sent_while_the_cache_is_behind() -> None:
    client = PatchingClient(READY)
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    stale = graph(READY)
    assert await writer.write(stale, PENDING)
    assert not await writer.write(stale, PENDING)
    assert len(client.patches) == 1


async def test_once_the_cache_caught_up_the_patch_is_built_on_the_cache() -> None:
    client = PatchingClient(READY)
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    assert await writer.write(graph(READY), PENDING)
    caught_up = graph(PENDING, rv="2")
    assert not await writer.write(caught_up, PENDING)
    assert await writer.write(caught_up, READY)
    assert client.patches[-1] == READY
