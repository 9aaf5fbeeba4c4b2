"""The MPI SSH Secret reconciler in a namespace being deleted: the API server refuses the Secret's
creation for good, so the graph's reconcile ends without an error, a Warning or a retry."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeployment.mpi_ssh_secret import MpiSshSecretReconciler
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.dynamo.graph.mpisecret import PLACEHOLDER_KEY_PAIR

Obj = dict[str, Any]
GRAPH: Obj = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {"name": "g", "namespace": "ns", "uid": "u"},
    "spec": {"services": {"Worker": {"componentType": "worker", "multinode": {"nodeCount": 2}}}},
}


class Refusing:
    """The API: no Secret exists, and every create is refused with `error`."""

    def __init__(self, error: errors.ApiError) -> None:
        self.error, self.creates = error, 0

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        raise errors.NotFound(404, "NotFound")

    async def create(self, resource: Resource, obj: Obj) -> Obj:
        self.creates += 1
        raise self.error


class Graphs:
    def get(self, resource: Resource, key: str) -> Obj | None:
        return GRAPH if resource == kinds.DGD and key == "ns/g" else None

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        return [GRAPH]


class NoSecrets:
    def get(self, key: str) -> Obj | None:
        return None


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        self.events.append((type, reason))


def reconciler(client: Refusing, recorder: Recorder) -> MpiSshSecretReconciler:
    return MpiSshSecretReconciler(
        client=client,
        cache=Graphs(),
        secrets=NoSecrets(),
        recorder=recorder,
        secret_name="mpi-run-ssh-secret",
        keys=lambda: PLACEHOLDER_KEY_PAIR,
    )


async def test_a_dying_namespace_ends_the_reconcile_quietly() -> None:
    refusal = errors.Forbidden(
        403,
        "Forbidden",
        "unable to create new content in namespace ns because it is being terminated",
        {"causes": [{"reason": "NamespaceTerminating"}]},
    )
    client, recorder = Refusing(refusal), Recorder()
    result = await reconciler(client, recorder).reconcile("ns/g")
    assert result.requeue_after is None
    assert client.creates == 1 and recorder.events == []


async def test_other_refusals_are_warned_of_and_retried() -> None:
    client, recorder = Refusing(errors.Forbidden(403, "Forbidden", "cannot create secrets", {})), Recorder()
    with pytest.raises(errors.Forbidden):
        await reconciler(client, recorder).reconcile("ns/g")
    assert recorder.events == [("Warning", "MpiSshSecretFailed")]
