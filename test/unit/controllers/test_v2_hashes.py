"""A graph's v2 worker hash is computed again only when what it is made of changes (pure logic)."""

from __future__ import annotations

from typing import Any

from dynamo_operator.controllers.dynamographdeployment.rollout import RECORDED, V2Hashes
from dynamo_operator.internal.dynamo.common.inputs import Graph

Obj = dict[str, Any]


def graph(**annotations: str) -> Graph:
    meta: Obj = {"name": "g", "namespace": "ns", "uid": "u1", "generation": 1, "annotations": annotations}
    return {"metadata": meta, "spec": {"services": {}}}  # type: ignore[typeddict-item]


class Counted:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, dgd: Graph, namespace: str) -> str:
        self.calls += 1
        return f"h{self.calls}"


def test_the_annotations_the_reconciler_records_do_not_hash_again() -> None:
    compute = Counted()
    hashes = V2Hashes(compute)
    first = hashes.hash_of("ns/g", graph(), "ns")
    recorded = graph(**dict.fromkeys(RECORDED, "x"))
    assert hashes.hash_of("ns/g", recorded, "ns") == first
    assert compute.calls == 1


def test_an_annotation_upstream_copies_into_pods_hashes_again() -> None:
    compute = Counted()
    hashes = V2Hashes(compute)
    hashes.hash_of("ns/g", graph(), "ns")
    hashes.hash_of("ns/g", graph(**{"nvidia.com/enable-metrics": "false"}), "ns")
    assert compute.calls == 2
