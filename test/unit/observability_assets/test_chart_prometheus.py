"""The chart's alerts and dashboard, rendered by the real helm of hack/build-helm.sh: off by default (the
Prometheus Operator's CRDs may be absent), and when switched on the same rules and dashboard as
config/prometheus, with the labels the values give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testsupport import manifests
from testsupport.dashboards import load_dashboard, load_rules

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
TEMPLATE = "templates/prometheus.yaml"
ON = ("metrics.prometheusRule.enabled=true", "metrics.grafanaDashboard.enabled=true")


def render(*values: str) -> list[dict[str, Any]]:
    """The objects of templates/prometheus.yaml with these --set values (only that template is shown:
    parsing the whole chart's megabyte of CRDs would cost most of the test's time)."""
    return manifests.helm_template(*values, show_only=TEMPLATE)


def monitoring(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The PrometheusRule and the dashboard ConfigMap among `objs`, by kind."""
    return {
        o["kind"]: o
        for o in objs
        if o["kind"] == "PrometheusRule"
        or (o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard"))
    }


def test_chart_renders_no_rules_and_no_dashboard_by_default() -> None:
    assert monitoring(render()) == {}


def test_chart_renders_config_prometheus_rules_with_the_values_labels() -> None:
    """The groups equal config/prometheus's (Prometheus' own {{ $labels }} templates pass through Helm
    untouched), and the release label a Prometheus selects rules by is added."""
    rule = monitoring(render(*ON, "metrics.prometheusRule.labels.release=prometheus"))["PrometheusRule"]
    assert rule["spec"] == load_rules()["spec"]
    assert rule["metadata"]["labels"]["release"] == "prometheus"
    assert rule["metadata"]["namespace"] == "dynamo-system"


def test_chart_renders_the_dashboard_for_grafanas_sidecar_in_the_namespace_given() -> None:
    cm = monitoring(render(*ON, "metrics.grafanaDashboard.namespace=monitoring"))["ConfigMap"]
    assert json.loads(cm["data"]["dynamo-operator.json"]) == load_dashboard()
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == "monitoring"


def test_chart_renders_neither_when_metrics_are_off() -> None:
    """Alerts on metrics nobody serves would only ever say the leader is missing."""
    assert monitoring(render(*ON, "metrics.enabled=false")) == {}
