"""The reserved-annotation payloads: upstream's encoding, read back, and damage never fatal."""

from __future__ import annotations

import base64
import json
import logging

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, V1BETA1, convert, preserve, sparse


def test_spec_payload_is_upstreams_envelope() -> None:
    text = preserve.encode_spec({"components": [{"name": "Frontend"}]})
    assert json.loads(text) == {"version": 1, "spec": {"components": [{"name": "Frontend"}]}}


def test_spec_payload_reads_back() -> None:
    spec = {"services": {"w": {"labels": {"a": "b"}}}, "pvcs": [{"name": "p"}]}
    assert preserve.decode_spec(preserve.encode_spec(spec)) == spec


def test_payload_without_envelope_is_the_older_form() -> None:
    assert preserve.decode_spec('{"pvcs":[{"name":"p"}]}') == {"pvcs": [{"name": "p"}]}


def test_nil_raw_record_marks_its_path_absent() -> None:
    text = '{"version":1,"spec":{},"rawJSON":[{"path":"serviceName","nil":true}]}'
    assert preserve.decode_spec(text) == {"serviceName": None}


def test_raw_record_puts_json_bytes_back() -> None:
    raw = base64.b64encode(b'{"k":1}').decode()
    text = json.dumps(
        {
            "version": 1,
            "spec": {"services": {"epp": {"eppConfig": {"config": {"plugins": [{"type": "t"}]}}}}},
            "rawJSON": [{"path": "services/epp/eppConfig/config/plugins/0/parameters", "raw": raw}],
        }
    )
    spec = preserve.decode_spec(text)
    assert spec is not None
    assert spec["services"]["epp"]["eppConfig"]["config"]["plugins"][0]["parameters"] == {"k": 1}


@pytest.mark.parametrize(
    "damaged",
    [
        pytest.param("{", id="not-json"),
        pytest.param("[1]", id="not-an-object"),
        pytest.param('{"version":1,"spec":3}', id="spec-not-an-object"),
        pytest.param("x" * (preserve.MAX_PAYLOAD_CHARS + 1), id="too-large"),
        pytest.param("[" * 80 + "]" * 80, id="too-deep"),
    ],
)
def test_damaged_spec_payload_reads_as_absent(damaged: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert preserve.decode_spec(damaged) is None
    assert "ignoring conversion annotation" in caplog.text


def test_malformed_raw_records_are_skipped() -> None:
    records = [3, {"path": "x/y/z", "raw": "%%%"}, {"path": "a", "raw": "bm90IGpzb24="}]
    text = json.dumps({"version": 1, "spec": {"a": 1}, "rawJSON": records})
    assert preserve.decode_spec(text) == {"a": 1}


def test_take_removes_reserved_annotations_and_keeps_the_rest() -> None:
    metadata = {"annotations": {preserve.DGD_SPEC: "{}", "mine": "x"}}
    assert preserve.take(metadata, (preserve.DGD_SPEC, preserve.DGD_STATUS)) == {preserve.DGD_SPEC: "{}"}
    assert metadata == {"annotations": {"mine": "x"}}


def test_graph_with_a_damaged_payload_still_converts(caplog: pytest.LogCaptureFixture) -> None:
    graph = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "annotations": {preserve.DGD_SPEC: "{broken", preserve.DGD_STATUS: "[]"}},
        "spec": {"services": {"Frontend": {"componentType": "frontend", "replicas": 2}}},
    }
    with caplog.at_level(logging.WARNING):
        converted = convert(graph, V1BETA1)
    assert converted["spec"]["components"] == [{"name": "Frontend", "type": "frontend", "replicas": 2}]
    assert preserve.DGD_STATUS not in converted["metadata"].get("annotations", {})
    assert "ignoring conversion annotation" in caplog.text


def test_upstream_written_payload_restores_a_hub_only_field() -> None:
    """A v1alpha1 object as upstream's webhook wrote it (readOnly mount in the payload) reads back whole."""
    alpha = {
        "apiVersion": V1ALPHA1,
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "annotations": {
                preserve.DGD_SPEC: '{"version":1,"spec":{"components":[{"name":"W","podTemplate":'
                '{"metadata":{},"spec":{"containers":[{"name":"main","resources":{},"volumeMounts":'
                '[{"name":"cfg","readOnly":true,"mountPath":"/cfg"}]}]}}}]}}'
            },
        },
        "spec": {
            "services": {
                "W": {
                    "componentType": "worker",
                    "volumeMounts": [{"name": "cfg", "mountPoint": "/cfg"}],
                    "extraPodSpec": {"mainContainer": {"image": "img"}},
                }
            }
        },
    }
    [component] = convert(alpha, V1BETA1)["spec"]["components"]
    [main] = component["podTemplate"]["spec"]["containers"]
    assert main["volumeMounts"] == [{"name": "cfg", "readOnly": True, "mountPath": "/cfg"}]
    assert main["image"] == "img"


def test_sparse_difference_applies_back_to_the_original() -> None:
    original = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    projected = {"a": {"b": 2, "c": [1, 2], "e": 0}, "f": True}
    assert sparse.overlay(projected, sparse.diff(original, projected)) == original
