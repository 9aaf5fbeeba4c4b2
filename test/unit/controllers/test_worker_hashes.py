"""A graph's worker hash is computed once per spec generation (pure logic)."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.controllers.dynamographdeployment.worker_hashes import WorkerHashes
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph.generate import graph_worker_hash

Obj = dict[str, Any]
WORKER = {"componentType": "worker", "extraPodSpec": {"mainContainer": {"image": "registry.example/w:1"}}}


def graph(generation: int | None = 1, uid: str = "u1", image: str = "registry.example/w:1") -> Obj:
    meta: Obj = {"name": "g", "namespace": "ns", "uid": uid}
    if generation is not None:
        meta["generation"] = generation
    worker = {**WORKER, "extraPodSpec": {"mainContainer": {"image": image}}}
    return {"metadata": meta, "spec": {"services": {"W": worker}}}


class Counted:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, dgd: Obj) -> str:
        self.calls += 1
        return graph_worker_hash(dgd)


def test_the_same_generation_is_hashed_once() -> None:
    compute = Counted()
    hashes = WorkerHashes(compute)
    first = hashes.hash_of("ns/g", graph())
    assert hashes.hash_of("ns/g", graph()) == first == graph_worker_hash(graph())
    assert compute.calls == 1


def test_a_new_generation_is_hashed_again() -> None:
    compute = Counted()
    hashes = WorkerHashes(compute)
    before = hashes.hash_of("ns/g", graph())
    after = hashes.hash_of("ns/g", graph(generation=2, image="registry.example/w:2"))
    assert after != before
    assert compute.calls == 2


def test_a_graph_recreated_under_its_name_is_hashed_again() -> None:
    compute = Counted()
    hashes = WorkerHashes(compute)
    hashes.hash_of("ns/g", graph())
    assert hashes.hash_of("ns/g", graph(uid="u2", image="registry.example/w:2")) == graph_worker_hash(
        graph(image="registry.example/w:2")
    )
    assert compute.calls == 2


def test_a_graph_without_a_generation_is_hashed_every_time() -> None:
    compute = Counted()
    hashes = WorkerHashes(compute)
    hashes.hash_of("ns/g", graph(generation=None))
    hashes.hash_of("ns/g", graph(generation=None))
    assert compute.calls == 2
    assert len(hashes) == 0


def test_a_spec_that_cannot_be_hashed_is_refused_every_time() -> None:
    def refuse(dgd: Obj) -> str:
        raise GenerationError("spec.services.W", "bad quantity")

    hashes = WorkerHashes(refuse)
    for _ in range(2):
        with pytest.raises(GenerationError):
            hashes.hash_of("ns/g", graph())
    assert len(hashes) == 0


def test_a_forgotten_graph_is_hashed_again() -> None:
    compute = Counted()
    hashes = WorkerHashes(compute)
    hashes.hash_of("ns/g", graph())
    hashes.forget("ns/g")
    hashes.hash_of("ns/g", graph())
    assert compute.calls == 2
