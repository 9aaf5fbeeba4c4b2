"""An upgrade from the previous release, whose CRDs stored nvidia.com/v1alpha1, to this one (v1beta1).

The session's CRDs are put back to the previous release's storage version, a graph is deployed and
becomes Ready (its graph and components stored as v1alpha1, read from etcd), then this release's CRDs
are applied again and the operator's migrator runs (operator/storage_migration.py names its CRDs).
The graph's worker is written the way only v1alpha1 can write it (the same env var and env sources
in two places, a main container probe and resources, a zero shared memory size).

Afterwards every object is stored as v1beta1, `storedVersions` names v1beta1 alone, and the graph is
untouched: no Deployment was recreated and no pod template changed, while the session operator, which
speaks v1beta1, kept reconciling the whole time.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from dynamo_operator import storage_migration
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator
from localcluster import LocalCluster
from testsupport.api import eventually
from testsupport.components import deployment_of
from testsupport.etcd import set_storage_version, stored_objects
from testsupport.graphs import two_service_graph
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, wait_quiet

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

CRD_DIR = Path(__file__).resolve().parents[3] / "config" / "crd" / "bases"
PLURALS = {crd.split(".")[0] for crd in storage_migration.MIGRATED_CRDS}


def current_crds() -> dict[str, dict[str, Any]]:
    docs = (yaml.safe_load(p.read_text()) for p in sorted(CRD_DIR.glob("*.yaml")))
    return {
        d["metadata"]["name"]: d for d in docs if d["metadata"]["name"] in storage_migration.MIGRATED_CRDS
    }


async def stored_as(local: LocalCluster, ns: str) -> Counter[str]:
    """`plural@apiVersion` → how many of the namespace's Dynamo objects etcd holds so."""
    out: Counter[str] = Counter()
    for plural in sorted(PLURALS):
        for obj in await asyncio.to_thread(stored_objects, local, "nvidia.com", plural, ns):
            out[f"{plural}@{obj['apiVersion']}"] += 1
    return out


@pytest_asyncio.fixture(loop_scope="session")
async def previous_release_storage(api: Client) -> AsyncIterator[None]:
    """The session's CRDs storing v1alpha1 for the test; this release's storage version afterwards."""
    for name in storage_migration.MIGRATED_CRDS:
        await set_storage_version(api, name, "v1alpha1", field_manager=TEST_FIELD_MANAGER)
    try:
        yield
    finally:
        for name, doc in current_crds().items():
            stored = next(v["name"] for v in doc["spec"]["versions"] if v["storage"])
            await set_storage_version(api, name, stored, field_manager=TEST_FIELD_MANAGER)


async def graph_ready(api: Client, ns: str) -> bool:
    dgd = await api.get(kinds.DGD, "g", namespace=ns)
    status = dgd.get("status") or {}
    return status.get("state") == "successful" and status.get("observedGeneration") == dgd["metadata"].get(
        "generation"
    )


async def test_a_graph_of_the_previous_release_is_migrated_to_v1beta1_storage_untouched(
    api: Client,
    operator: RunningOperator,
    local_cluster: LocalCluster,
    ns: str,
    previous_release_storage: None,
) -> None:
    graph = two_service_graph("g", ns)
    # The worker says things v1alpha1 can say in two places, which its pod template in v1beta1
    # cannot tell apart (pod/user_pod.py `layered_apart`), and a zero shared memory size.
    worker = graph["spec"]["services"]["Worker"]
    worker["envs"] = [{"name": "A", "value": "flat"}]
    worker["envFromSecret"] = "flat-secret"
    worker["sharedMemory"] = {"size": "0"}
    worker["extraPodSpec"]["mainContainer"] |= {
        "env": [{"name": "A", "value": "main"}],
        "envFrom": [{"secretRef": {"name": "main-secret"}}],
        "livenessProbe": {"periodSeconds": 30},
        "resources": {"limits": {"cpu": "1"}},
    }
    # The API server switches its storage version once its own watch of the CRD delivered the change:
    # until a new object is stored as v1alpha1, start again.
    for _ in range(50):
        await api.apply(kinds.DGD, graph, field_manager=TEST_FIELD_MANAGER)
        if (await stored_as(local_cluster, ns))["dynamographdeployments@nvidia.com/v1alpha1"] == 1:
            break
        await api.delete(kinds.DGD, "g", namespace=ns)
        await eventually(lambda: stored_as(local_cluster, ns), until=lambda c: not c, timeout=30)
    await eventually(lambda: graph_ready(api, ns), timeout=120, interval=0.25)
    before_storage = await stored_as(local_cluster, ns)
    assert before_storage["dynamographdeployments@nvidia.com/v1alpha1"] == 1
    assert before_storage["dynamocomponentdeployments@nvidia.com/v1alpha1"] == 2
    deployments = {svc: await deployment_of(api, ns, "g", svc) for svc in sorted(graph["spec"]["services"])}

    for name, doc in current_crds().items():  # this release's CRDs again
        stored = next(v["name"] for v in doc["spec"]["versions"] if v["storage"])
        await set_storage_version(api, name, stored, field_manager=TEST_FIELD_MANAGER)
    reports = await CrdMigrator(api, storage_migration.MIGRATED_CRDS).run()

    assert all(r.done and not r.failed for r in reports.values()), reports
    assert await stored_as(local_cluster, ns) == Counter(
        {
            "dynamographdeployments@nvidia.com/v1beta1": 1,
            "dynamocomponentdeployments@nvidia.com/v1beta1": 2,
        }
    )
    for name, doc in current_crds().items():
        crd = await api.get(CUSTOM_RESOURCE_DEFINITION, name)
        stored = next(v["name"] for v in doc["spec"]["versions"] if v["storage"])
        assert crd["status"]["storedVersions"] == [stored], name
    await wait_quiet(settle=3.0)  # the session operator saw every rewritten object and wrote nothing more
    assert await graph_ready(api, ns)
    for svc, old in deployments.items():
        new = await deployment_of(api, ns, "g", svc)
        assert old is not None and new is not None, svc
        assert new["metadata"]["uid"] == old["metadata"]["uid"], f"{svc}: Deployment recreated"
        assert new["metadata"]["generation"] == old["metadata"]["generation"], f"{svc}: spec changed"
        assert new["spec"]["template"] == old["spec"]["template"], f"{svc}: pod template changed"
    pod = (await deployment_of(api, ns, "g", "Worker"))["spec"]["template"]["spec"]
    main = pod["containers"][0]
    assert {"name": "A", "value": "flat"} in main["env"]  # v1alpha1's layering: the flat envs win
    assert [s["secretRef"]["name"] for s in main["envFrom"]] == ["main-secret", "flat-secret"]
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "0"}} in pod["volumes"]
