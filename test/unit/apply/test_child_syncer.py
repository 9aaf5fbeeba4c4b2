"""The child syncer's write/skip/prune choices against in-memory fakes (fakes only for pure logic),
with a hash stamp and field manager that are not the operator's."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildrenOwnedByOthers, Desired, DuplicateChildren, prepare
from unit.apply.fakes import (
    FIELD_MANAGER,
    OWNER,
    STAMP,
    STAMP_ANNOTATION,
    FakeCache,
    FakeClient,
    FakeRecorder,
    cm,
    syncer,
)


async def test_syncer_writes_only_changes_and_prunes_only_its_own() -> None:
    """Unchanged hash → no request; changed → apply; controlled but undesired → delete; PVC-like
    create-only that exists → untouched; a `shared` child another owner controls → used as is."""
    cache = FakeCache()
    client, recorder = FakeClient(cache), FakeRecorder()
    cache.objects[(kinds.CONFIG_MAP, "ns/same")] = prepare(OWNER, cm("same", "1", owner_uid="u1"), STAMP)
    cache.objects[(kinds.CONFIG_MAP, "ns/changed")] = prepare(
        OWNER, cm("changed", "old", owner_uid="u1"), STAMP
    )
    cache.objects[(kinds.CONFIG_MAP, "ns/sibling")] = STAMP.stamp(cm("sibling", "1", owner_uid="other"))
    cache.objects[(kinds.CONFIG_MAP, "ns/stale")] = prepare(OWNER, cm("stale", "1", owner_uid="u1"), STAMP)
    cache.objects[(kinds.CONFIG_MAP, "ns/users")] = cm("users", "1")
    report = await syncer(client, cache, recorder).sync(
        OWNER,
        [
            Desired(kinds.CONFIG_MAP, cm("same", "1")),
            Desired(kinds.CONFIG_MAP, cm("changed", "new")),
            Desired(kinds.CONFIG_MAP, cm("sibling", "1"), shared=True),
            Desired(kinds.CONFIG_MAP, cm("users", "2"), create_only=True),
            Desired(kinds.CONFIG_MAP, cm("fresh", "1")),
        ],
        owned=[kinds.CONFIG_MAP],
    )
    assert sorted(client.calls) == [("apply", "changed"), ("apply", "fresh"), ("delete", "stale")]
    assert report.get(kinds.CONFIG_MAP, "sibling") == cache.objects[(kinds.CONFIG_MAP, "ns/sibling")]
    assert [e for e in recorder.events if e[0] == "Warning"] == []


async def test_syncer_writes_nothing_when_another_owner_controls_a_child() -> None:
    """A desired child controlled by someone else: no write at all (not even the children that are
    free), and the error names the object and its controller."""
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/taken")] = STAMP.stamp(cm("taken", "1", owner_uid="other"))
    with pytest.raises(ChildrenOwnedByOthers) as err:
        await syncer(client, cache).sync(
            OWNER,
            [Desired(kinds.CONFIG_MAP, cm("free", "1")), Desired(kinds.CONFIG_MAP, cm("taken", "1"))],
            owned=[kinds.CONFIG_MAP],
        )
    assert client.calls == []
    assert err.value.conflicts == ["ConfigMap taken is controlled by K o"]


async def test_syncer_adopts_a_child_nobody_controls() -> None:
    """An object of the desired name without a controller (made by hand) is taken over, as before."""
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/loose")] = cm("loose", "0")
    await syncer(client, cache).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("loose", "1"))], owned=[])
    assert client.calls == [("apply", "loose")]


async def test_syncer_refuses_a_desired_set_naming_one_object_twice() -> None:
    """Two versions of one object would overwrite each other on every sync (a hot loop): refused
    before any write, naming the object."""
    cache = FakeCache()
    client = FakeClient(cache)
    with pytest.raises(DuplicateChildren, match="configmaps/twice"):
        await syncer(client, cache).sync(
            OWNER,
            [
                Desired(kinds.CONFIG_MAP, cm("twice", "1")),
                Desired(kinds.CONFIG_MAP, cm("once", "1")),
                Desired(kinds.CONFIG_MAP, cm("twice", "2")),
            ],
            owned=[kinds.CONFIG_MAP],
        )
    assert client.calls == []


async def test_child_created_then_deleted_before_the_cache_saw_it_is_created_again() -> None:
    """Our create is remembered as in flight while the cache lags; if the child is deleted before a
    reconcile saw it, the next sync must not mistake the empty cache for that lag."""
    cache = FakeCache()
    client = FakeClient(cache)
    sync = syncer(client, cache)
    want = [Desired(kinds.CONFIG_MAP, cm("child", "1"))]
    await sync.sync(OWNER, want, owned=[kinds.CONFIG_MAP])
    client.server[(kinds.CONFIG_MAP, "ns/child")] = cm("child", "1", owner_uid="u1")
    await sync.sync(OWNER, want, owned=[kinds.CONFIG_MAP])  # cache still behind: no second write
    assert client.calls == [("apply", "child"), ("get", "child")]
    del client.server[(kinds.CONFIG_MAP, "ns/child")]  # deleted; the cache never showed it
    await sync.sync(OWNER, want, owned=[kinds.CONFIG_MAP])
    assert client.calls[-2:] == [("get", "child"), ("apply", "child")]


async def test_role_bindings_are_written_after_every_other_child() -> None:
    """The API server checks a RoleBinding against its Role: the Role's write must have finished."""
    cache = FakeCache()
    client = FakeClient(cache)

    def rbac(kind: str, name: str) -> dict[str, Any]:
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                "metadata": {"name": name, "namespace": "ns"}}  # fmt: skip

    await syncer(client, cache).sync(
        OWNER,
        [
            Desired(kinds.ROLE_BINDING, rbac("RoleBinding", "binding")),
            Desired(kinds.ROLE, rbac("Role", "role")),
            Desired(
                kinds.SERVICE_ACCOUNT,
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "ns"}},
            ),
        ],
        owned=[kinds.ROLE_BINDING, kinds.ROLE, kinds.SERVICE_ACCOUNT],
    )
    assert client.calls[-1] == ("apply", "binding")
    assert sorted(client.calls[:-1]) == [("apply", "role"), ("apply", "sa")]


