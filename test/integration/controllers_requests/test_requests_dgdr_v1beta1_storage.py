"""DynamoGraphDeploymentRequests are stored as nvidia.com/v1beta1 (read from etcd, not as served), and
the lifecycle state their controller needs lives in v1beta1 fields, so status writes lose none of it:
the profiling Job's name (status.profilingJobName) and the backend stay through every step. A request
stored as v1alpha1 by an older release is rewritten as v1beta1 by the storage migrator and its
profiling goes on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator
from integration.controllers_requests.dgdr_testlib import finish_pod, request, wait_state, write_output
from integration.controllers_requests.requests_testlib import apply
from localcluster import LocalCluster
from testsupport.api import as_stored, eventually
from testsupport.cluster import Kubectl
from testsupport.etcd import set_storage_version, stored_objects
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]

PLURAL = kinds.DGDR.plural
CRD = f"{PLURAL}.{kinds.DGDR.group}"


async def in_etcd(local: LocalCluster, ns: str, name: str) -> dict[str, Any] | None:
    """The request as etcd holds it (the stored version, not a served one)."""
    for obj in await asyncio.to_thread(stored_objects, local, kinds.DGDR.group, PLURAL, ns):
        if obj["metadata"]["name"] == name:
            return obj
    return None


async def stored_phase(local: LocalCluster, ns: str, name: str, phase: str) -> dict[str, Any]:
    return await eventually(
        lambda: in_etcd(local, ns, name),
        until=lambda o: o is not None and (o.get("status") or {}).get("phase") == phase,
        timeout=120,
        interval=0.25,
    )


async def test_a_request_is_stored_as_v1beta1_and_keeps_its_job_name_and_backend_through_profiling(
    api: Client, operator: RunningOperator, local_cluster: LocalCluster, ns: str, kubectl: Kubectl
) -> None:
    await apply(api, request("req", ns))
    profiling = await stored_phase(local_cluster, ns, "req", "Profiling")
    assert profiling["apiVersion"] == "nvidia.com/v1beta1"
    assert profiling["status"]["profilingJobName"] == "profile-req"
    assert profiling["spec"]["backend"] == "vllm"
    # The v1alpha1 view (served through the webhook) shows the state and backend it always had.
    alpha = await wait_state(api, ns, "req", "Profiling")
    assert alpha["status"]["backend"] == "vllm"

    await write_output(api, "req", ns, real="gen-real", mocker="gen-mocker")
    await finish_pod(api, kubectl, ns, "profile-req", phase="Succeeded")

    ready = await stored_phase(local_cluster, ns, "req", "Ready")
    assert ready["apiVersion"] == "nvidia.com/v1beta1"
    assert ready["status"]["profilingJobName"] == "profile-req"  # kept by the later status writes
    assert ready["status"]["profilingResults"]["selectedConfig"]["metadata"]["name"] == "gen-real"
    # No status kept aside for v1alpha1: a status write could not have changed it anyway.
    assert "nvidia.com/dgdr-status" not in (ready["metadata"].get("annotations") or {})
    alpha = await wait_state(api, ns, "req", "Ready")
    assert alpha["status"]["backend"] == "vllm"
    assert alpha["status"]["generatedDeployment"]["metadata"]["name"] == "gen-real"


@pytest_asyncio.fixture(loop_scope="session")
async def previous_release_storage(api: Client) -> Any:
    """The requests' CRD storing v1alpha1 (the previous release's); v1beta1 again afterwards."""
    await set_storage_version(api, CRD, "v1alpha1", field_manager=TEST_FIELD_MANAGER)
    try:
        yield
    finally:
        await set_storage_version(api, CRD, "v1beta1", field_manager=TEST_FIELD_MANAGER)


async def test_a_request_stored_as_v1alpha1_is_migrated_to_v1beta1_and_finishes_profiling(
    api: Client,
    operator: RunningOperator,
    local_cluster: LocalCluster,
    ns: str,
    kubectl: Kubectl,
    *,
    previous_release_storage: None,
) -> None:
    # The API server switches its storage version once its own watch of the CRD delivered the change:
    # until a new object is stored as v1alpha1, start again (each try under its own name).
    name = ""
    for attempt in range(50):
        name = f"old{attempt}"
        await apply(api, request(name, ns))
        obj = await eventually(lambda: in_etcd(local_cluster, ns, name), timeout=30)  # noqa: B023
        if obj is not None and obj["apiVersion"] == "nvidia.com/v1alpha1":
            break
        await api.delete(kinds.DGDR, name, namespace=ns)
    old = await wait_state(api, ns, name, "Profiling")
    stored_old = await in_etcd(local_cluster, ns, name)
    assert stored_old is not None and stored_old["apiVersion"] == "nvidia.com/v1alpha1"
    assert stored_old["status"]["state"] == "Profiling"

    await set_storage_version(api, CRD, "v1beta1", field_manager=TEST_FIELD_MANAGER)
    reports = await CrdMigrator(api, (CRD,)).run()
    assert all(r.done and not r.failed for r in reports.values()), reports

    migrated = await in_etcd(local_cluster, ns, name)
    assert migrated is not None and migrated["apiVersion"] == "nvidia.com/v1beta1"
    assert migrated["status"]["phase"] == "Profiling"
    assert migrated["metadata"]["uid"] == old["metadata"]["uid"]
    crd = await api.get(CUSTOM_RESOURCE_DEFINITION, CRD)
    assert crd["status"]["storedVersions"] == ["v1beta1"]

    await write_output(api, name, ns, real="gen-real", mocker="gen-mocker")
    await finish_pod(api, kubectl, ns, f"profile-{name}", phase="Succeeded")
    ready = await stored_phase(local_cluster, ns, name, "Ready")
    assert ready["status"]["profilingResults"]["selectedConfig"]["metadata"]["name"] == "gen-real"
    alpha = await wait_state(api, ns, name, "Ready")
    assert alpha["status"]["backend"] == "vllm"
    beta = await as_stored(api, kinds.DGDR, name, ns)
    assert beta["status"]["phase"] == "Ready"


async def test_migrating_a_request_adds_none_of_the_v1beta1_defaults_its_author_left_out(
    api: Client,
    operator: RunningOperator,
    local_cluster: LocalCluster,
    ns: str,
    *,
    previous_release_storage: None,
) -> None:
    """A v1alpha1 request without `osl` or a model-cache mount path: v1beta1's schema defaults both.
    The migrator's rewrite must not write them in: the request's generation stays, and its v1alpha1
    view shows the spec its author wrote."""
    spec = {
        "profilingConfig": {
            "profilerImage": "registry.example/ai-dynamo/profiler:1",
            "config": {"sla": {"isl": 3000, "ttft": 200, "itl": 20}},
        },
    }
    name = ""
    for attempt in range(50):
        name = f"partial{attempt}"
        await apply(api, request(name, ns, **spec))
        obj = await eventually(lambda: in_etcd(local_cluster, ns, name), timeout=30)  # noqa: B023
        if obj is not None and obj["apiVersion"] == "nvidia.com/v1alpha1":
            break
        await api.delete(kinds.DGDR, name, namespace=ns)
    before = await wait_state(api, ns, name, "Profiling")

    await set_storage_version(api, CRD, "v1beta1", field_manager=TEST_FIELD_MANAGER)
    reports = await CrdMigrator(api, (CRD,)).run()
    assert all(r.done and not r.failed for r in reports.values()), reports

    migrated = await in_etcd(local_cluster, ns, name)
    assert migrated is not None and migrated["apiVersion"] == "nvidia.com/v1beta1"
    after = await api.get(kinds.DGDR, name, namespace=ns)
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    assert after["spec"] == before["spec"]
    assert "osl" not in after["spec"]["profilingConfig"]["config"]["sla"]
