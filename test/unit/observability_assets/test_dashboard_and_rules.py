"""The Grafana dashboard and the alert rules of config/prometheus: the dashboard is valid JSON that Grafana
lays out, every query names metrics the operator declares, the alerts the issue asks for exist, and the
Helm chart and kustomize ship exactly these files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import dynamo_operator.wiring  # noqa: F401 - imports every module that declares an operator metric
import prometheus_client
import pytest
import yaml
from dynamo_operator.internal.observability.gc_pauses import GcPauses
from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client.metrics_core import Metric
from testsupport.dashboards import (
    DASHBOARD,
    RULES,
    dashboard_queries,
    load_dashboard,
    load_rules,
    metric_names,
    panels,
    rule_queries,
)

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
GRID_COLUMNS = 24
# What issue #38 asks the dashboard to show, as the metric each of those panels must read.
PANEL_METRICS = {
    "reconcile rate": "controller_runtime_reconcile_total",
    "reconcile errors": "controller_runtime_reconcile_errors_total",
    "reconcile latency": "controller_runtime_reconcile_time_seconds_bucket",
    "queue depth": "workqueue_depth",
    "queue wait": "workqueue_queue_duration_seconds_bucket",
    "graphs by state": "dynamo_operator_resources_total",
    "hot-loop keys": "controller_hot_loop_keys_total",
    "leader": "leader_election_master_status",
    "API requests by verb and code": "rest_client_requests_total",
}
ALERTS = {
    "DynamoOperatorHotLoop",
    "DynamoOperatorReconcileErrors",
    "DynamoOperatorNoLeader",
    "DynamoOperatorQueueWaitGrowing",
    "DynamoOperatorReconcileSlow",
}


def sample_names(family: Metric) -> set[str]:
    """The sample names a family is exposed under in the text format."""
    name = family.name
    match family.type:
        case "counter":
            return {f"{name}_total", f"{name}_created"}
        case "histogram":
            return {f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_created"}
        case "summary":
            return {name, f"{name}_sum", f"{name}_count", f"{name}_created"}
        case "info":
            return {f"{name}_info"}
        case _:
            return {name}


def declared_metric_names() -> set[str]:
    """Every sample name the operator's /metrics can serve: the operator REGISTRY's families (declared
    at import, children or not) and the process collectors the metrics server adds, counted on a
    registry of their own so this test changes nothing global."""
    process = prometheus_client.CollectorRegistry()
    prometheus_client.ProcessCollector(registry=process)
    prometheus_client.PlatformCollector(registry=process)
    prometheus_client.GCCollector(registry=process)
    GcPauses(process)  # declares python_gc_pause_seconds; never installed here
    return {name for registry in (REGISTRY, process) for f in registry.collect() for name in sample_names(f)}


def test_dashboard_is_json_with_unique_panel_ids_on_grafanas_grid() -> None:
    """dashboard.json parses; panel ids are unique; each panel fits the 24-column grid."""
    dashboard = json.loads(DASHBOARD.read_text())
    every = [*dashboard["panels"], *(p for row in dashboard["panels"] for p in row.get("panels", []))]
    ids = [p["id"] for p in every]
    assert len(ids) == len(set(ids)), ids
    for p in every:
        grid = p["gridPos"]
        assert grid["w"] > 0 and grid["h"] > 0 and grid["x"] + grid["w"] <= GRID_COLUMNS, p["title"]


def test_every_panel_queries_prometheus_through_the_datasource_variable() -> None:
    """Each drawing panel has at least one target, and panels and targets name `${datasource}`, so the
    dashboard imports into any Grafana whatever its Prometheus is called."""
    dashboard = load_dashboard()
    assert {v["name"] for v in dashboard["templating"]["list"]} >= {"datasource", "job", "controller"}
    for p in panels(dashboard):
        assert p["targets"], p["title"]
        assert p["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, p["title"]
        for t in p["targets"]:
            assert t["expr"].strip() and t["datasource"]["uid"] == "${datasource}", (p["title"], t)


def test_every_dashboard_query_names_only_metrics_the_operator_declares() -> None:
    """No panel reads a metric the operator does not declare (a typo, or a name it never had)."""
    declared = declared_metric_names()
    for q in dashboard_queries(load_dashboard()):
        names = metric_names(q.expr)
        assert names, f"{q.where}: no metric in {q.expr!r}"
        assert names <= declared, f"{q.where}: {sorted(names - declared)} are not operator metrics"


def test_dashboard_shows_what_the_issue_asks_for() -> None:
    """Reconcile rate, errors and latency; queue depth and wait; graphs by state; hot-loop keys; the
    leader; API requests by verb and code: each has a panel reading its metric."""
    used = {name for q in dashboard_queries(load_dashboard()) for name in metric_names(q.expr)}
    missing = {what: metric for what, metric in PANEL_METRICS.items() if metric not in used}
    assert not missing
    [api] = [p for p in panels(load_dashboard()) if "rest_client_requests_total" in json.dumps(p)]
    assert "by (method, code)" in api["targets"][0]["expr"]


def test_every_rule_names_only_metrics_the_operator_declares() -> None:
    """No alert reads a metric the operator does not declare."""
    declared = declared_metric_names()
    for q in rule_queries(load_rules()):
        names = metric_names(q.expr)
        assert names and names <= declared, f"{q.where}: {sorted(names - declared)} are not operator metrics"


def test_rules_hold_the_five_alerts_each_with_severity_and_summary() -> None:
    """Hot loop, error ratio, no leader, queue wait growing, reconcile p99: each has a severity label
    and a summary and description for whoever is paged."""
    rules = [r for g in load_rules()["spec"]["groups"] for r in g["rules"]]
    assert {r["alert"] for r in rules} == ALERTS
    for r in rules:
        assert r["labels"]["severity"] in {"warning", "critical"}, r["alert"]
        assert r["annotations"]["summary"] and r["annotations"]["description"], r["alert"]


def test_metric_names_skips_functions_labels_ranges_and_variables() -> None:
    """The name finder keeps metric names only."""
    expr = (
        'sum by (job, le) (rate(a_bucket{job=~"$job", x="{b}"}[$__rate_interval] offset 5m))'
        " / on (job) group_left (name) max without (pod) (b) > 0.5e3 and c unless histogram_quantile(0.9, d)"
    )
    assert metric_names(expr) == {"a_bucket", "b", "c", "d"}


@pytest.mark.parametrize(
    ("copy", "source"),
    [
        pytest.param("files/prometheus-rule.yaml", "prometheus_rule.yaml", id="rules"),
        pytest.param("files/grafana-dashboard.json", "dashboard.json", id="dashboard"),
    ],
)
def test_chart_copies_equal_config_prometheus(copy: str, source: str) -> None:
    """`make chart-sync` keeps them in step; edit config/prometheus, never the copies."""
    stale = f"run `make chart-sync` ({copy})"
    assert (CHART / copy).read_bytes() == (RULES.parent / source).read_bytes(), stale


def kustomized() -> list[dict[str, Any]]:
    done = subprocess.run(
        ["kubectl", "kustomize", str(RULES.parent)], capture_output=True, text=True, timeout=60, check=True
    )
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def test_kustomize_ships_the_rules_and_the_dashboard_for_grafanas_sidecar() -> None:
    """config/prometheus renders the PrometheusRule as written and a ConfigMap holding dashboard.json,
    labelled grafana_dashboard: "1" and named without a hash suffix (the sidecar loads it by label)."""
    objs = {(o["kind"], o["metadata"]["name"]): o for o in kustomized()}
    rule = objs[("PrometheusRule", "dynamo-operator-alerts")]
    assert rule["spec"] == load_rules()["spec"]
    dashboard = objs[("ConfigMap", "dynamo-operator-dashboard")]
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(dashboard["data"]["dynamo-operator.json"]) == load_dashboard()
