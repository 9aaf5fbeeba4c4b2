"""Pure decision logic of the graph controllers: restart planning, readiness, status diffs,
and the child syncer's write/skip/prune choices against an in-memory fake (fakes only for pure logic)."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest
from dynamo_operator.controllers.apply import (
    ChildrenOwnedByOthers,
    ChildSyncer,
    ChildWriteError,
    Desired,
    DuplicateChildren,
    merge_patch,
)
from dynamo_operator.controllers.dynamocomponentdeployment import PullSecretNotifier
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.dynamo import conditions
from dynamo_operator.internal.dynamo.conditions import Condition
from dynamo_operator.internal.dynamo.hashing import stamp_hash
from dynamo_operator.internal.dynamo.restart import plan_restart
from dynamo_operator.internal.dynamo.status import deployment_readiness, graph_status

SEQ = {"id": "r1", "strategy": {"type": "Sequential", "order": ["b", "a"]}}
PAR = {"id": "r1", "strategy": {"type": "Parallel"}}


@pytest.mark.parametrize(
    ("restart", "live", "rolled", "values", "phase", "in_progress"),
    [
        pytest.param(
            SEQ, {"a": None, "b": None}, {}, {"b": "r1"}, "Restarting", ["b"], id="seq-stamps-first-in-order"
        ),
        pytest.param(
            SEQ,
            {"a": None, "b": "r1"},
            {"b": False},
            {"b": "r1"},
            "Restarting",
            ["b"],
            id="seq-waits-for-first",
        ),
        pytest.param(
            SEQ,
            {"a": None, "b": "r1"},
            {"b": True},
            {"a": "r1", "b": "r1"},
            "Restarting",
            ["a"],
            id="seq-moves-on-when-rolled",
        ),
        pytest.param(
            SEQ,
            {"a": "r1", "b": "r1"},
            {"a": True, "b": True},
            {"a": "r1", "b": "r1"},
            "Completed",
            None,
            id="seq-done",
        ),
        pytest.param(
            PAR,
            {"a": "r0", "b": "r0"},
            {"a": True, "b": True},
            {"a": "r1", "b": "r1"},
            "Restarting",
            ["a", "b"],
            id="par-stamps-all",
        ),
        pytest.param(
            PAR,
            {"a": "r1", "b": "r1"},
            {"a": True, "b": False},
            {"a": "r1", "b": "r1"},
            "Restarting",
            ["b"],
            id="par-reports-laggards",
        ),
        pytest.param(
            None, {"a": "r0", "b": None}, {}, {"a": "r0"}, None, None, id="no-restart-keeps-old-values"
        ),
    ],
)
def test_restart_plan_follows_the_cluster(  # noqa: PLR0917
    restart: dict[str, Any] | None,
    live: dict[str, str | None],
    rolled: dict[str, bool],
    values: dict[str, str],
    phase: str | None,
    in_progress: list[str] | None,
) -> None:
    """Sequential stamps one service at a time in `order`; Parallel stamps all; progress comes from DCDs."""
    plan = plan_restart(restart, ["a", "b"], live_values=live, rolled=rolled, previous=None)
    assert plan.values == values
    assert (plan.status or {}).get("phase") == phase
    assert (plan.status or {}).get("inProgress") == in_progress


def test_new_service_is_stamped_without_a_restart_step() -> None:
    """A DCD that does not exist yet simply carries the id (new pods need no restart)."""
    plan = plan_restart(SEQ, ["a", "b"], live_values={"b": "r1"}, rolled={"b": True}, previous=None)
    assert plan.values == {"a": "r1", "b": "r1"}


def _deployment(**status: Any) -> dict[str, Any]:
    conds = [{"type": "Available", "status": "True"}]
    return {
        "metadata": {"name": "d", "generation": status.pop("generation", 2)},
        "spec": {"replicas": status.pop("desired", 2)},
        "status": {"observedGeneration": 2, "conditions": conds, **status},
    }


@pytest.mark.parametrize(
    ("deployment", "ready", "message"),
    [
        pytest.param(
            _deployment(replicas=2, updatedReplicas=2, readyReplicas=2, availableReplicas=2),
            True,
            "2/2 ready",
            id="ready",
        ),
        pytest.param(
            _deployment(generation=3, replicas=2, updatedReplicas=2, readyReplicas=2, availableReplicas=2),
            False,
            "2/2 ready, rolling",
            id="spec-not-observed",
        ),
        pytest.param(
            _deployment(replicas=3, updatedReplicas=1, readyReplicas=3, availableReplicas=3),
            False,
            "rolling, 1/2 updated",
            id="old-pods-meet-count-but-rolling",
        ),
        pytest.param(
            _deployment(replicas=2, updatedReplicas=2, readyReplicas=1, availableReplicas=1),
            False,
            "1/2 ready",
            id="waiting-for-pods",
        ),
        pytest.param(_deployment(desired=0, replicas=0), True, "scaled to zero", id="scaled-to-zero"),
        pytest.param(
            _deployment(desired=0, replicas=1), False, "scaling to zero, 1 left", id="scaling-to-zero"
        ),
    ],
)
def test_deployment_readiness_is_truthful(deployment: dict[str, Any], ready: bool, message: str) -> None:
    """Ready only when the latest spec runs on every replica; the message says why not."""
    verdict = deployment_readiness(deployment)
    assert (verdict.ready, verdict.message) == (ready, message)


def _dcd(gen: int, observed: int, available: str, msg: str = "1/1 ready") -> dict[str, Any]:
    return {
        "metadata": {"name": "g-x", "generation": gen},
        "status": {
            "observedGeneration": observed,
            "conditions": [
                {"type": "Available", "status": available},
                {"type": "DynamoComponentReady", "status": available, "message": msg},
            ],
            "service": {
                "componentKind": "Deployment",
                "componentName": "g-x",
                "replicas": 1,
                "updatedReplicas": 1,
            },
        },
    }


def test_graph_status_names_what_is_not_ready() -> None:
    """The message lists each lagging service with its component's reason, sorted by service."""
    services = {"frontend": {"replicas": 1}, "decode": {"replicas": 2}, "planner": {}}
    dcds = {"frontend": _dcd(2, 1, "True"), "decode": _dcd(1, 1, "False", "1/2 ready"), "planner": None}
    verdict = graph_status(services, dcds)
    assert not verdict.ready
    assert verdict.message == "decode: 1/2 ready; frontend: rolling; planner: 0/1 ready"
    assert set(verdict.services) == {"frontend", "decode", "planner"}
    assert verdict.services["planner"]["componentKind"] == "Deployment"


