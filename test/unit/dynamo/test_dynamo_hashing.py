"""Content hashes: canonical, stable, and blind to fields that do not reach the pod."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import (
    content_hash,
    desired_dcds,
    pod_template_hash,
    recorded_hash,
    stamp_hash,
)
from dynamo_operator.internal.dynamo.common.hashing import canonical_json, digest
from hypothesis import given
from hypothesis import strategies as st
from unit.dynamo.dynamo_testlib import CTX, dgd, kind, objects_of, service

Obj = dict[str, Any]
OBJ = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "namespace": "n", "labels": {"x": "1", "y": "2"}},
    "data": {"k": "v"},
}


def test_canonical_json_is_pinned() -> None:
    """The canonical form is sorted, compact JSON: pinned so hashes survive operator upgrades."""
    assert canonical_json({"b": [2, 1], "a": {"d": 1, "c": "é"}}) == '{"a":{"c":"é","d":1},"b":[2,1]}'


def _stdlib_form(value: Any) -> str:
    """The serialisation every stamped hash on a live object was computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_canonical_json_is_the_stdlib_form_for_any_json_value(value: Any) -> None:
    assert canonical_json(value) == _stdlib_form(value)


@pytest.mark.parametrize(
    "value",
    [
        {"tiny": 1e-7, "exp": 3.5e-12, "big": 1e22},
        {"huge": 2**64 + 1, "negative": -(2**70)},
        {1: "int key", 2: "another"},
        {"text": "e-5 in a string: v1e-2", "unicode": '\u00e9\u2028\x00\x1f"\\/'},
        {"lowest": 1e-05, "inside": 2.5e-05, "highest": 9.999e-05, "negative": -3e-05},
        [1e-05, [0.00007], {"k": 5e-05}],
        1e-05,
        {"at-1e-4": 0.0001, "above": 0.00012, "big-with-small-fraction": 10.00001, "text": "0.00001"},
    ],
    ids=[
        "float-exponents",
        "big-ints",
        "non-string-keys",
        "escapes",
        "floats-from-1e-5-to-1e-4",
        "small-floats-nested",
        "small-float-alone",
        "near-small-floats-alike",
    ],
)
def test_canonical_json_is_the_stdlib_form_where_orjson_differs(value: Any) -> None:
    assert canonical_json(value) == _stdlib_form(value)


def test_content_hash_value_is_pinned() -> None:
    """A known object hashes to a known value (changing this breaks quiet upgrades)."""
    assert content_hash(OBJ) == digest(OBJ)
    assert len(content_hash(OBJ)) == 64


def test_same_input_same_hash() -> None:
    """Hashing is deterministic."""
    assert content_hash(OBJ) == content_hash(copy.deepcopy(OBJ))


def test_reordered_maps_same_hash() -> None:
    """Map key order never matters."""
    reordered = {
        "data": {"k": "v"},
        "metadata": {"labels": {"y": "2", "x": "1"}, "namespace": "n", "name": "a"},
    }
    reordered |= {"kind": "ConfigMap", "apiVersion": "v1"}
    assert content_hash(reordered) == content_hash(OBJ)


@pytest.mark.parametrize(
    "volatile",
    [
        pytest.param({"resourceVersion": "9"}, id="resourceVersion"),
        pytest.param({"uid": "u"}, id="uid"),
        pytest.param({"generation": 4}, id="generation"),
        pytest.param({"creationTimestamp": "2026-01-01T00:00:00Z"}, id="creationTimestamp"),
        pytest.param({"managedFields": [{"manager": "x"}]}, id="managedFields"),
        pytest.param({"annotations": {consts.ANNOTATION_LAST_APPLIED_HASH: "old"}}, id="own-hash-annotation"),
    ],
)
def test_volatile_metadata_ignored(volatile: Obj) -> None:
    """Server-populated metadata and the hash stamp itself do not change the hash."""
    live = copy.deepcopy(OBJ)
    live["metadata"].update(volatile)
    assert content_hash(live) == content_hash(OBJ)


def test_status_ignored() -> None:
    """Status never changes the desired-state hash."""
    assert content_hash({**OBJ, "status": {"ready": True}}) == content_hash(OBJ)


def test_list_order_matters() -> None:
    """List order is meaningful in Kubernetes (args, containers), so it changes the hash."""
    a = {**OBJ, "data": {"l": [1, 2]}}
    b = {**OBJ, "data": {"l": [2, 1]}}
    assert content_hash(a) != content_hash(b)


def test_stamp_and_read_back() -> None:
    """stamp_hash writes the hash where recorded_hash reads it, and re-stamping is idempotent."""
    obj = stamp_hash(copy.deepcopy(OBJ))
    assert recorded_hash(obj) == content_hash(OBJ)
    assert stamp_hash(copy.deepcopy(obj)) == obj


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.integers() | st.text(max_size=5), max_size=8))
def test_hash_independent_of_insertion_order(data: dict[str, Any]) -> None:
    """Any map, in any insertion order, hashes the same."""
    reversed_data = dict(reversed(list(data.items())))
    assert content_hash({**OBJ, "data": data}) == content_hash({**OBJ, "data": reversed_data})


