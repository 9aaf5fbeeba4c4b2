"""Where the record lives: a Lease object, read and written with optimistic concurrency."""

from __future__ import annotations

from typing import Any, Protocol

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import LEASE
from dynamo_operator.internal.leaderelection.record import LeaderElectionRecord


class LeaseLock(Protocol):
    """Get / create / conditional update of one record. Updates carry the resourceVersion read, so a
    concurrent writer makes ours fail with Conflict instead of silently overwriting it."""

    async def get(self) -> tuple[LeaderElectionRecord, str] | None: ...  # (record, resourceVersion)
    async def create(self, record: LeaderElectionRecord) -> str: ...  # raises AlreadyExists
    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str: ...  # raises Conflict
    def describe(self) -> str: ...


class KubeLeaseLock:
    """The record as a coordination.k8s.io/v1 Lease `namespace/name`."""

    def __init__(self, client: Client, *, namespace: str, name: str) -> None:
        self._client = client
        self._namespace = namespace
        self._name = name

    async def get(self) -> tuple[LeaderElectionRecord, str] | None:
        try:
            lease = await self._client.get(LEASE, self._name, namespace=self._namespace)
        except NotFound:
            return None
        return LeaderElectionRecord.from_lease(lease), lease["metadata"]["resourceVersion"]

    async def create(self, record: LeaderElectionRecord) -> str:
        lease = await self._client.create(LEASE, self._lease(record))
        return str(lease["metadata"]["resourceVersion"])

    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str:
        body = self._lease(record)
        body["metadata"]["resourceVersion"] = resource_version
        lease = await self._client.replace(LEASE, body)
        return str(lease["metadata"]["resourceVersion"])

    def describe(self) -> str:
        return f"{self._namespace}/{self._name}"

    def _lease(self, record: LeaderElectionRecord) -> dict[str, Any]:
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self._name, "namespace": self._namespace},
            "spec": record.to_spec(),
        }