def test_graph_status_ready_mentions_scaled_to_zero() -> None:
    verdict = graph_status({"a": {"replicas": 0}}, {"a": _dcd(1, 1, "True")})
    assert verdict.ready
    assert verdict.message == "All resources are ready; scaled to zero: a"


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, {}, id="equal"),
        pytest.param({"a": 1, "b": 2}, {"a": 1}, {"b": None}, id="removed-key-nulls"),
        pytest.param({"s": {"x": 1, "y": 2}}, {"s": {"x": 1}}, {"s": {"y": None}}, id="nested-map-removal"),
        pytest.param({"l": [1, 2]}, {"l": [1]}, {"l": [1]}, id="lists-replace"),
    ],
)
def test_merge_patch(old: dict[str, Any], new: dict[str, Any], patch: dict[str, Any]) -> None:
    assert merge_patch(old, new) == patch


def test_condition_keeps_transition_time_while_status_holds() -> None:
    """Re-setting an unchanged condition yields an identical list (hence no status write)."""
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    t1 = t0 + datetime.timedelta(hours=1)
    first = conditions.set_condition(
        [], Condition("Ready", "False", "r", "m"), observed_generation=1, now=lambda: t0
    )
    again = conditions.set_condition(
        first, Condition("Ready", "False", "r", "m2"), observed_generation=1, now=lambda: t1
    )
    flipped = conditions.set_condition(
        first, Condition("Ready", "True", "r", "m"), observed_generation=1, now=lambda: t1
    )
    assert again[0]["lastTransitionTime"] == first[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert flipped[0]["lastTransitionTime"] == "2026-01-01T01:00:00Z"


# --- ChildSyncer against in-memory fakes ----------------------------------------------------------


class FakeCache:
    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], dict[str, Any]] = {}

    def get(self, resource: Resource, key: str) -> dict[str, Any] | None:
        return self.objects.get((resource, key))

    def by_index(self, resource: Resource, index: str, value: str) -> list[dict[str, Any]]:
        assert index == "controller"
        return [
            o
            for (r, _), o in self.objects.items()
            if r == resource
            and any(ref.get("uid") == value for ref in o["metadata"].get("ownerReferences") or ())
        ]


