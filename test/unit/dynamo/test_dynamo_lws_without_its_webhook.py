"""Every LeaderWorkerSet the operator generates is complete without LWS's defaulting webhook: the fields
that webhook would fill in are set already (the real LWS controller v0.6 fails on every reconcile of
an LWS without `rolloutStrategy`; test/integration/controllers_multinode runs it with that webhook off).
"""

from __future__ import annotations

from typing import Any

import pytest
from unit.dynamo.dynamo_testlib import dgd, kind, objects_of, service


def defaulting_webhook_would_change(lws: dict[str, Any]) -> list[str]:
    """The fields LWS's defaulting webhook (sigs.k8s.io/lws v0.6) would set or rewrite."""
    spec = lws["spec"]
    changes = []
    restart = spec["leaderWorkerTemplate"].get("restartPolicy")
    if restart in (None, "", "Default"):
        changes.append("leaderWorkerTemplate.restartPolicy")
    rollout = spec.get("rolloutStrategy") or {}
    if not rollout.get("type"):
        changes.append("rolloutStrategy.type")
    if rollout.get("type", "RollingUpdate") == "RollingUpdate" and not rollout.get(
        "rollingUpdateConfiguration"
    ):
        changes.append("rolloutStrategy.rollingUpdateConfiguration")
    if not (spec.get("networkConfig") or {}).get("subdomainPolicy"):
        changes.append("networkConfig.subdomainPolicy")
    return changes


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("component_type", ["worker", "prefill", "decode"])
@pytest.mark.parametrize("replicas", [1, 3])
def test_generated_leaderworkersets_need_nothing_from_the_lws_webhook(
    backend: str, component_type: str, replicas: int
) -> None:
    spec = service(component_type, backend, replicas=replicas, multinode={"nodeCount": 2})
    [lws] = kind(objects_of(dgd({"S": spec}, backend=backend), "S"), "LeaderWorkerSet")
    assert lws["spec"]["replicas"] == replicas
    assert defaulting_webhook_would_change(lws) == []


def test_the_rollout_replaces_a_group_at_a_time_without_surge() -> None:
    """The values are LWS's own defaults: one group down at a time, no extra group."""
    spec = service("worker", multinode={"nodeCount": 2})
    [lws] = kind(objects_of(dgd({"S": spec}), "S"), "LeaderWorkerSet")
    assert lws["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert lws["spec"]["networkConfig"] == {"subdomainPolicy": "Shared"}
    assert lws["spec"]["leaderWorkerTemplate"]["restartPolicy"] == "RecreateGroupOnPodRestart"
