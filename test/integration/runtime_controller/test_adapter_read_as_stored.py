"""The scaling adapter is read as stored, in v1beta1 (`kinds.DGDSA`, internal/stored_version.py).

On this release's CRDs no codec sits between the operator's code and the wire. On a CRD an older
release installed, which stores v1alpha1 until its migration, the operator's client speaks v1alpha1 on
the wire and hands its code v1beta1, so none of its requests needs the conversion webhook either.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import Conflict, ServerError
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator
from dynamo_operator.internal.stored_version import older, storage_codecs
from localcluster import LocalCluster
from testsupport.api import eventually, requests_of
from testsupport.cluster import Cluster
from testsupport.etcd import set_storage_version, stored_objects
from testsupport.operator import TEST_FIELD_MANAGER

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]

ADAPTER_CRD = f"{kinds.DGDSA.plural}.{kinds.DGDSA.group}"


def adapter(ns: str) -> dict[str, object]:
    return {
        "apiVersion": V1BETA1,
        "kind": kinds.DGDSA.kind,
        "metadata": {"name": "g-worker", "namespace": ns},
        "spec": {"replicas": 2, "dgdRef": {"name": "g", "componentName": "Worker"}},
    }


async def created_or_none(client: Client, obj: dict[str, object]) -> dict[str, object] | None:
    try:
        return await client.create(kinds.DGDSA, obj)
    except ServerError:
        return None


async def read_and_replaced_or_none(client: Client, ns: str) -> dict[str, object] | None:
    """Read the adapter and write it back; None when the write lost a race (409). The session's
    operator, if an earlier test started it, reconciles the adapter and may write its status between
    the read and the write."""
    read = await client.get(kinds.DGDSA, "g-worker", namespace=ns)
    try:
        await client.replace(kinds.DGDSA, read)
    except Conflict:
        return None
    return read


@pytest_asyncio.fixture(loop_scope="session")
async def adapters_stored_as_v1alpha1(api: Client, ns: str) -> AsyncIterator[None]:
    """The adapter CRD as an older release left it (storing v1alpha1) for the test, then as installed:
    storing v1beta1 alone, as later tests of the session expect the operator's CRDs. The test's
    adapters are deleted in the version they are stored in first, so that neither the deletion nor
    the migration that trims `storedVersions` needs a conversion webhook."""
    await set_storage_version(api, ADAPTER_CRD, "v1alpha1", field_manager=TEST_FIELD_MANAGER)
    try:
        yield
    finally:
        as_stored = older(kinds.DGDSA)
        for obj in await api.list(as_stored, namespace=ns):
            await api.delete(as_stored, obj["metadata"]["name"], namespace=ns)
        await set_storage_version(api, ADAPTER_CRD, "v1beta1", field_manager=TEST_FIELD_MANAGER)
        reports = await CrdMigrator(api, (ADAPTER_CRD,)).run()
        assert all(r.done and not r.failed for r in reports.values()), reports


@pytest.mark.usefixtures("adapters_stored_as_v1alpha1")
async def test_an_older_releases_adapter_crd_is_spoken_in_v1alpha1_and_read_as_v1beta1(
    cluster: Cluster, local_cluster: LocalCluster, ns: str
) -> None:
    # The codecs the operator picks when no CRD stores v1beta1 (operator/storage_version.py).
    client = await Client.from_kubeconfig(cluster.kubeconfig, codecs=storage_codecs(frozenset()))
    try:
        # The API server switches a CRD's storage a moment after the CRD says so; until then a
        # v1alpha1 create would still be stored as v1beta1, through a webhook this session lacks.
        created = await eventually(lambda: created_or_none(client, adapter(ns)), timeout=60)
        with requests_of(client) as paths:
            read = await eventually(lambda: read_and_replaced_or_none(client, ns), timeout=30)
    finally:
        await client.close()
    for obj in (created, read):
        assert obj["apiVersion"] == V1BETA1
        assert obj["spec"] == {"replicas": 2, "dgdRef": {"name": "g", "componentName": "Worker"}}
    assert paths and all(p.startswith("/apis/nvidia.com/v1alpha1/") for p in paths), paths
    group, plural = kinds.DGDSA.group, kinds.DGDSA.plural
    [in_etcd] = await asyncio.to_thread(stored_objects, local_cluster, group, plural, ns)
    assert in_etcd["apiVersion"] == V1ALPHA1
    assert in_etcd["spec"]["dgdRef"] == {"name": "g", "serviceName": "Worker"}


async def test_after_the_flip_the_adapter_crd_stores_v1beta1_alone(api: Client) -> None:
    """The fixture above leaves the session's CRD as installed (test_storage_migration counts on it)."""
    crd = await api.get(CUSTOM_RESOURCE_DEFINITION, ADAPTER_CRD)
    assert crd["status"]["storedVersions"] == ["v1beta1"]


async def test_on_this_releases_crds_the_adapter_needs_no_codec(api: Client, ns: str) -> None:
    """Written and read in v1beta1 by a client without codecs, as the operator's is for this kind."""
    assert kinds.DGDSA not in storage_codecs(frozenset({kinds.DGDSA.plural}))
    created = await api.create(kinds.DGDSA, adapter(ns))
    assert created["spec"]["dgdRef"] == {"name": "g", "componentName": "Worker"}
