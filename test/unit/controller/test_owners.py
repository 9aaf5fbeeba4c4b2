"""Owner checks: what a live read says about an owner, and one read shared by a sync's creates."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.owners import (
    OwnerCheck,
    OwnerGone,
    OwnerState,
    controller_ref,
    controller_uid,
    owner_reference,
    owner_state,
)

DCD = Resource("nvidia.com", "v1alpha1", "dynamocomponentdeployments", "DynamoComponentDeployment")
OWNER = {"metadata": {"name": "c", "namespace": "ns", "uid": "u1"}}


class Server:
    """What a GET finds: one object per name, or NotFound."""

    def __init__(self, obj: dict[str, Any] | None) -> None:
        self.obj, self.reads = obj, 0

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        self.reads += 1
        await asyncio.sleep(0)  # let concurrent callers pile up on the same read
        if self.obj is None:
            raise errors.NotFound(404, "NotFound")
        return self.obj


def live(uid: str = "u1", *, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "c", "namespace": "ns", "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("found", "state"),
    [
        pytest.param(live(), OwnerState.PRESENT, id="same-uid"),
        pytest.param(None, OwnerState.GONE, id="not-found"),
        pytest.param(live("u2"), OwnerState.GONE, id="replaced-by-another-uid"),
        pytest.param(live(deleting=True), OwnerState.DELETING, id="being-deleted"),
    ],
)
async def test_owner_state_classifies_a_live_read(found: dict[str, Any] | None, state: OwnerState) -> None:
    """Only the UID we know counts as our owner; a deletionTimestamp is its own state."""
    got = await owner_state(Server(found), DCD, namespace="ns", name="c", uid="u1")
    assert got is state


async def test_owner_check_reads_once_for_every_concurrent_caller() -> None:
    """Ten creates of one sync cost one GET of the owner."""
    server = Server(live())
    check = OwnerCheck(server, DCD, OWNER)
    await asyncio.gather(*(check.confirm() for _ in range(10)))
    assert server.reads == 1


@pytest.mark.parametrize(
    "found", [None, live("u2"), live(deleting=True)], ids=["gone", "replaced", "deleting"]
)
async def test_owner_check_refuses_when_the_owner_is_not_there(found: dict[str, Any] | None) -> None:
    """Every caller is refused with OwnerGone, still after one read."""
    server = Server(found)
    check = OwnerCheck(server, DCD, OWNER)
    results = await asyncio.gather(*(check.confirm() for _ in range(3)), return_exceptions=True)
    assert all(isinstance(r, OwnerGone) for r in results)
    assert server.reads == 1
    assert "ns/c" in str(results[0]) and "u1" in str(results[0])


async def test_owner_check_propagates_api_errors_and_reads_again() -> None:
    """A failed read is no verdict: the caller sees the error, the next confirm reads again."""

    class Flaky(Server):
        async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> dict[str, Any]:
            self.reads += 1
            if self.reads == 1:
                raise errors.ServerError(503, "ServiceUnavailable")
            return live()

    server = Flaky(None)
    check = OwnerCheck(server, DCD, OWNER)
    with pytest.raises(errors.ServerError):
        await check.confirm()
    await check.confirm()
    assert server.reads == 2


def test_an_owner_reference_is_a_blocking_controller_reference() -> None:
    owner = {"apiVersion": "example.com/v1", "kind": "Owner", "metadata": {"name": "o", "uid": "u1"}}
    assert owner_reference(owner) == {
        "apiVersion": "example.com/v1",
        "kind": "Owner",
        "name": "o",
        "uid": "u1",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _refs(*refs: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"ownerReferences": list(refs)}}


@pytest.mark.parametrize(
    ("obj", "uid"),
    [
        pytest.param({}, None, id="no-metadata"),
        pytest.param({"metadata": {}}, None, id="no-references"),
        pytest.param(_refs({"uid": "a"}), None, id="owner-but-not-controller"),
        pytest.param(_refs({"uid": "a"}, {"uid": "b", "controller": True}), "b", id="the-controller-one"),
        pytest.param(_refs({"uid": "a", "controller": False}), None, id="controller-false"),
        pytest.param(_refs({"controller": True}), None, id="controller-without-uid"),
    ],
)
def test_controller_uid_is_that_of_the_controller_reference_only(
    obj: dict[str, Any], uid: str | None
) -> None:
    assert controller_uid(obj) == uid


def test_controller_ref_is_the_first_reference_marked_controller() -> None:
    controller = {"kind": "K", "name": "o", "uid": "b", "controller": True}
    assert controller_ref(_refs({"uid": "a"}, controller)) == controller
    assert controller_ref(_refs({"uid": "a"})) is None