async def test_the_callers_stamp_and_field_manager_are_what_the_syncer_writes_and_reads() -> None:
    """Nothing of the operator's own: the written child carries the given stamp, the apply the given
    field manager, and a child whose stamp matches its desired content costs no request."""
    cache = FakeCache()
    client = FakeClient(cache)
    sync = syncer(client, cache)
    report = await sync.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[kinds.CONFIG_MAP])
    written = report.get(kinds.CONFIG_MAP, "c")
    assert written is not None
    assert written["metadata"]["annotations"] == {STAMP_ANNOTATION: STAMP.content(written)}
    assert client.field_managers == [FIELD_MANAGER]
    cache.objects[(kinds.CONFIG_MAP, "ns/c")] = {
        **written,
        "metadata": {**written["metadata"], "resourceVersion": "2"},
    }
    await sync.sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[kinds.CONFIG_MAP])
    assert client.calls == [("apply", "c")]


async def test_a_child_stamped_by_another_stamp_is_written_again() -> None:
    """The stamp decides what "unchanged" means: a child that carries only the operator's own
    annotation is, for a syncer with another stamp, a child of unknown content."""
    from dynamo_operator.internal.dynamo.common.hashing import LAST_APPLIED_HASH

    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/c")] = prepare(OWNER, cm("c", "1"), LAST_APPLIED_HASH)
    await syncer(client, cache).sync(OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[])
    assert client.calls == [("apply", "c")]


def test_prepare_leaves_the_callers_object_as_it_was() -> None:
    """Preparing stamps, owns and places a copy: the desired object the caller holds keeps its
    metadata, so generating once and syncing twice writes the same thing twice."""
    desired = cm("c", "1")
    desired["metadata"]["annotations"] = {"mine": "x"}
    before = repr(desired)
    out = prepare(OWNER, desired, STAMP)
    assert repr(desired) == before
    assert out["metadata"]["ownerReferences"][0]["uid"] == OWNER["metadata"]["uid"]
    assert STAMP_ANNOTATION in out["metadata"]["annotations"]
    assert out["metadata"]["annotations"]["mine"] == "x"
    assert out["data"] == desired["data"]


async def test_an_unchanged_child_is_judged_by_the_hash_stamped_when_prepared() -> None:
    """The live child carries the hash of what we would send now: no request, whatever the body's
    size (the hash is computed once per child, when it is prepared)."""
    cache = FakeCache()
    client, recorder = FakeClient(cache), FakeRecorder()
    cache.objects[(kinds.CONFIG_MAP, "ns/c")] = prepare(OWNER, cm("c", "1"), STAMP)
    await syncer(client, cache, recorder).sync(
        OWNER, [Desired(kinds.CONFIG_MAP, cm("c", "1"))], owned=[kinds.CONFIG_MAP]
    )
    assert client.calls == []


async def test_one_summary_event_per_sync_names_what_was_created_and_updated() -> None:
    cache = FakeCache()
    cache.objects[(kinds.CONFIG_MAP, "ns/changed")] = prepare(
        OWNER, cm("changed", "old", owner_uid="u1"), STAMP
    )
    client, recorder = FakeClient(cache), FakeRecorder()
    await syncer(client, cache, recorder).sync(
        OWNER,
        [Desired(kinds.CONFIG_MAP, cm("changed", "new")), Desired(kinds.CONFIG_MAP, cm("fresh"))],
        owned=[kinds.CONFIG_MAP],
    )
    assert recorder.events == [("Normal", "Changed")]


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        pytest.param(False, [], id="only-creations-no-event"),
        pytest.param(True, [("Normal", "Updated")], id="creations-left-out-updates-told"),
    ],
)
async def test_an_owner_that_does_not_announce_creations_gets_no_created_event(
    existing: bool, expected: list[tuple[str, str]]
) -> None:
    """`announce_created` False for the owner: its sync's creations are left out of the summary
    Event, what else the sync did is still told."""
    cache = FakeCache()
    if existing:
        cache.objects[(kinds.CONFIG_MAP, "ns/changed")] = prepare(
            OWNER, cm("changed", "old", owner_uid="u1"), STAMP
        )
    client, recorder = FakeClient(cache), FakeRecorder()
    desired = [Desired(kinds.CONFIG_MAP, cm("fresh"))]
    if existing:
        desired.append(Desired(kinds.CONFIG_MAP, cm("changed", "new")))
    report = await syncer(client, cache, recorder, announce_created=lambda owner: False).sync(
        OWNER, desired, owned=[kinds.CONFIG_MAP]
    )
    assert report.created == ["ConfigMap/fresh"]
    assert recorder.events == expected
