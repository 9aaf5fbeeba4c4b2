"""Replacing worker DCDs after a worker spec edit: which old DCDs stay, and which hash serves."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.workers import plan_worker_rollout, service_of

Obj = dict[str, Any]
DESIRED = {"Frontend": "g-frontend", "Worker": "g-worker-bbbbbbbb"}
WORKERS = frozenset({"Worker"})


def dcd(
    name: str, *, service: str = "Worker", worker_hash: str | None = None, rolled: bool = True, **meta: Any
) -> Obj:
    """A live DCD of `service`; `rolled`: its controller saw its spec and reports it Available."""
    labels = {"nvidia.com/dynamo-component": service}
    if worker_hash:
        labels["nvidia.com/dynamo-worker-hash"] = worker_hash
    return {
        "metadata": {"name": name, "generation": 2, "labels": labels, **meta},
        "spec": {"serviceName": service},
        "status": {
            "observedGeneration": 2 if rolled else 1,
            "conditions": [{"type": "Available", "status": "True" if rolled else "False"}],
        },
    }


OLD = dcd("g-worker-aaaaaaaa", worker_hash="aaaaaaaa")
NEW_READY = dcd("g-worker-bbbbbbbb", worker_hash="bbbbbbbb")
NEW_STARTING = dcd("g-worker-bbbbbbbb", worker_hash="bbbbbbbb", rolled=False)


@pytest.mark.parametrize(
    ("live", "new", "keep", "serving"),
    [
        pytest.param([], None, set(), "bbbbbbbb", id="new-graph"),
        pytest.param([OLD], None, {"g-worker-aaaaaaaa"}, "aaaaaaaa", id="successor-not-created-yet"),
        pytest.param(
            [OLD, NEW_STARTING], NEW_STARTING, {"g-worker-aaaaaaaa"}, "aaaaaaaa", id="successor-starting"
        ),
        pytest.param([OLD, NEW_READY], NEW_READY, set(), "bbbbbbbb", id="successor-ready-old-pruned"),
        pytest.param(
            [dcd("g-worker-aaaaaaaa", worker_hash="aaaaaaaa", rolled=False), NEW_STARTING],
            NEW_STARTING,
            set(),
            "bbbbbbbb",
            id="old-not-serving-pruned-at-once",
        ),
        pytest.param(
            [dcd("g-worker-aaaaaaaa", worker_hash="aaaaaaaa", deletionTimestamp="t"), NEW_STARTING],
            NEW_STARTING,
            set(),
            "bbbbbbbb",
            id="old-being-deleted",
        ),
        pytest.param(
            [dcd("g-worker", rolled=True), NEW_STARTING],
            NEW_STARTING,
            {"g-worker"},
            None,
            id="unhashed-from-before-upgrade-kept-hash-unknown",
        ),
        pytest.param(
            [OLD, dcd("g-worker-cccccccc", worker_hash="cccccccc", rolled=False), NEW_STARTING],
            NEW_STARTING,
            {"g-worker-aaaaaaaa"},
            "aaaaaaaa",
            id="half-rolled-middle-generation-pruned",
        ),
        pytest.param(
            [dcd("g-removed-aaaaaaaa", service="Removed", worker_hash="aaaaaaaa"), NEW_STARTING],
            NEW_STARTING,
            set(),
            "bbbbbbbb",
            id="removed-service-pruned",
        ),
        pytest.param(
            [dcd("g-frontend-old", service="Frontend"), NEW_STARTING],
            NEW_STARTING,
            set(),
            "bbbbbbbb",
            id="non-worker-never-kept",
        ),
    ],
)
def test_old_workers_serve_until_their_successor_does(
    live: list[Obj], new: Obj | None, keep: set[str], serving: str | None
) -> None:
    """An old worker DCD stays while it serves and its service's new DCD does not; the serving hash is
    the kept set's while one is kept."""
    plan = plan_worker_rollout(
        desired=DESIRED,
        workers=WORKERS,
        new_hash="bbbbbbbb",
        live=live,
        views={"g-worker-bbbbbbbb": new},
    )
    assert (set(plan.keep), plan.serving_hash, plan.in_progress) == (keep, serving, bool(keep))


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param({"spec": {"serviceName": "A"}, "metadata": {}}, "A", id="spec"),
        pytest.param({"metadata": {"labels": {"nvidia.com/dynamo-component": "B"}}}, "B", id="label"),
        pytest.param({"metadata": {}}, None, id="neither"),
    ],
)
def test_service_of(obj: Obj, expected: str | None) -> None:
    """A DCD's service comes from spec.serviceName, else its component label."""
    assert service_of(obj) == expected
