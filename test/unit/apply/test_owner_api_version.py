"""Children name their owner by the version given (a converted kind's storage version); a child an
older release owns through a reference of another version is still the owner's: adopted, its
reference rewritten by the next apply, nothing else changed, nothing created beside it."""

from __future__ import annotations

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import Desired, prepare
from unit.apply.fakes import OWNER, STAMP, FakeCache, FakeClient, cm, syncer

OLD = {**OWNER, "apiVersion": "example.com/v1alpha1"}
NEW_VERSION = "example.com/v1beta1"


def _controller_versions(obj: dict[str, object]) -> list[object]:
    refs = obj["metadata"]["ownerReferences"]  # type: ignore[index]
    return [r["apiVersion"] for r in refs if r.get("controller")]  # type: ignore[union-attr]


def test_prepare_names_the_owner_by_the_given_version() -> None:
    child = prepare(OLD, cm("c"), STAMP, owner_api_version=NEW_VERSION)
    assert _controller_versions(child) == [NEW_VERSION]


async def test_child_owned_through_an_older_version_is_adopted_and_its_reference_rewritten() -> None:
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/c")] = prepare(
        OLD, cm("c", "1"), STAMP
    )  # as the old release left it
    sent: list[dict[str, object]] = []
    apply = client.apply

    async def recording_apply(resource, obj, **kw):  # type: ignore[no-untyped-def]
        sent.append(obj)
        return await apply(resource, obj, **kw)

    client.apply = recording_apply  # type: ignore[method-assign]
    report = await syncer(client, cache, owner_api_version=NEW_VERSION).sync(
        OLD, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[kinds.CONFIG_MAP]
    )
    assert client.calls == [("apply", "c")]  # one update in place: no delete, no second object
    [written] = sent
    assert _controller_versions(written) == [NEW_VERSION]
    assert written["data"] == cache.objects[(kinds.CONFIG_MAP, "ns/c")]["data"] == {"k": "1"}
    assert report.get(kinds.CONFIG_MAP, "c") is not None


async def test_child_already_naming_the_storage_version_is_left_alone() -> None:
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/c")] = prepare(
        OLD, cm("c", "1"), STAMP, owner_api_version=NEW_VERSION
    )
    await syncer(client, cache, owner_api_version=NEW_VERSION).sync(
        OLD, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[kinds.CONFIG_MAP]
    )
    assert client.calls == []
