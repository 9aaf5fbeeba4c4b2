"""The operator's cache shapes keep what its readers read, and its memory of recent writes stays small
and bounded in time (issue #13: memory follows what controllers read, not what they wrote)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from dynamo_operator.controllers.apply import ChildSyncer, Desired, RecentWrites
from dynamo_operator.controllers.cache_shapes import CHILD_SHAPES
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.dynamo.hashing import recorded_hash, stamp_hash
from dynamo_operator.internal.dynamo.status import deployment_readiness, lws_readiness

Obj = dict[str, Any]


def deployment(
    *, replicas: int, ready: int, updated: int, available: bool, observed: int = 2, paused: bool = False
) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "ns", "generation": 2, "annotations": {"a": "b"}},
        "spec": {
            "replicas": replicas,
            "paused": paused,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"spec": {"containers": [{"name": "main", "image": "x:1"}]}},
        },
        "status": {
            "observedGeneration": observed,
            "replicas": replicas,
            "readyReplicas": ready,
            "updatedReplicas": updated,
            "availableReplicas": ready,
            "conditions": [{"type": "Available", "status": "True" if available else "False"}],
        },
    }


DEPLOYMENTS = [
    deployment(replicas=r, ready=rd, updated=u, available=a, observed=o, paused=p)
    for r, rd, u, a, o, p in itertools.product(
        (0, 1, 3), (0, 1, 3), (1, 3), (True, False), (1, 2), (False, True)
    )
]


@pytest.mark.parametrize("live", DEPLOYMENTS)
def test_a_shaped_deployment_gives_the_readiness_of_the_whole_one(live: Obj) -> None:
    assert deployment_readiness(CHILD_SHAPES[kinds.DEPLOYMENT](live)) == deployment_readiness(live)


@pytest.mark.parametrize("live", DEPLOYMENTS[:12])
def test_a_shaped_leaderworkerset_gives_the_readiness_of_the_whole_one(live: Obj) -> None:
    lws = {**live, "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}
    lws["spec"] = {**live["spec"], "leaderWorkerTemplate": {"size": 2}}
    assert lws_readiness([CHILD_SHAPES[kinds.LWS](lws)]) == lws_readiness([lws])


@pytest.mark.parametrize("resource", list(CHILD_SHAPES))
def test_every_shape_keeps_what_the_child_syncer_reads(resource: Resource) -> None:
    """Identity, ownership and our hash stamp: the syncer's whole view of an unchanged child."""
    obj = stamp_hash(
        {
            "apiVersion": resource.api_version,
            "kind": resource.kind,
            "metadata": {
                "name": "c",
                "namespace": "ns",
                "uid": "u",
                "resourceVersion": "7",
                "labels": {"l": "v"},
                "ownerReferences": [{"uid": "owner", "controller": True}],
            },
            "spec": {"replicas": 2, "body": {"large": "x" * 100}},
        }
    )
    shaped = CHILD_SHAPES[resource](obj)
    assert shaped["metadata"] == obj["metadata"]
    assert recorded_hash(shaped) == recorded_hash(obj)
    assert "body" not in (shaped.get("spec") or {})


def test_recent_writes_forget_entries_older_than_their_ttl_on_the_next_write() -> None:
    now = [0.0]
    recent = RecentWrites(ttl=30.0, clock=lambda: now[0])
    for i in range(100):
        recent.remember(("k", str(i)), None, {"i": i})
    assert len(recent) == 100
    now[0] = 31.0
    recent.remember(("k", "new"), None, {"i": -1})
    assert len(recent) == 1


def test_recent_writes_keep_at_most_size_entries() -> None:
    recent = RecentWrites(size=10, ttl=30.0, clock=lambda: 0.0)
    for i in range(25):
        recent.remember(("k", str(i)), None, {"i": i})
    assert len(recent) == 10
    assert recent.in_flight(("k", "24"), None) == {"i": 24}
    assert recent.in_flight(("k", "0"), None) is None


def test_rewriting_a_key_makes_it_the_newest_entry() -> None:
    now = [0.0]
    recent = RecentWrites(ttl=30.0, clock=lambda: now[0])
    recent.remember(("k", "a"), None, {"v": 1})
    now[0] = 20.0
    recent.remember(("k", "b"), None, {"v": 1})
    recent.remember(("k", "a"), None, {"v": 2})
    now[0] = 45.0  # b (t=20) and a (t=20) both alive; nothing older left
    recent.remember(("k", "c"), None, {"v": 1})
    assert len(recent) == 3


class ApplyingClient:
    """Answers an apply with the object plus what the API server adds (managedFields, status)."""

    async def apply(self, resource: Resource, obj: Obj, **_: Any) -> Obj:
        meta = {
            **obj["metadata"],
            "uid": "child",
            "resourceVersion": "1",
            "managedFields": [{"manager": "m"}],
        }
        return {**obj, "metadata": meta, "status": {"replicas": 0}}


class EmptyCache:
    def get(self, resource: Resource, key: str) -> Obj | None:
        return None

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        return []


class NoEvents:
    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        pass


async def test_the_syncer_remembers_its_writes_in_the_cache_shape() -> None:
    recent = RecentWrites()
    syncer = ChildSyncer(client=ApplyingClient(), cache=EmptyCache(), recorder=NoEvents(), recent=recent)  # type: ignore[arg-type]
    owner = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment",
             "metadata": {"name": "o", "namespace": "ns", "uid": "u1"}}  # fmt: skip
    child = deployment(replicas=1, ready=0, updated=0, available=False)
    del child["status"]
    await syncer.sync(owner, [Desired(kinds.DEPLOYMENT, child)], owned=[])
    [(key, (_, _, remembered))] = list(recent._entries.items())
    assert key[-1] == object_key(child).split("/")[-1]
    assert "managedFields" not in remembered["metadata"]
    assert remembered["spec"] == {"replicas": 1, "paused": False}
    assert remembered["status"] == {"replicas": 0}
    assert recorded_hash(remembered) is not None
