"""Profiler output parsing and the DGD deployed from it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal.dynamo.dgdr import names
from dynamo_operator.internal.dynamo.dgdr.deployment import (
    deployment_from_profile,
    foreign_namespaces,
    target,
)
from dynamo_operator.internal.dynamo.dgdr.output import (
    ProfileOutputError,
    extra_config_maps,
    parse_output,
    read_output,
)

DGD = """apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata:
  name: gen
spec:
  services:
    Frontend: {componentType: frontend}
"""
CM = """apiVersion: v1
kind: ConfigMap
metadata:
  name: planner-profile-data
data:
  x: "1"
"""


@pytest.mark.parametrize(
    ("text", "extra_names"),
    [
        pytest.param(DGD, [], id="single-dgd"),
        pytest.param(CM + "---\n" + DGD, ["planner-profile-data"], id="configmap-then-dgd"),
        pytest.param(DGD + "---\n" + CM, ["planner-profile-data"], id="dgd-first"),
        pytest.param("---\n" + DGD, [], id="leading-separator"),
        pytest.param(
            CM + "---\n" + CM.replace("planner-profile-data", "two") + "---\n" + DGD,
            ["planner-profile-data", "two"],
            id="multiple-extras",
        ),
        pytest.param("---\n# note\n---\nplain string\n---\n{a: 1}\n---\n" + DGD, [], id="junk-skipped"),
    ],
)
def test_parse_output_separates_dgd_and_extras(text: str, extra_names: list[str]) -> None:
    out = parse_output(text)
    assert out.deployment["metadata"]["name"] == "gen"
    assert [e["metadata"]["name"] for e in out.extra] == extra_names


def test_last_dgd_wins() -> None:
    out = parse_output(DGD + "---\n" + DGD.replace("name: gen", "name: second"))
    assert out.deployment["metadata"]["name"] == "second"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(CM, id="no-dgd"),
        pytest.param("", id="empty"),
        pytest.param("a: [1\n", id="invalid-yaml"),
    ],
)
def test_parse_output_without_dgd_fails(text: str) -> None:
    with pytest.raises(ProfileOutputError):
        parse_output(text)


@pytest.mark.parametrize(
    ("use_mocker", "key"),
    [
        pytest.param(False, "config_with_planner.yaml", id="real"),
        pytest.param(True, "mocker_config_with_planner.yaml", id="mocker"),
    ],
)
def test_read_output_picks_key(use_mocker: bool, key: str) -> None:
    other = names.output_key(use_mocker=not use_mocker)
    cm = {"metadata": {"name": "dgdr-output-r"}, "data": {key: DGD, other: DGD.replace("gen", "wrong")}}
    assert read_output(cm, use_mocker=use_mocker).deployment["metadata"]["name"] == "gen"
    with pytest.raises(ProfileOutputError, match=key):
        read_output({"metadata": {"name": "x"}, "data": {other: DGD}}, use_mocker=use_mocker)


def test_extra_config_maps_get_the_request_namespace_and_tracking_labels() -> None:
    extra = [
        {"kind": "ConfigMap", "metadata": {"name": "a", "labels": {"k": "v"}}, "data": {}},
        {"kind": "Secret", "metadata": {"name": "s"}},
    ]
    cms, skipped = extra_config_maps(extra, dgdr_name="r", dgdr_namespace="ns1")
    assert skipped == ["Secret/s"]
    [cm] = cms
    assert cm["metadata"]["namespace"] == "ns1"
    assert cm["metadata"]["labels"] == {
        "k": "v",
        "dgdr.nvidia.com/name": "r",
        "dgdr.nvidia.com/namespace": "ns1",
        "nvidia.com/managed-by": "dynamo-operator",
    }


def _dgdr(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"autoApply": True}
    if overrides is not None:
        spec["deploymentOverrides"] = overrides
    return {"metadata": {"name": "req", "namespace": "ns1"}, "spec": spec}


GENERATED: dict[str, Any] = {
    "apiVersion": "nvidia.com/v1alpha1",
    "kind": "DynamoGraphDeployment",
    "metadata": {
        "name": "gen",
        "namespace": "ns1",
        "labels": {"from": "profiler", "team": "a"},
        "annotations": {"g": "1"},
        "uid": "stale",
        "resourceVersion": "9",
    },
    "spec": {
        "services": {
            "Frontend": {"componentType": "frontend"},
            "VllmDecodeWorker": {
                "componentType": "decode",
                "extraPodSpec": {"mainContainer": {"image": "old"}},
            },
            "Prefill": {"componentType": "prefill"},
        }
    },
    "status": {"state": "x"},
}


def test_generated_name_and_dgdr_namespace_by_default() -> None:
    dgd = deployment_from_profile(_dgdr(), GENERATED)
    assert (dgd["metadata"]["namespace"], dgd["metadata"]["name"]) == ("ns1", "gen")
    assert set(dgd) == {"apiVersion", "kind", "metadata", "spec"}
    assert set(dgd["metadata"]) == {"name", "namespace", "labels", "annotations"}
    assert dgd["metadata"]["labels"] == {
        "from": "profiler",
        "team": "a",
        "dgdr.nvidia.com/name": "req",
        "dgdr.nvidia.com/namespace": "ns1",
        "nvidia.com/managed-by": "dynamo-operator",
    }
    assert "ownerReferences" not in dgd["metadata"]
    assert dgd["spec"] == GENERATED["spec"]


def test_overrides_win_for_name_labels_annotations_and_workers_image() -> None:
    overrides = {
        "name": "mine",
        "namespace": "ns1",
        "labels": {"team": "b", "nvidia.com/managed-by": "me"},
        "annotations": {"o": "2"},
        "workersImage": "w:3",
    }
    dgd = deployment_from_profile(_dgdr(overrides), GENERATED)
    assert (dgd["metadata"]["namespace"], dgd["metadata"]["name"]) == ("ns1", "mine")
    assert target(_dgdr(overrides), GENERATED) == ("ns1", "mine")
    labels = dgd["metadata"]["labels"]
    assert (labels["team"], labels["nvidia.com/managed-by"], labels["dgdr.nvidia.com/name"]) == (
        "b",
        "me",
        "req",
    )
    assert dgd["metadata"]["annotations"] == {"g": "1", "o": "2"}
    services = dgd["spec"]["services"]
    assert services["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"] == {"image": "w:3", "name": "main"}
    assert services["Prefill"]["extraPodSpec"]["mainContainer"]["image"] == "w:3"
    assert "extraPodSpec" not in services["Frontend"]
    # The generated object is not mutated (it is status.generatedDeployment).
    assert GENERATED["spec"]["services"]["VllmDecodeWorker"]["extraPodSpec"]["mainContainer"] == {
        "image": "old"
    }


def test_target_falls_back_to_dgdr_name_without_generated_name() -> None:
    assert target(_dgdr(), {"metadata": {}}) == ("ns1", "req")


def _cm(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"kind": "ConfigMap", "metadata": meta}


def _generated(namespace: str | None) -> dict[str, Any]:
    meta = {"name": "gen"} if namespace is None else {"name": "gen", "namespace": namespace}
    return {"kind": "DynamoGraphDeployment", "metadata": meta, "spec": {}}


@pytest.mark.parametrize(
    ("overrides", "generated", "extra"),
    [
        pytest.param(None, _generated(None), [_cm("a")], id="nothing-named"),
        pytest.param({"namespace": ""}, _generated(None), [], id="empty-override"),
        pytest.param({"namespace": "ns1"}, _generated("ns1"), [_cm("a", "ns1")], id="own-namespace-named"),
        pytest.param(
            None, None, [{"kind": "Secret", "metadata": {"name": "s", "namespace": "x"}}], id="skipped-kinds"
        ),
    ],
)
def test_the_request_namespace_or_none_is_allowed(
    overrides: dict[str, Any] | None, generated: dict[str, Any] | None, extra: list[dict[str, Any]]
) -> None:
    assert foreign_namespaces(_dgdr(overrides), generated, extra) == []


@pytest.mark.parametrize(
    ("overrides", "generated", "extra", "named"),
    [
        pytest.param(
            {"namespace": "kube-system"},
            None,
            [],
            "spec.deploymentOverrides.namespace is 'kube-system'",
            id="override",
        ),
        pytest.param(
            None,
            _generated("kube-system"),
            [],
            "DynamoGraphDeployment names namespace 'kube-system' (metadata.namespace)",
            id="generated-dgd",
        ),
        pytest.param(
            None,
            None,
            [_cm("a"), _cm("planner", "kube-system")],
            "ConfigMap planner names namespace 'kube-system' (metadata.namespace)",
            id="extra-config-map",
        ),
    ],
)
def test_another_namespace_is_named_with_its_field(
    overrides: dict[str, Any] | None,
    generated: dict[str, Any] | None,
    extra: list[dict[str, Any]],
    named: str,
) -> None:
    [problem] = foreign_namespaces(_dgdr(overrides), generated, extra)
    assert named in problem
    assert "'ns1'" in problem  # the namespace that is allowed


def test_the_deployed_graph_lands_in_the_request_namespace_whatever_it_was_generated_with() -> None:
    """The reconciler refuses another namespace first; generation never places one anywhere else."""
    dgd = deployment_from_profile(_dgdr({"namespace": "ns1"}), _generated(None))
    assert dgd["metadata"]["namespace"] == "ns1"


@pytest.mark.parametrize(
    ("cm_name", "dgdr"),
    [
        pytest.param("dgdr-output-req", "req", id="output"),
        pytest.param("dgdr-output-", None, id="bare-prefix"),
        pytest.param("planner-profile-data", None, id="other"),
    ],
)
def test_output_config_map_maps_back_to_its_dgdr(cm_name: str, dgdr: str | None) -> None:
    assert names.dgdr_for_output_config_map(cm_name) == dgdr


def test_the_requests_runtime_version_is_each_components_default() -> None:
    request = _dgdr()
    request["spec"]["runtimeVersionOverride"] = "1.5.0"
    generated = copy.deepcopy(GENERATED)
    generated["spec"]["services"]["Prefill"]["runtimeVersionOverride"] = "1.4.0"
    services = deployment_from_profile(request, generated)["spec"]["services"]
    assert {name: s.get("runtimeVersionOverride") for name, s in services.items()} == {
        "Frontend": "1.5.0",
        "VllmDecodeWorker": "1.5.0",
        "Prefill": "1.4.0",
    }


def test_without_a_runtime_version_the_components_get_none() -> None:
    services = deployment_from_profile(_dgdr(), GENERATED)["spec"]["services"]
    assert all("runtimeVersionOverride" not in s for s in services.values())