class FakeClient:
    def __init__(self, cache: FakeCache) -> None:
        self.cache = cache
        self.calls: list[tuple[str, str]] = []
        self.server: dict[tuple[Resource, str], dict[str, Any]] = {}  # what a GET finds

    async def apply(self, resource: Resource, obj: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.calls.append(("apply", obj["metadata"]["name"]))
        return obj

    async def create(self, resource: Resource, obj: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("create", obj["metadata"]["name"]))
        if (resource, object_key(obj)) in self.cache.objects:
            raise errors.AlreadyExists(409, "AlreadyExists")
        return obj

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append(("get", name))
        obj = self.server.get((resource, f"{namespace}/{name}"))
        if obj is None:
            raise errors.NotFound(404, "NotFound")
        return obj

    async def delete(self, resource: Resource, name: str, **_: Any) -> None:
        self.calls.append(("delete", name))

    async def patch(self, resource: Resource, name: str, body: Any, **_: Any) -> dict[str, Any]:
        self.calls.append(("patch", name))
        return {}


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, obj: dict[str, Any], *, type: str, reason: str, message: str) -> None:
        self.events.append((type, reason))


OWNER = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
         "metadata": {"name": "g", "namespace": "ns", "uid": "u1"}}  # fmt: skip


def _cm(name: str, data: str, owner_uid: str | None = "u1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "x", "kind": "K", "name": "o", "uid": owner_uid, "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": data}}


async def test_syncer_writes_only_changes_and_prunes_only_its_own() -> None:
    """Unchanged hash → no request; changed → apply; controlled but undesired → delete; PVC-like
    create-only that exists → untouched; a `shared` child another owner controls → used as is."""
    from dynamo_operator.controllers.apply import prepare

    cache = FakeCache()
    client, recorder = FakeClient(cache), FakeRecorder()
    same = prepare(OWNER, _cm("same", "1"))
    cache.objects[(kinds.CONFIG_MAP, "ns/same")] = same
    cache.objects[(kinds.CONFIG_MAP, "ns/changed")] = prepare(OWNER, _cm("changed", "old"))
    cache.objects[(kinds.CONFIG_MAP, "ns/sibling")] = stamp_hash(_cm("sibling", "1", owner_uid="other"))
    cache.objects[(kinds.CONFIG_MAP, "ns/stale")] = prepare(OWNER, _cm("stale", "1"))
    cache.objects[(kinds.CONFIG_MAP, "ns/users")] = _cm("users", "1", owner_uid=None)
    syncer = ChildSyncer(client=client, cache=cache, recorder=recorder)
    report = await syncer.sync(
        OWNER,
        [
            Desired(kinds.CONFIG_MAP, _cm("same", "1", owner_uid=None)),
            Desired(kinds.CONFIG_MAP, _cm("changed", "new", owner_uid=None)),
            Desired(kinds.CONFIG_MAP, _cm("sibling", "1", owner_uid=None), shared=True),
            Desired(kinds.CONFIG_MAP, _cm("users", "2", owner_uid=None), create_only=True),
            Desired(kinds.CONFIG_MAP, _cm("fresh", "1", owner_uid=None)),
        ],
        owned=[kinds.CONFIG_MAP],
    )
    assert sorted(client.calls) == [("apply", "changed"), ("apply", "fresh"), ("delete", "stale")]
    assert report.get(kinds.CONFIG_MAP, "sibling") == cache.objects[(kinds.CONFIG_MAP, "ns/sibling")]
    assert [e for e in recorder.events if e[0] == "Warning"] == []


async def test_syncer_writes_nothing_when_another_owner_controls_a_child() -> None:
    """A desired child controlled by someone else: no write at all (not even the children that are
    free), and the error names the object and its controller."""
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/taken")] = stamp_hash(_cm("taken", "1", owner_uid="other"))
    syncer = ChildSyncer(client=client, cache=cache, recorder=FakeRecorder())
    with pytest.raises(ChildrenOwnedByOthers) as err:
        await syncer.sync(
            OWNER,
            [
                Desired(kinds.CONFIG_MAP, _cm("free", "1", owner_uid=None)),
                Desired(kinds.CONFIG_MAP, _cm("taken", "1", owner_uid=None)),
            ],
            owned=[kinds.CONFIG_MAP],
        )
    assert client.calls == []
    assert err.value.conflicts == ["ConfigMap taken is controlled by K o"]


async def test_syncer_adopts_a_child_nobody_controls() -> None:
    """An object of the desired name without a controller (made by hand) is taken over, as before."""
    cache = FakeCache()
    client = FakeClient(cache)
    cache.objects[(kinds.CONFIG_MAP, "ns/loose")] = _cm("loose", "0", owner_uid=None)
    syncer = ChildSyncer(client=client, cache=cache, recorder=FakeRecorder())
    await syncer.sync(OWNER, [Desired(kinds.CONFIG_MAP, _cm("loose", "1", owner_uid=None))], owned=[])
    assert client.calls == [("apply", "loose")]


async def test_syncer_refuses_a_desired_set_naming_one_object_twice() -> None:
    """Two versions of one object would overwrite each other on every sync (a hot loop): refused
    before any write, naming the object."""
    cache = FakeCache()
    client = FakeClient(cache)
    syncer = ChildSyncer(client=client, cache=cache, recorder=FakeRecorder())
    with pytest.raises(DuplicateChildren, match="configmaps/twice"):
        await syncer.sync(
            OWNER,
            [
                Desired(kinds.CONFIG_MAP, _cm("twice", "1", owner_uid=None)),
                Desired(kinds.CONFIG_MAP, _cm("once", "1", owner_uid=None)),
                Desired(kinds.CONFIG_MAP, _cm("twice", "2", owner_uid=None)),
            ],
            owned=[kinds.CONFIG_MAP],
        )
    assert client.calls == []


async def test_child_created_then_deleted_before_the_cache_saw_it_is_created_again() -> None:
    """Our create is remembered as in flight while the cache lags; if the child is deleted before a
    reconcile saw it, the next sync must not mistake the empty cache for that lag."""
    cache = FakeCache()
    client = FakeClient(cache)
    syncer = ChildSyncer(client=client, cache=cache, recorder=FakeRecorder())
    want = [Desired(kinds.CONFIG_MAP, _cm("child", "1", owner_uid=None))]
    await syncer.sync(OWNER, want, owned=[kinds.CONFIG_MAP])
    client.server[(kinds.CONFIG_MAP, "ns/child")] = _cm("child", "1")
    await syncer.sync(OWNER, want, owned=[kinds.CONFIG_MAP])  # cache still behind: no second write
    assert client.calls == [("apply", "child"), ("get", "child")]
    del client.server[(kinds.CONFIG_MAP, "ns/child")]  # deleted; the cache never showed it
    await syncer.sync(OWNER, want, owned=[kinds.CONFIG_MAP])
    assert client.calls[-2:] == [("get", "child"), ("apply", "child")]


async def test_role_bindings_are_written_after_every_other_child() -> None:
    """The API server checks a RoleBinding against its Role: the Role's write must have finished."""
    cache = FakeCache()
    client = FakeClient(cache)
    syncer = ChildSyncer(client=client, cache=cache, recorder=FakeRecorder())

    def rbac(kind: str, name: str) -> dict[str, Any]:
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
                "metadata": {"name": name, "namespace": "ns"}}  # fmt: skip

    await syncer.sync(
        OWNER,
        [
            Desired(kinds.ROLE_BINDING, rbac("RoleBinding", "binding")),
            Desired(kinds.ROLE, rbac("Role", "role")),
            Desired(
                kinds.SERVICE_ACCOUNT,
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "ns"}},
            ),
        ],
        owned=[kinds.ROLE_BINDING, kinds.ROLE, kinds.SERVICE_ACCOUNT],
    )
    assert client.calls[-1] == ("apply", "binding")
    assert sorted(client.calls[:-1]) == [("apply", "role"), ("apply", "sa")]


