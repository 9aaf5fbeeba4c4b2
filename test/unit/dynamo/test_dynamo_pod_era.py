"""Graphs upstream 1.0/1.1 deployed keep their worker pods' shape (pod/era.py); newer graphs, and
graphs with no or a pre-1.0 origin version, get upstream 2a6da14c's."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.context import GenContext
from dynamo_operator.internal.dynamo.pod.era import before_upstream_1_2
from dynamo_operator.internal.dynamo.pod.template import Component, build_pod_template

CTX = GenContext(namespace="ns")


def worker(origin: str | None) -> Component:
    annotations = {c.ANNOTATION_ORIGIN_VERSION: origin} if origin else {}
    spec: dict[str, Any] = {
        "componentType": "worker",
        "subComponentType": "prefill",
        "annotations": annotations,
        "extraPodSpec": {"mainContainer": {"image": "img:1"}},
    }
    return Component(name="g-prefill", namespace="ns", parent_dgd="g", spec=spec)


def _main_env(template: dict[str, Any]) -> dict[str, Any]:
    [main] = [ct for ct in template["spec"]["containers"] if ct["name"] == "main"]
    return {e["name"]: e.get("value") for e in main.get("env") or []}


@pytest.mark.parametrize(
    ("origin", "gated"),
    [("1.0.0", True), ("v1.1.3", True), ("1.2.0", False), ("1.5.0", False), ("0.1.0", False), (None, False)],
)
def test_only_upstream_1_0_and_1_1_origins_are_gated(origin: str | None, gated: bool) -> None:
    assert before_upstream_1_2({c.ANNOTATION_ORIGIN_VERSION: origin} if origin else {}) is gated


def test_pre_1_2_worker_keeps_worker_type_and_no_forwardpass_port() -> None:
    template = build_pod_template(worker("1.0.0"), CTX)
    env = _main_env(template)
    assert (template["metadata"]["labels"][c.LABEL_COMPONENT_TYPE], env.get("DYN_COMPONENT")) == (
        "worker",
        "worker",
    )
    assert "DYN_FORWARDPASS_METRIC_PORT" not in env


def test_newer_worker_is_typed_by_its_sub_type_with_forwardpass_port() -> None:
    template = build_pod_template(worker("1.5.0"), CTX)
    env = _main_env(template)
    assert (template["metadata"]["labels"][c.LABEL_COMPONENT_TYPE], env.get("DYN_COMPONENT")) == (
        "prefill",
        "prefill",
    )
    assert env["DYN_FORWARDPASS_METRIC_PORT"] == "20380"
