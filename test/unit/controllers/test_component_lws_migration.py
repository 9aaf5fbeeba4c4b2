"""The DCD reconciler taking a multinode component over from one LeaderWorkerSet per replica: the old
sets and PodGroups stay while `<dcd>-0` does not serve every group, and go in the sync that finds it
does. Against in-memory fakes (pure decision logic; the real LWS controller runs in
test/integration/controllers_multinode/test_multinode_lws_migration.py, without Volcano)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import pytest
from dynamo_operator.controllers.dynamocomponentdeployment import MIGRATION_RECHECK_SECONDS
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.component.lws_migration import LWS_GROUP_INDEX_LABEL
from unit.apply.fakes import FakeCache, FakeClient
from unit.controllers.reconcilers_testlib import component_reconciler

Obj = dict[str, Any]
NS, DCD, UID = "ns", "g-worker", "u-dcd"
KEY = f"{NS}/{DCD}"
REPLICAS, NODES = 3, 2
OWNED = (kinds.DEPLOYMENT, kinds.SERVICE, kinds.INGRESS, kinds.LWS, kinds.POD_GROUP)


def dcd() -> Obj:
    main = {"image": "registry.example/worker:1", "command": ["python3", "-m", "w"], "args": ["--model", "m"]}
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": DCD, "namespace": NS, "uid": UID, "generation": 1},
        "spec": {
            "componentType": "worker",
            "replicas": REPLICAS,
            "multinode": {"nodeCount": NODES},
            "extraPodSpec": {"mainContainer": main},
        },
        # An older operator's status: the component is not new, its status is written at once.
        "status": {"conditions": [{"type": "Available", "status": "True", "reason": "LeaderWorkerSetReady"}]},
    }


def owned_by_dcd(kind: str, api_version: str, name: str) -> Obj:
    ref = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoComponentDeployment", "name": DCD}
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"u-{kind}-{name}",
            "ownerReferences": [{**ref, "uid": UID, "controller": True}],
        },
        "spec": {"replicas": 1},
    }


def serving_pods(groups: int) -> list[Obj]:
    ready = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    return [
        {"metadata": {"labels": {LWS_GROUP_INDEX_LABEL: str(g)}}, "status": ready}
        for g in range(groups)
        for _ in range(NODES)
    ]


class Client(FakeClient):
    """Keeps what was applied, to seed the cache with."""

    def __init__(self, cache: FakeCache) -> None:
        super().__init__(cache)
        self.applied: dict[tuple[Resource, str], Obj] = {}

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = "", force: bool = False
    ) -> Obj:
        await super().apply(resource, obj, field_manager=field_manager, force=force)
        self.applied[(resource, object_key(obj))] = obj
        return obj


class SetPods:
    def __init__(self, pods: Sequence[Obj]) -> None:
        self.pods = list(pods)

    async def __call__(self, namespace: str, name: str) -> Sequence[Obj]:
        return self.pods


async def migrating(*, ready_groups: int, serving: int) -> tuple[Client, Result]:
    """A DCD whose `<dcd>-0` was just raised to REPLICAS groups by this operator (as applied, with a
    status of `ready_groups` updated, ready groups and `serving` groups of pods up), beside the
    older operator's `<dcd>-1`, `<dcd>-2` and a PodGroup per set; the client and result of
    reconciling it once more."""
    cache = FakeCache()
    cache.objects[(kinds.DCD, KEY)] = dcd()
    client = Client(cache)
    client.server[(kinds.DCD, KEY)] = dcd()
    ctx = GenContext(namespace=NS, capabilities=Capabilities(lws=True, volcano=True))
    reconciler = component_reconciler(
        client, cache, gen_context=lambda _: ctx, set_pods=SetPods(serving_pods(serving))
    )
    reconciler.owned = OWNED
    await reconciler.reconcile(KEY)
    for (resource, key), obj in client.applied.items():
        live = copy.deepcopy(obj)
        if resource == kinds.LWS:
            available = "True" if ready_groups == REPLICAS else "False"
            live["status"] = {
                "replicas": REPLICAS,
                "readyReplicas": ready_groups,
                "updatedReplicas": ready_groups,
                "conditions": [{"type": "Available", "status": available}],
            }
        cache.objects[(resource, key)] = live
        cache.current.add(resource)
    for i in (1, 2):
        cache.objects[(kinds.LWS, f"{NS}/{DCD}-{i}")] = owned_by_dcd(
            "LeaderWorkerSet", consts.LWS_API_VERSION, f"{DCD}-{i}"
        )
    for i in (0, 1, 2):
        group = owned_by_dcd("PodGroup", "scheduling.volcano.sh/v1beta1", f"{DCD}-{i}")
        cache.objects[(kinds.POD_GROUP, f"{NS}/{DCD}-{i}")] = group
    client.calls.clear()
    return client, await reconciler.reconcile(KEY)


@pytest.mark.parametrize(
    ("ready_groups", "serving"),
    [
        pytest.param(2, 2, id="lws-reports-a-group-not-ready"),
        pytest.param(3, 2, id="lws-reports-ready-but-a-worker-pod-is-not"),
    ],
)
async def test_the_old_sets_and_pod_groups_stay_while_the_one_set_does_not_serve_every_group(
    ready_groups: int, serving: int
) -> None:
    client, result = await migrating(ready_groups=ready_groups, serving=serving)
    assert [name for verb, name in client.calls if verb == "delete"] == []
    assert result == Result(requeue_after=MIGRATION_RECHECK_SECONDS)  # no Pod watch brings it back


async def test_the_old_sets_and_pod_groups_go_once_the_one_set_serves_every_group() -> None:
    client, result = await migrating(ready_groups=REPLICAS, serving=REPLICAS)
    deleted = [name for verb, name in client.calls if verb == "delete"]
    assert sorted(deleted) == sorted([f"{DCD}-1", f"{DCD}-2", f"{DCD}-0", f"{DCD}-1", f"{DCD}-2"])
    assert ("apply", f"{DCD}-0") not in client.calls  # the one set is as desired: not written again
    assert result == Result()
