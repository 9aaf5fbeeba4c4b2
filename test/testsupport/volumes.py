"""PersistentVolumes pre-bound to a claim: the test clusters have no provisioner, so a claim a graph
mounts binds only to a volume made for it (hostPath under /tmp; kwok never mounts it)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import Resource

PERSISTENT_VOLUME = Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False)


async def bind_volume(
    api: Client,
    namespace: str,
    claim: str,
    *,
    storage: str = "1Gi",
    access_modes: Sequence[str] = ("ReadWriteOnce",),
    storage_class: str = "",
    field_manager: str,
) -> str:
    """Apply a PersistentVolume reserved for claim `namespace/claim`; returns its name."""
    name = f"{namespace}-{claim}"[:63]
    await api.apply(
        PERSISTENT_VOLUME,
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": storage},
                "accessModes": list(access_modes),
                "storageClassName": storage_class,
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": f"/tmp/{name}"},
                "claimRef": {"namespace": namespace, "name": claim},
            },
        },
        field_manager=field_manager,
    )
    return name


async def delete_volumes(api: Client, names: Sequence[str]) -> None:
    for name in names:
        with contextlib.suppress(NotFound):
            await api.delete(PERSISTENT_VOLUME, name)
