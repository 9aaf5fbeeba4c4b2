"""Taking a multinode component over from the per-replica LeaderWorkerSets an older operator left
(`<dcd>-0` … `<dcd>-2`, one group each) to the one native-scaled set `<dcd>-0`, on the real LWS
controller (the cluster's `lws` add-on), without a moment of fewer ready groups than before.

The old shape is written as the operator before issue #39 item 4 wrote it (its field manager, its
per-replica names, replicas and `instance-id` labels, controlled by the DCD), while the DCD's spec is
one this operator refuses (a multinode main container without args): the session operator leaves
the component alone, as an operator not yet upgraded would. Fixing the spec is the upgrade: from
then on this operator owns the component, and a sampler counts the ready groups (every pod of the
group Running, Ready and not being deleted) until the migration is over.
"""

from __future__ import annotations

import asyncio
import copy
from collections import defaultdict
from typing import Any

import pytest
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.dynamo import Capabilities, GenContext, desired_component_objects
from dynamo_operator.internal.dynamo.common.hashing import pod_template_hash
from integration.controllers_multinode.multinode_testlib import (
    GROUP_INDEX_LABEL,
    LWS_NAME_LABEL,
    apply,
    condition,
    running_ready,
)
from testsupport.api import eventually
from testsupport.operator import RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.addons("lws")]

IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.6.1"
DCD = "mn"
REPLICAS, NODES = 3, 2
TIMEOUT = 180.0
SAMPLE_EVERY = 0.02  # seconds between two counts of the ready groups (each count is one pod list)
MAX_SAMPLES = 5000  # the sampler's bound in count (and so, with the interval, in time)
Obj = dict[str, Any]


def component(ns: str, *, runnable: bool) -> Obj:
    """A lone multinode component of REPLICAS groups of NODES pods. Not `runnable`: its main container
    has no args, which this operator refuses for multinode (and so writes nothing for it)."""
    main: Obj = {"image": IMAGE, "command": ["python3", "-m", "dynamo.worker"]}
    if runnable:
        main["args"] = ["--model", "m"]
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": DCD, "namespace": ns},
        "spec": {
            "componentType": "worker",
            "replicas": REPLICAS,
            "multinode": {"nodeCount": NODES},
            "extraPodSpec": {"mainContainer": main},
        },
    }


def per_replica_sets(live_dcd: Obj, ns: str) -> list[Obj]:
    """What the operator kept for the component before issue #39 item 4: one LeaderWorkerSet
    `<dcd>-<i>` of one group per replica, it and its pods labelled `instance-id: <i>`, controlled by
    the DCD. Derived from today's set for the runnable spec, so only the shape differs."""
    runnable = copy.deepcopy(live_dcd)
    runnable["spec"] = component(ns, runnable=True)["spec"]
    ctx = GenContext(namespace=ns, capabilities=Capabilities(lws=True))
    [one] = [o for o in desired_component_objects(runnable, ctx) if o["kind"] == "LeaderWorkerSet"]
    out = []
    for i in range(REPLICAS):
        lws = copy.deepcopy(one)
        meta = lws["metadata"]
        meta["name"] = f"{DCD}-{i}"
        meta.setdefault("labels", {})[consts.LABEL_INSTANCE_ID] = str(i)
        meta["annotations"].pop(consts.ANNOTATION_LAST_APPLIED_HASH, None)
        lwt = lws["spec"]["leaderWorkerTemplate"]
        for role in ("leaderTemplate", "workerTemplate"):
            lwt[role]["metadata"]["labels"][consts.LABEL_INSTANCE_ID] = str(i)
        meta["annotations"][consts.ANNOTATION_POD_TEMPLATE_HASH] = pod_template_hash(
            {"leader": lwt["leaderTemplate"], "worker": lwt["workerTemplate"]}
        )
        lws["spec"]["replicas"] = 1
        out.append(lws)
    return out


