"""The DGDR reconciler performs what `advance` decides: a failed attempt records the transition's
Event and ends as the transition says; a Job name held by an earlier request is a requeue, not an
error. A fake client and cache: these are the reconciler's own decisions, not the API server's."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.controllers.dynamographdeploymentrequest import DynamoGraphDeploymentRequestReconciler
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import JOB, Resource
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.dynamo.dgdr.machine import JOB_RELEASE_RECHECK_SECONDS

Obj = dict[str, Any]
UID = "uid-of-this-request"


class Cache:
    def __init__(self, *objects: tuple[Resource, Obj]) -> None:
        self.objects = {(r, f"{o['metadata']['namespace']}/{o['metadata']['name']}"): o for r, o in objects}

    def get(self, resource: Resource, key: str) -> Obj | None:
        return self.objects.get((resource, key))

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        return []


class Client:
    """Answers a GET from `server`, refuses a create of `refuse` with `error`; records the writes."""

    def __init__(self, server: dict[tuple[Resource, str], Obj], refuse: Resource, error: Exception) -> None:
        self.server, self.refuse, self.error = server, refuse, error
        self.writes: list[tuple[str, str]] = []

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        obj = self.server.get((resource, f"{namespace}/{name}"))
        if obj is None:
            raise errors.NotFound(404, "NotFound")
        return obj

    async def list(self, resource: Resource, **_: Any) -> list[Obj]:
        return []

    async def create(self, resource: Resource, obj: Obj) -> Obj:
        self.writes.append(("create", resource.kind))
        if resource == self.refuse:
            raise self.error
        return obj

    async def patch(self, resource: Resource, name: str, body: Any, **_: Any) -> Obj:
        self.writes.append(("patch", resource.kind))
        return {}

    async def delete(self, resource: Resource, name: str, **_: Any) -> None:
        self.writes.append(("delete", resource.kind))

    async def apply(self, resource: Resource, obj: Obj, **_: Any) -> Obj:
        raise AssertionError("the DGDR reconciler does not apply")


class Events:
    def __init__(self) -> None:
        self.recorded: list[tuple[str, str]] = []

    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        self.recorded.append((type, reason))


def _request(state: str, status: Obj | None = None) -> Obj:
    """The request as the cache holds it: stored, in v1beta1 (written here in v1alpha1 for brevity)."""
    return convert(_alpha_request(state, status), V1BETA1)


def _alpha_request(state: str, status: Obj | None = None) -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {
            "name": "r",
            "namespace": "ns",
            "uid": UID,
            "generation": 1,
            "resourceVersion": "7",
        },
        "spec": {
            "model": "m",
            "backend": "vllm",
            "autoApply": True,
            "profilingConfig": {"profilerImage": "img", "config": {}},
        },
        "status": {"state": state, "observedGeneration": 1, **(status or {})},
    }


def _reconciler(request: Obj, *cached: tuple[Resource, Obj], refuse: Resource, error: Exception) -> Any:
    client = Client({(kinds.DGDR, "ns/r"): request}, refuse, error)
    events = Events()
    reconciler = DynamoGraphDeploymentRequestReconciler(
        client=client,  # type: ignore[arg-type]
        cache=Cache((kinds.DGDR, request), *cached),
        recorder=events,
        pods=None,  # type: ignore[arg-type]
    )
    return reconciler, client, events


GENERATED = {"metadata": {"name": "g"}, "spec": {"services": {}}}


@pytest.mark.parametrize(
    ("error", "raised"),
    [
        pytest.param(
            errors.Invalid(422, "Invalid", "bad spec"), TerminalError, id="refused-is-never-retried"
        ),
        pytest.param(
            errors.ServerError(500, "InternalError", "etcd"),
            errors.ServerError,
            id="transient-is-the-api-error",
        ),
    ],
)
async def test_a_refused_deployment_create_records_one_warning_and_writes_no_status(
    error: Exception, raised: type[Exception]
) -> None:
    request = _request("Deploying", {"generatedDeployment": GENERATED})
    reconciler, client, events = _reconciler(request, refuse=kinds.DGD, error=error)
    with pytest.raises(raised):
        await reconciler.reconcile("ns/r")
    assert events.recorded == [("Warning", "DeploymentCreationFailed")]
    assert client.writes == [("create", "DynamoGraphDeployment")]  # no status patch


async def test_a_job_name_held_by_an_earlier_request_is_requeued_not_an_error() -> None:
    earlier = {
        "metadata": {
            "name": "profile-r",
            "namespace": "ns",
            "ownerReferences": [
                {"kind": "DynamoGraphDeploymentRequest", "uid": "earlier", "controller": True}
            ],
        }
    }
    request = _request("Pending")
    reconciler, client, events = _reconciler(request, (JOB, earlier), refuse=JOB, error=AssertionError())
    assert await reconciler.reconcile("ns/r") == Result(requeue_after=JOB_RELEASE_RECHECK_SECONDS)
    assert events.recorded == []
    assert ("create", "Job") not in client.writes