def _deployment(spec: Obj, **graph: Any) -> Obj:
    [dep] = kind(objects_of(dgd({"W": spec}, **graph), "W"), "Deployment")
    return dep


def _template_hash(dep: Obj) -> str:
    return str(dep["metadata"]["annotations"][consts.ANNOTATION_POD_TEMPLATE_HASH])


@pytest.mark.parametrize(
    ("change", "rolls"),
    [
        pytest.param({"replicas": 5}, False, id="replicas-no-roll"),
        pytest.param({"scalingAdapter": {"enabled": True}}, False, id="scaling-adapter-no-roll"),
        pytest.param(
            {"ingress": {"enabled": True, "host": "h", "ingressControllerClassName": "nginx"}},
            False,
            id="ingress-no-roll",
        ),
        pytest.param({"autoscaling": {"enabled": True}}, False, id="deprecated-autoscaling-no-roll"),
        pytest.param(
            {"annotations": {"nvidia.com/deployment-rolling-update-max-surge": "1"}},
            False,
            id="surge-no-roll",
        ),
        pytest.param(
            {"annotations": {"nvidia.com/deployment-strategy": "Recreate"}}, False, id="strategy-no-roll"
        ),
        pytest.param({"envs": [{"name": "X", "value": "1"}]}, True, id="env-rolls"),
        pytest.param({"resources": {"limits": {"cpu": "2"}}}, True, id="resources-roll"),
        pytest.param({"sharedMemory": {"size": "1Gi"}}, True, id="shm-rolls"),
    ],
)
def test_pod_template_hash_changes_only_for_pod_fields(change: Obj, rolls: bool) -> None:
    """Fields that do not reach a pod never change the pod template (so never roll pods)."""
    before = _deployment(service("worker", replicas=1))
    after = _deployment({**service("worker", replicas=1), **change})
    assert (before["spec"]["template"] != after["spec"]["template"]) is rolls
    assert (_template_hash(before) != _template_hash(after)) is rolls


def test_replicas_change_changes_deployment_hash() -> None:
    """A replicas change is still a change of the Deployment (it must be applied), just not a roll."""
    a, b = _deployment(service("worker", replicas=1)), _deployment(service("worker", replicas=2))
    assert recorded_hash(a) != recorded_hash(b)


def test_env_order_in_input_does_not_change_hashes() -> None:
    """The same env given in another order produces identical Deployments (a worker's name, though,
    follows the spec as written, as upstream's worker hash does: see test_dynamo_workerhash)."""
    env1 = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    a = _deployment(service("frontend", envs=env1))
    b = _deployment(service("frontend", envs=list(reversed(env1))))
    assert recorded_hash(a) == recorded_hash(b)


def test_dcd_hash_stable_across_runs() -> None:
    """Generating twice yields identical objects and hashes (no clock, no randomness)."""
    graph = dgd({"F": service("frontend"), "W": service("worker")})
    assert desired_dcds(graph, CTX) == desired_dcds(copy.deepcopy(graph), CTX)


def test_other_service_edit_does_not_touch_this_deployment() -> None:
    """Changing one service's env leaves the other services' Deployments byte-identical."""
    a = dgd({"F": service("frontend"), "W": service("worker")})
    b = dgd({"F": service("frontend"), "W": service("worker", envs=[{"name": "X", "value": "1"}])})
    assert kind(objects_of(a, "F"), "Deployment") == kind(objects_of(b, "F"), "Deployment")
    assert kind(objects_of(a, "W"), "Deployment") != kind(objects_of(b, "W"), "Deployment")


def test_pod_template_hash_is_short_and_stable() -> None:
    """The template hash is 16 hex characters of the canonical template."""
    assert pod_template_hash({"a": 1}) == digest({"a": 1})[:16]


def test_restart_id_rolls_the_selected_service_only() -> None:
    """A restart id handed to desired_dcds reaches that service's pods (and only that service's)."""
    graph = dgd({"F": service("frontend"), "W": service("worker")})
    plain = {d["spec"]["serviceName"]: d for d in desired_dcds(graph, CTX)}
    restarted = {d["spec"]["serviceName"]: d for d in desired_dcds(graph, CTX, restart_at={"W": "r1"})}
    assert plain["F"] == restarted["F"]
    assert restarted["W"]["spec"]["annotations"][consts.ANNOTATION_RESTART_AT] == "r1"


def test_user_written_restart_annotation_is_ignored() -> None:
    """Only the restart state machine sets restartAt; a copy in the user's annotations is dropped."""
    graph = dgd({"W": service("worker", annotations={consts.ANNOTATION_RESTART_AT: "mine"})})
    [dcd] = desired_dcds(graph, CTX)
    assert consts.ANNOTATION_RESTART_AT not in dcd["spec"].get("annotations", {})