def test_pull_secret_notifier_reports_only_real_changes() -> None:
    """Only an event that changes a namespace's registry → secrets map enqueues its components."""
    import base64
    import json

    from dynamo_operator.internal.secrets.index import DockerSecretIndex

    changed: list[str] = []
    notifier = PullSecretNotifier(DockerSecretIndex(), on_change=changed.append)

    def secret(name: str, host: str) -> dict[str, Any]:
        payload = base64.b64encode(json.dumps({"auths": {host: {}}}).encode()).decode()
        return {"type": "kubernetes.io/dockerconfigjson", "metadata": {"name": name, "namespace": "ns"},
                "data": {".dockerconfigjson": payload}}  # fmt: skip

    notifier.on_add(secret("s1", "nvcr.io"))
    notifier.on_update(secret("s1", "nvcr.io"), secret("s1", "nvcr.io"))
    notifier.refresh([secret("s1", "nvcr.io")])
    notifier.on_delete(secret("s1", "nvcr.io"))
    assert changed == ["ns", "ns"]


def test_recent_writes_stand_in_only_while_the_cache_is_behind() -> None:
    """Our write stands in for the cache only while it still shows the version from before the write;
    once it moved on (or the entry expired), the cache is trusted again — so a later deletion of a
    created object is never mistaken for our create still being in flight."""
    from dynamo_operator.controllers.apply import RecentWrites

    now = [0.0]
    recent = RecentWrites(ttl=30.0, clock=lambda: now[0])
    key = ("apps", "deployments", "ns", "d")
    recent.remember(key, None, {"v": 1})
    assert recent.in_flight(key, None) == {"v": 1}  # created, watch event not in yet
    assert recent.in_flight(key, {"metadata": {"resourceVersion": "5"}}) is None  # cache caught up
    assert recent.in_flight(key, None) is None  # deleted later: trust the cache, recreate
    recent.remember(key, {"metadata": {"resourceVersion": "5"}}, {"v": 2})
    now[0] = 31.0
    assert recent.in_flight(key, {"metadata": {"resourceVersion": "5"}}) is None  # expired


