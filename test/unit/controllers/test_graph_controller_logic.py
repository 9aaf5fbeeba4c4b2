"""Pure decision logic of the graph controllers: restart planning, readiness, status, and the graph
reconciler against in-memory fakes (fakes only for pure logic; the child syncer's own choices are
specified in test/unit/apply)."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest
from dynamo_operator.controllers.dynamocomponentdeployment import PullSecretNotifier
from dynamo_operator.controllers.dynamographdeployment.reconciler import restart_acknowledged
from dynamo_operator.internal import kinds
from dynamo_operator.internal.dynamo.rollout.restart import plan_restart
from dynamo_operator.internal.dynamo.status import conditions
from dynamo_operator.internal.dynamo.status.conditions import Condition
from dynamo_operator.internal.dynamo.status.readiness import deployment_readiness, graph_status
from unit.apply.fakes import FakeCache, FakeClient, FakeRecorder

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
            "component": {
                "componentKind": "Deployment",
                "componentNames": ["g-x"],
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


def test_condition_keeps_transition_time_while_status_holds() -> None:
    """Re-setting an unchanged condition yields an identical list (hence no status write)."""
    t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    t1 = t0 + datetime.timedelta(hours=1)
    first = conditions.set_condition([], Condition("Ready", "False", "r", "m"), observed_generation=1, now=t0)
    again = conditions.set_condition(
        first, Condition("Ready", "False", "r", "m2"), observed_generation=1, now=t1
    )
    flipped = conditions.set_condition(
        first, Condition("Ready", "True", "r", "m"), observed_generation=1, now=t1
    )
    assert again[0]["lastTransitionTime"] == first[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert flipped[0]["lastTransitionTime"] == "2026-01-01T01:00:00Z"


# --- ChildSyncer against in-memory fakes ----------------------------------------------------------


OWNER = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
         "metadata": {"name": "g", "namespace": "ns", "uid": "u1"}}  # fmt: skip


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


async def test_graph_with_colliding_service_keys_is_reported_once_and_writes_nothing() -> None:
    """The backstop of the CRD rule (a graph stored before the rule existed): Ready=False with reason
    NameCollision naming both keys, one Warning Event, no child written (only the graph's status
    and its workload-provider record), no retry; a second reconcile of the unchanged graph sends
    nothing at all."""
    from dynamo_operator.controllers.dynamographdeployment import DynamoGraphDeploymentReconciler
    from dynamo_operator.internal.controller.result import TerminalError
    from dynamo_operator.internal.dynamo.common.context import GenContext

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
    assert client.calls == [("patch", "g"), ("patch", "g")]  # the status, the provider, nothing else
    assert recorder.events == [("Warning", "NameCollision")]
    with pytest.raises(TerminalError):
        await reconciler.reconcile("ns/g")
    assert client.calls == [("patch", "g"), ("patch", "g")]
    assert recorder.events == [("Warning", "NameCollision")]


def _dcd_with_restart(wanted: str | None, seen: str | None) -> dict[str, Any]:
    annotations = {"nvidia.com/restart-observed": seen} if seen else {}
    template = {"metadata": {"annotations": {"nvidia.com/restartAt": wanted}}} if wanted else {}
    return {"metadata": {"name": "g-worker", "annotations": annotations}, "spec": {"podTemplate": template}}


def test_a_component_without_a_restart_id_has_nothing_to_acknowledge() -> None:
    assert restart_acknowledged(_dcd_with_restart(None, None))


def test_a_restart_id_counts_once_the_components_controller_says_it_acted_on_it() -> None:
    assert not restart_acknowledged(_dcd_with_restart("r2", None))
    assert not restart_acknowledged(_dcd_with_restart("r2", "r1"))
    assert restart_acknowledged(_dcd_with_restart("r2", "r2"))
