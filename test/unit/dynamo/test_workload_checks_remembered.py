"""A graph's workload checks (graph/generate.py `check_workloads`) are remembered when they pass: a
graph generated again with nothing changed generates none of its DCDs' workloads again, and any
change to a DCD or to the context checks that DCD again."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.graph import generate
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects
from unit.dynamo.dynamo_testlib import CTX, dgd, service

WORKER_HASH = "abcdef12"


@pytest.fixture(autouse=True)
def nothing_remembered() -> Iterator[None]:
    generate._PASSED.clear()
    yield
    generate._PASSED.clear()


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the DCDs whose workloads the checks generate, in order."""
    names: list[str] = []
    real = generate.desired_component_objects

    def counting(dcd: Any, ctx: Any) -> Any:
        names.append(dcd["metadata"]["name"])
        return real(dcd, ctx)

    monkeypatch.setattr(generate, "desired_component_objects", counting)
    return names


def graph() -> dict[str, Any]:
    return dgd({"Frontend": service("frontend"), "Worker": service("worker")})


def test_a_graph_generated_again_unchanged_checks_no_workload_again(checked: list[str]) -> None:
    desired_graph_objects(graph(), CTX, worker_hash=WORKER_HASH)
    assert len(checked) == 2
    desired_graph_objects(graph(), CTX, worker_hash=WORKER_HASH)
    assert len(checked) == 2


def test_a_restart_step_checks_only_the_component_it_restarts(checked: list[str]) -> None:
    desired_graph_objects(graph(), CTX, worker_hash=WORKER_HASH)
    desired_graph_objects(
        graph(), CTX, worker_hash=WORKER_HASH, restart_at={"Frontend": "2026-11-29T12:00:00Z"}
    )
    assert checked[2:] == ["g-frontend"]


def test_a_changed_component_is_checked_again_alone(checked: list[str]) -> None:
    desired_graph_objects(graph(), CTX, worker_hash=WORKER_HASH)
    changed = graph()
    changed["spec"]["services"]["Frontend"]["replicas"] = 3
    desired_graph_objects(changed, CTX, worker_hash=WORKER_HASH)
    assert checked[2:] == ["g-frontend"]


def test_a_changed_context_checks_every_workload_again(checked: list[str]) -> None:
    desired_graph_objects(graph(), CTX, worker_hash=WORKER_HASH)
    other = dataclasses.replace(CTX, capabilities=Capabilities(lws=True, istio=True))
    desired_graph_objects(graph(), other, worker_hash=WORKER_HASH)
    assert len(checked) == 4


def test_a_refused_workload_is_refused_every_time(checked: list[str]) -> None:
    refused = dgd({"Frontend": service("frontend", sharedMemory={"size": "lots"})})
    for _ in range(2):
        with pytest.raises(GenerationError, match=r"sharedMemory\.size"):
            desired_graph_objects(refused, CTX, worker_hash=WORKER_HASH)
    assert checked == ["g-frontend", "g-frontend"]


def test_at_most_passed_size_checks_are_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(generate, "PASSED_SIZE", 3)
    for replicas in range(5):
        changed = graph()
        changed["spec"]["services"]["Frontend"]["replicas"] = replicas
        desired_graph_objects(changed, CTX, worker_hash=WORKER_HASH)
    assert len(generate._PASSED) == 3
