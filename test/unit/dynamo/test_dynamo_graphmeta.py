"""The graph's own annotations: the origin-version stamp (and its one effect) and the serving worker hash."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal.dynamo import GenContext, desired_dcds
from dynamo_operator.internal.dynamo.component.backends import vllm_executor
from dynamo_operator.internal.dynamo.graph.meta import (
    annotations_to_write,
    origin_version,
    with_origin_version,
)
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
ORIGIN = "nvidia.com/dynamo-operator-origin-version"
WORKER_HASH = "nvidia.com/current-worker-hash"


def _graph() -> Obj:
    return dgd({"W": service("worker")})


def _child(origin: str | None) -> Obj:
    """A DCD as stored: the graph's pod annotations in its pod template."""
    return {"spec": {"podTemplate": {"metadata": {"annotations": {ORIGIN: origin} if origin else {}}}}}


@pytest.mark.parametrize(
    ("annotations", "children", "operator", "expected"),
    [
        pytest.param({}, [], "1.0.0", "1.0.0", id="new-graph-stamped-with-operator-version"),
        pytest.param({}, [], "", None, id="no-operator-version-no-stamp"),
        pytest.param({ORIGIN: "0.9.0"}, [], "1.0.0", "0.9.0", id="graph-keeps-its-own"),
        pytest.param({}, [_child("0.8.1")], "1.0.0", "0.8.1", id="wiped-annotation-restored-from-a-dcd"),
        pytest.param({}, [_child(None)], "1.0.0", None, id="deployed-before-stamping-stays-unstamped"),
    ],
)
def test_origin_version(
    annotations: dict[str, str], children: list[Obj], operator: str, expected: str | None
) -> None:
    """The origin version comes from the graph, else its DCDs; only a graph without DCDs is new."""
    graph = dgd({"W": service("worker")})
    graph["metadata"]["annotations"] = annotations
    assert origin_version(graph, children, operator) == expected


def test_with_origin_version_leaves_the_cached_graph_alone() -> None:
    """Generation gets a stamped copy; the object read from the cache is not modified."""
    graph = _graph()
    before = copy.deepcopy(graph)
    stamped = with_origin_version(graph, "1.0.0")
    assert stamped["metadata"]["annotations"][ORIGIN] == "1.0.0"
    assert graph == before


def test_stamp_reaches_dcds() -> None:
    """The stamp is one of the graph annotations copied into every DCD's spec.annotations."""
    [dcd] = desired_dcds(with_origin_version(_graph(), "1.0.0"), GenContext(namespace=NS))
    assert dcd["spec"]["annotations"][ORIGIN] == "1.0.0"


@pytest.mark.parametrize(
    ("annotations", "executor"),
    [
        pytest.param({ORIGIN: "1.0.0"}, "mp", id="stamped-1.0.0-multiprocessing"),
        pytest.param({ORIGIN: "v1.2.3"}, "mp", id="later-version"),
        pytest.param({ORIGIN: "0.1.0"}, "ray", id="pre-1.0-ray"),
        pytest.param({}, "ray", id="unstamped-ray"),
        pytest.param({ORIGIN: "unknown"}, "ray", id="not-semver-ray"),
        pytest.param(
            {ORIGIN: "0.1.0", "nvidia.com/vllm-distributed-executor-backend": "mp"}, "mp", id="explicit-wins"
        ),
    ],
)
def test_the_one_gate_of_the_origin_version(annotations: dict[str, str], executor: str) -> None:
    """vLLM multinode workers default to multiprocessing for graphs first deployed by >= 1.0.0."""
    assert vllm_executor(annotations) == executor


@pytest.mark.parametrize(
    ("current", "origin", "serving", "patch"),
    [
        pytest.param({}, "1.0.0", "abcd1234", {ORIGIN: "1.0.0", WORKER_HASH: "abcd1234"}, id="first-look"),
        pytest.param({ORIGIN: "1.0.0", WORKER_HASH: "abcd1234"}, "1.0.0", "abcd1234", {}, id="settled"),
        pytest.param(
            {ORIGIN: "1.0.0", WORKER_HASH: "abcd1234"},
            "1.0.0",
            "ffff0000",
            {WORKER_HASH: "ffff0000"},
            id="rolled",
        ),
        pytest.param(
            {ORIGIN: "1.0.0", WORKER_HASH: "abcd1234"}, "1.0.0", None, {}, id="serving-unknown-kept"
        ),
        pytest.param({}, None, None, {}, id="nothing-known"),
        pytest.param({}, "1.0.0", None, {ORIGIN: "1.0.0"}, id="refused-graph-still-stamped"),
    ],
)
def test_annotations_to_write(
    current: dict[str, str], origin: str | None, serving: str | None, patch: dict[str, str]
) -> None:
    """Only values that are known and differ are written (so a settled graph costs no write)."""
    assert annotations_to_write(current, origin=origin, serving_hash=serving) == patch