async def test_graph_with_colliding_service_keys_is_reported_once_and_writes_nothing() -> None:
    """The backstop of the CRD rule (a graph stored before the rule existed): Ready=False with reason
    NameCollision naming both keys, one Warning Event, no child written, no retry; a second
    reconcile of the unchanged graph sends nothing at all."""
    from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
    from dynamo_operator.internal.controller.result import TerminalError
    from dynamo_operator.internal.dynamo.context import GenContext

    cache = FakeCache()
    client, recorder = FakeClient(cache), FakeRecorder()
    worker = {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "x:1"}}}
    cache.objects[(kinds.DGD, "ns/g")] = {
        **OWNER,
        "metadata": {**OWNER["metadata"], "generation": 1},
        "spec": {"backendFramework": "vllm", "services": {"Cache.A": worker, "Cache-A": worker}},
    }
    reconciler = DynamoGraphDeploymentReconciler(
        client=client, cache=cache, recorder=recorder, gen_context=lambda ns: GenContext(namespace=ns)
    )
    with pytest.raises(
        TerminalError, match=re.escape("'Cache-A' and 'Cache.A' would both be named 'g-cache-a'")
    ):
        await reconciler.reconcile("ns/g")
    assert client.calls == [("patch", "g")]  # the status, nothing else
    assert recorder.events == [("Warning", "NameCollision")]
    with pytest.raises(TerminalError):
        await reconciler.reconcile("ns/g")
    assert client.calls == [("patch", "g")]
    assert recorder.events == [("Warning", "NameCollision")]


@pytest.mark.parametrize(
    ("err", "reason", "outcome"),
    [
        pytest.param(
            ChildWriteError(kinds.CONFIG_MAP, "c", "apply", errors.Invalid(422, "Invalid")),
            "ApplyRejected",
            "terminal",
            id="refused-content",
        ),
        pytest.param(
            ChildWriteError(
                kinds.CONFIG_MAP,
                "c",
                "apply",
                errors.Forbidden(403, "Forbidden", 'admission webhook "w" denied the request: no'),
            ),
            "ApplyRejected",
            "terminal",
            id="refused-by-admission",
        ),
        pytest.param(
            ChildrenOwnedByOthers(["ConfigMap c is controlled by K o"]), "NameConflict", 60.0, id="conflict"
        ),
        pytest.param(DuplicateChildren(["configmaps/c"]), "DuplicateChildren", "terminal", id="duplicate"),
    ],
)
async def test_a_failed_sync_is_reported_once_with_its_reason(
    err: Exception, reason: str, outcome: Any
) -> None:
    """Each refusal becomes a reason for the owner's condition; only a conflict is looked at again
    (after a minute), the rest wait for a change of the owner."""
    from dynamo_operator.controllers.apply import report_sync_failure
    from dynamo_operator.internal.controller.result import TerminalError

    reported: list[tuple[str, str]] = []

    async def fail(r: str, message: str) -> None:
        reported.append((r, message))

    if outcome == "terminal":
        with pytest.raises(TerminalError):
            await report_sync_failure(err, fail)
    else:
        assert (await report_sync_failure(err, fail)).requeue_after == outcome
    assert [r for r, _ in reported] == [reason]


async def test_a_transient_write_error_is_left_to_the_queue_backoff() -> None:
    from dynamo_operator.controllers.apply import report_sync_failure

    reported: list[str] = []

    async def fail(r: str, message: str) -> None:
        reported.append(r)

    transient = ChildWriteError(kinds.CONFIG_MAP, "c", "apply", errors.ServerError(504, "Timeout"))
    with pytest.raises(ChildWriteError):
        await report_sync_failure(transient, fail)
    assert reported == []
