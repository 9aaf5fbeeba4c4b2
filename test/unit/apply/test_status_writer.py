"""StatusWriter builds each status patch on what the server holds as far as it knows: its own last
write while the cache still shows the status from before it; or, with a precondition, the view it
was given, which the server refuses when stale (in-memory fakes)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import StatusWriter
from dynamo_operator.internal.client import errors
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


class VersionedServer(PatchingClient):
    """A PatchingClient that answers with the resourceVersion each write gets, as the API server does."""

    def __init__(self, status: Obj, rv: int = 1) -> None:
        super().__init__(status)
        self.rv = rv

    async def patch(self, resource: Resource, name: str, body: Obj, **kwargs: Any) -> Obj:
        await super().patch(resource, name, body, **kwargs)
        self.rv += 1
        return {"metadata": {"resourceVersion": str(self.rv)}, "status": dict(self.status)}


async def test_a_cache_showing_an_older_write_of_ours_is_still_behind_the_last_one() -> None:
    """Two quick writes, then the cache shows the first: a status back to that first one is sent,
    since the server holds the second (a `successful` graph was once left with the `Ready=False` of
    the write in between, because the first write's version was taken for "caught up")."""
    server = VersionedServer(READY)
    writer = StatusWriter(server, kinds.DGD)  # type: ignore[arg-type]
    assert await writer.write(graph(READY, rv="1"), PENDING)  # the server's rv 2
    assert await writer.write(graph(READY, rv="1"), READY)  # rv 3; the cache still shows rv 1
    assert await writer.write(graph(PENDING, rv="2"), PENDING)
    assert server.status == PENDING


async def test_a_cache_showing_our_last_write_or_newer_is_trusted() -> None:
    server = VersionedServer(READY)
    writer = StatusWriter(server, kinds.DGD)  # type: ignore[arg-type]
    assert await writer.write(graph(READY, rv="1"), PENDING)  # rv 2
    someone_else = graph({**PENDING, "state": "failed"}, rv="7")
    assert await writer.write(someone_else, PENDING)  # built on rv 7's status, not on our write
    assert server.patches[-1] == {"state": "pending"}


class ConditionalServer:
    """Holds one object; refuses, as the API server does, a patch naming another resourceVersion."""

    def __init__(self, status: Obj) -> None:
        self.obj: Obj = {
            "metadata": {"name": "r", "namespace": "ns", "resourceVersion": "1"},
            "status": status,
        }
        self.bodies: list[Obj] = []

    async def patch(self, resource: Resource, name: str, body: Obj, **_: Any) -> Obj:
        self.bodies.append(body)
        expected = (body.get("metadata") or {}).get("resourceVersion")
        if expected is not None and expected != self.obj["metadata"]["resourceVersion"]:
            raise errors.Conflict(409, "Conflict", "the object has been modified")
        status = {**self.obj["status"], **body["status"]}
        rv = str(int(self.obj["metadata"]["resourceVersion"]) + 1)
        self.obj = {"metadata": {**self.obj["metadata"], "resourceVersion": rv}, "status": status}
        return copy.deepcopy(self.obj)


async def test_with_a_precondition_each_patch_names_the_version_it_was_computed_from() -> None:
    server = ConditionalServer({"state": "Pending"})
    writer = StatusWriter(server, kinds.DGDR, precondition=True)  # type: ignore[arg-type]
    await writer.write(copy.deepcopy(server.obj), {"state": "Profiling"})
    assert server.bodies == [{"metadata": {"resourceVersion": "1"}, "status": {"state": "Profiling"}}]


async def test_with_a_precondition_a_write_from_a_stale_view_is_refused_not_skipped() -> None:
    """No memory of our own writes stands in for the server: the stale view's status is the base,
    so the write is sent, and the server refuses it for the queue to retry from a fresh view."""
    server = ConditionalServer({"state": "Pending"})
    writer = StatusWriter(server, kinds.DGDR, precondition=True)  # type: ignore[arg-type]
    stale = copy.deepcopy(server.obj)
    await writer.write(stale, {"state": "Profiling"})
    with pytest.raises(errors.Conflict):
        await writer.write(stale, {"state": "Profiling"})
    assert server.obj["status"] == {"state": "Profiling"}
    assert writer.current(stale) == {"state": "Pending"}


async def test_commit_returns_the_object_as_the_server_holds_it_with_its_type() -> None:
    server = ConditionalServer({"state": "Pending"})
    writer = StatusWriter(server, kinds.DGDR, precondition=True)  # type: ignore[arg-type]
    written = await writer.commit(copy.deepcopy(server.obj), {"state": "Profiling", "backend": None})
    assert written is not None
    assert written["status"] == {"state": "Profiling"}
    assert written["metadata"]["resourceVersion"] == "2"
    assert (written["apiVersion"], written["kind"]) == (kinds.DGDR.api_version, kinds.DGDR.kind)


@pytest.mark.parametrize("precondition", [False, True], ids=["remembering", "preconditioned"])
async def test_an_unchanged_status_sends_nothing_and_commits_nothing(precondition: bool) -> None:
    server = ConditionalServer({"state": "Pending", "conditions": [{"type": "Ready", "status": "False"}]})
    writer = StatusWriter(server, kinds.DGDR, precondition=precondition)  # type: ignore[arg-type]
    live = copy.deepcopy(server.obj)
    assert await writer.commit(live, {**live["status"], "message": None}) is None
    assert server.bodies == []


class GoneClient:
    """The object was deleted after the reconciler read it (its namespace is being deleted)."""

    async def patch(self, resource: Resource, name: str, body: Obj, **_: Any) -> Obj:
        raise errors.NotFound(404, "NotFound")


async def test_a_status_write_to_an_object_deleted_meanwhile_is_nothing_to_report() -> None:
    writer = StatusWriter(GoneClient(), kinds.DCD)  # type: ignore[arg-type]
    assert await writer.commit(graph(READY), PENDING) is None
    assert not await writer.write(graph(READY), PENDING)


class EncodingClient(PatchingClient):
    """Speaks the kind in another version on the wire (internal/client/codec.py): counts encodes."""

    def __init__(self, status: Obj) -> None:
        super().__init__(status)
        self.encoded = 0

    def to_wire(self, resource: Resource, obj: Obj) -> Obj:
        self.encoded += 1
        return obj


async def test_an_unchanged_status_is_not_encoded_for_the_wire() -> None:
    client = EncodingClient(READY)
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    assert not await writer.write(graph(READY), copy.deepcopy(READY))
    assert (client.encoded, client.patches) == (0, [])


async def test_a_changed_status_is_encoded_for_the_wire_both_sides() -> None:
    client = EncodingClient(READY)
    writer = StatusWriter(client, kinds.DGD)  # type: ignore[arg-type]
    assert await writer.write(graph(READY), PENDING)
    assert client.encoded == 2