async def ready_groups(api: Client, ns: str) -> int:
    """Groups (of any LeaderWorkerSet in `ns`) whose NODES pods are all Running, Ready and not being
    deleted: what serves."""
    groups: dict[tuple[str, str], list[Obj]] = defaultdict(list)
    for pod in await api.list(kinds.POD, namespace=ns):
        labels = pod["metadata"].get("labels") or {}
        groups[(str(labels.get(LWS_NAME_LABEL)), str(labels.get(GROUP_INDEX_LABEL)))].append(pod)
    return sum(
        1
        for pods in groups.values()
        if len(pods) == NODES
        and all(running_ready(p) and not p["metadata"].get("deletionTimestamp") for p in pods)
    )


async def sets_in(api: Client, ns: str) -> list[Obj]:
    found = await api.list(kinds.LWS, namespace=ns)
    return sorted(found, key=lambda s: str(s["metadata"]["name"]))


def one_set_serving(sets: list[Obj]) -> bool:
    """Only `<dcd>-0` left, at REPLICAS groups, all updated, ready and Available."""
    if [s["metadata"]["name"] for s in sets] != [f"{DCD}-0"]:
        return False
    status = sets[0].get("status") or {}
    return (
        sets[0]["spec"]["replicas"] == REPLICAS
        and status.get("readyReplicas") == REPLICAS
        and status.get("updatedReplicas") == REPLICAS
        and condition(sets[0], "Available").get("status") == "True"
    )


async def test_per_replica_sets_move_to_one_set_without_fewer_ready_groups(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """Three per-replica sets serving three groups -> one set `<dcd>-0` (the same object, its replicas
    raised, its pods rolled off `instance-id`) serving three groups; the other two sets and their
    pods are gone, and no sample ever counts fewer than three ready groups."""
    assert operator.capabilities.lws
    await apply(api, component(ns, runnable=False))
    live = await api.get(kinds.DCD, DCD, namespace=ns)
    for lws in per_replica_sets(live, ns):
        await api.apply(kinds.LWS, lws, field_manager=consts.FIELD_MANAGER)
    await eventually(lambda: ready_groups(api, ns), until=lambda n: n == REPLICAS, timeout=TIMEOUT)
    first_uid = (await api.get(kinds.LWS, f"{DCD}-0", namespace=ns))["metadata"]["uid"]

    samples: list[int] = []
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set() and len(samples) < MAX_SAMPLES:
            samples.append(await ready_groups(api, ns))
            await asyncio.sleep(SAMPLE_EVERY)

    sampler = asyncio.create_task(sample())
    try:
        await apply(api, component(ns, runnable=True))  # the operator takes the component over
        await eventually(lambda: sets_in(api, ns), until=one_set_serving, timeout=TIMEOUT)
        # The old sets' pods are gone too (kcm's garbage collector), and the one set's serve.
        await eventually(
            lambda: api.list(kinds.POD, namespace=ns),
            until=lambda pods: (
                {(p["metadata"].get("labels") or {}).get(LWS_NAME_LABEL) for p in pods} == {f"{DCD}-0"}
            ),
            timeout=TIMEOUT,
        )
        await eventually(lambda: ready_groups(api, ns), until=lambda n: n == REPLICAS, timeout=TIMEOUT)
    finally:
        done.set()
        await sampler

    assert len(samples) < MAX_SAMPLES, "the migration outlasted the sampler's bound"
    assert samples and min(samples) >= REPLICAS, samples
    [one] = await sets_in(api, ns)
    assert one["metadata"]["uid"] == first_uid  # kept and scaled, not replaced
    assert consts.LABEL_INSTANCE_ID not in one["metadata"].get("labels", {})
    lwt = one["spec"]["leaderWorkerTemplate"]
    assert all(
        consts.LABEL_INSTANCE_ID not in lwt[r]["metadata"]["labels"]
        for r in ("leaderTemplate", "workerTemplate")
    )
    dcd = await eventually(
        lambda: api.get(kinds.DCD, DCD, namespace=ns),
        until=lambda d: condition(d, "Available").get("status") == "True",
        timeout=TIMEOUT,
    )
    assert condition(dcd, "Available")["reason"] == "LeaderWorkerSetReady"
