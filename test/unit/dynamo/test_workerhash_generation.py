"""Which hash names a graph's worker DCDs, whichever upstream era deployed it, and what the graph
records (internal/dynamo/rollout/workers.py: worker_generation, hash_annotations_patch)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo.rollout.workers import (
    ANNOTATION_V1,
    ANNOTATION_V2,
    LEGACY_HASH,
    WorkerGeneration,
    hash_annotations_patch,
    worker_generation,
    worker_hashes_of,
)

V1, V2, NEW_V2 = "aaaa1111", "bbbb2222", "cccc3333"
NOTHING: frozenset[str] = frozenset()


def gen(
    annotations: dict[str, str], *, v2: str = V2, live: frozenset[str] = NOTHING, rolling: bool = False
) -> str:
    return worker_generation(annotations, v2=v2, live_hashes=live, rolling=rolling).active


def test_a_new_graph_is_named_with_v2() -> None:
    assert gen({}) == V2


def test_a_v2_graph_keeps_its_name_while_its_spec_is_unchanged() -> None:
    assert gen({ANNOTATION_V2: V2}, live=frozenset({V2})) == V2


def test_a_v2_graph_whose_workers_changed_gets_the_new_v2() -> None:
    assert gen({ANNOTATION_V2: V2}, v2=NEW_V2, live=frozenset({V2})) == NEW_V2


def test_a_v1_graph_keeps_its_v1_name_at_takeover() -> None:
    """Upstream 1.0-1.3 (or this operator before v2): only v1 recorded, workers labelled with it."""
    assert gen({ANNOTATION_V1: V1}, live=frozenset({V1})) == V1


def test_a_v1_graph_with_its_v2_recorded_keeps_its_v1_name() -> None:
    """The bridge state upstream's migration (and ours) leaves: v1 names, v2 of the same spec."""
    assert gen({ANNOTATION_V1: V1, ANNOTATION_V2: V2}, live=frozenset({V1})) == V1


def test_a_v1_graph_whose_workers_changed_after_the_bridge_moves_to_v2() -> None:
    assert gen({ANNOTATION_V1: V1, ANNOTATION_V2: V2}, v2=NEW_V2, live=frozenset({V1})) == NEW_V2


def test_a_v1_rollout_under_way_is_retargeted_to_v2() -> None:
    """Old and new v1 generations live side by side: finishing a v1 set nobody records would be a
    second rollout later; both are replaced by the v2 set."""
    assert gen({ANNOTATION_V1: V1}, live=frozenset({V1, "dddd4444"})) == V2
    assert gen({ANNOTATION_V1: V1}, live=frozenset({V1}), rolling=True) == V2


def test_a_revert_during_a_rollout_from_the_bridge_returns_to_the_v1_name() -> None:
    """The spec is back to the one the v2 record was taken of: its v1 workers are the current ones."""
    assert gen({ANNOTATION_V1: V1, ANNOTATION_V2: V2}, live=frozenset({V1, NEW_V2}), rolling=True) == V1


def test_a_replaced_v1_graph_keeps_its_workers_when_they_are_of_its_spec() -> None:
    """Both annotations lost (the graph was PUT whole): live workers all of the spec's v1 hash stay."""
    live = frozenset({V1})
    assert worker_generation({}, v2=V2, live_hashes=live, rolling=False, v1_of_spec=lambda: V1).active == V1


def test_a_replaced_graph_whose_workers_are_of_another_spec_rolls_to_v2() -> None:
    live = frozenset({"dddd4444"})
    assert worker_generation({}, v2=V2, live_hashes=live, rolling=False, v1_of_spec=lambda: V1).active == V2


def test_upstreams_legacy_sentinel_is_never_a_name() -> None:
    assert gen({ANNOTATION_V1: LEGACY_HASH}) == V2


@pytest.mark.parametrize(
    ("generation", "annotations", "want"),
    [
        pytest.param(WorkerGeneration(V2, V2), {}, {ANNOTATION_V2: V2}, id="new-graph-records-v2"),
        pytest.param(
            WorkerGeneration(V1, V2), {ANNOTATION_V1: V1}, {ANNOTATION_V2: V2}, id="takeover-records-bridge"
        ),
        pytest.param(
            WorkerGeneration(NEW_V2, NEW_V2),
            {ANNOTATION_V1: V1, ANNOTATION_V2: V2},
            {ANNOTATION_V1: None, ANNOTATION_V2: NEW_V2},
            id="v2-generation-drops-v1",
        ),
        pytest.param(WorkerGeneration(V2, V2), {ANNOTATION_V2: V2}, {}, id="nothing-to-write"),
    ],
)
def test_the_annotations_record_a_settled_generation(
    generation: WorkerGeneration, annotations: dict[str, str], want: dict[str, Any]
) -> None:
    assert hash_annotations_patch(annotations, generation, settled=True) == want


def test_nothing_is_recorded_while_old_workers_serve() -> None:
    assert hash_annotations_patch({ANNOTATION_V2: V2}, WorkerGeneration(NEW_V2, NEW_V2), settled=False) == {}


def test_live_hashes_are_the_labels_of_live_worker_dcds() -> None:
    def dcd(svc: str, wh: str | None, *, deleting: bool = False) -> dict[str, Any]:
        labels = {"nvidia.com/dynamo-component": svc, **({"nvidia.com/dynamo-worker-hash": wh} if wh else {})}
        meta: dict[str, Any] = {"name": f"g-{svc}", "labels": labels}
        if deleting:
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return {"metadata": meta, "spec": {"serviceName": svc}}

    live = [dcd("Worker", V1), dcd("Worker", "gone", deleting=True), dcd("Frontend", None), dcd("Old", None)]
    assert worker_hashes_of(live, frozenset({"Worker", "Old"})) == {V1}
