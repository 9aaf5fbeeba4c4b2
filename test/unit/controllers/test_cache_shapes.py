"""The operator's cache shapes keep what its readers read (issue #13: memory follows what controllers
read, not what they wrote); its memory of recent writes is specified in test/unit/apply."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from dynamo_operator.cache_shapes import CHILD_SHAPES
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.dynamo.common.hashing import recorded_hash, stamp_hash
from dynamo_operator.internal.dynamo.status.readiness import deployment_readiness, lws_readiness

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
    assert lws_readiness(CHILD_SHAPES[kinds.LWS](lws)) == lws_readiness(lws)


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


def test_the_config_map_cache_keeps_no_data_of_any_config_map() -> None:
    """Every ConfigMap of the cluster passes through this informer, other tenants' and the profiler's
    output included; the reconcilers read the data they need live, so the cache holds none."""
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns", "annotations": {"a": "b"}},
        "data": {"secret-ish": "value"},
        "binaryData": {"blob": "AAAA"},
    }
    shaped = CHILD_SHAPES[kinds.CONFIG_MAP](cm)
    assert "data" not in shaped and "binaryData" not in shaped
    assert shaped["metadata"]["annotations"] == {"a": "b"}
