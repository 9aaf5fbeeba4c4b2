"""The alert rules through Prometheus' own promtool (hack/promtool.sh builds it from its Go module, once per
machine): `promtool check rules` accepts config/prometheus's groups and refuses a broken one, and
`promtool test rules` shows each alert firing on a synthetic bad series and silent on a healthy one.

The test fails, never skips, when promtool cannot be built: CI must not lose the check quietly.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from testsupport.dashboards import RULES, load_rules

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "hack" / "promtool.sh"
JOB = 'job="dynamo-operator"'


@cache
def promtool() -> str:
    """The promtool binary; built by hack/promtool.sh when missing (minutes, once per machine)."""
    done = subprocess.run([str(SCRIPT)], capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        pytest.fail(f"hack/promtool.sh could not build promtool:\n{done.stderr[-3000:]}", pytrace=False)
    path = done.stdout.strip().splitlines()[-1]
    assert Path(path).is_file(), path
    return path


def check_rules(*files: Path) -> subprocess.CompletedProcess[str]:
    promtool()  # built (or failed) here, not inside the timed script run below
    return subprocess.run(
        [str(SCRIPT), "check-rules", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_promtool_accepts_the_prometheus_rule() -> None:
    """The groups parse, every expression is valid PromQL and every annotation template parses."""
    done = check_rules(RULES)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 5 rules found" in done.stdout, done.stdout


def test_promtool_refuses_a_rule_with_broken_promql(tmp_path: Path) -> None:
    """The check is not vacuous: one unbalanced parenthesis fails it, naming the alert's expression."""
    rule = load_rules()
    rule["spec"]["groups"][0]["rules"][0]["expr"] = "sum by (job) (rate(controller_hot_loop_keys_total[5m])"
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(rule))
    done = check_rules(broken)
    assert done.returncode != 0
    assert "FAILED" in done.stdout + done.stderr


def series(name: str, labels: str, values: str) -> dict[str, str]:
    return {"series": f"{name}{{{JOB}, {labels}}}", "values": values}


def fires(alert: str, at: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"eval_time": at, "alertname": alert, "exp_alerts": [{"exp_labels": labels}]}


def silent(alert: str, at: str) -> dict[str, Any]:
    return {"eval_time": at, "alertname": alert, "exp_alerts": []}


def hist(name: str, labels: str, bucket_values: dict[str, str]) -> list[dict[str, str]]:
    return [series(f"{name}_bucket", f'{labels}, le="{le}"', v) for le, v in bucket_values.items()]


CONTROLLER = 'controller="dynamographdeployment"'
LOOP = 'name="dynamographdeployment"'
WARN = {"severity": "warning", "job": "dynamo-operator"}
# Per alert: (the input series of the bad case, its expectations), then the same for the healthy case.
# Series advance one step per minute (`a+bxn`: from a, n steps adding b).
CASES: dict[
    str, tuple[list[dict[str, str]], list[dict[str, Any]], list[dict[str, str]], list[dict[str, Any]]]
] = {
    "DynamoOperatorHotLoop": (
        [series("controller_hot_loop_keys_total", CONTROLLER, "0x10 1x20")],
        [
            silent("DynamoOperatorHotLoop", "5m"),
            fires("DynamoOperatorHotLoop", "15m", {**WARN, "controller": "dynamographdeployment"}),
        ],
        [series("controller_hot_loop_keys_total", CONTROLLER, "0x30")],
        [silent("DynamoOperatorHotLoop", "25m")],
    ),
    "DynamoOperatorReconcileErrors": (
        [
            series("controller_runtime_reconcile_total", f'{CONTROLLER}, result="error"', "0+60x40"),
            series("controller_runtime_reconcile_errors_total", CONTROLLER, "0+30x40"),
        ],
        [
            silent("DynamoOperatorReconcileErrors", "10m"),  # true, but not yet for 15 minutes
            fires("DynamoOperatorReconcileErrors", "30m", {**WARN, "controller": "dynamographdeployment"}),
        ],
        [
            series("controller_runtime_reconcile_total", f'{CONTROLLER}, result="success"', "0+600x40"),
            series("controller_runtime_reconcile_errors_total", CONTROLLER, "0+6x40"),  # 1%
        ],
        [silent("DynamoOperatorReconcileErrors", "30m")],
    ),
    "DynamoOperatorNoLeader": (
        [
            series(
                "leader_election_master_status", 'name="dynamo-operator-leader", instance="a"', "1x5 0x20"
            ),
            series("leader_election_master_status", 'name="dynamo-operator-leader", instance="b"', "0x25"),
        ],
        [
            silent("DynamoOperatorNoLeader", "8m"),  # nobody leads since 6m: not yet for 5 minutes
            fires(
                "DynamoOperatorNoLeader",
                "15m",
                {"severity": "critical", "job": "dynamo-operator", "name": "dynamo-operator-leader"},
            ),
        ],
        [
            series("leader_election_master_status", 'name="dynamo-operator-leader", instance="a"', "0x25"),
            series("leader_election_master_status", 'name="dynamo-operator-leader", instance="b"', "1x25"),
        ],
        [silent("DynamoOperatorNoLeader", "20m")],
    ),
    "DynamoOperatorQueueWaitGrowing": (
        # 60 keys a minute; each waited 1 s for 20 minutes, then 20 s.
        [
            series("workqueue_queue_duration_seconds_count", LOOP, "0+60x60"),
            series("workqueue_queue_duration_seconds_sum", LOOP, "0+60x20 1260+1200x40"),
        ],
        [
            silent("DynamoOperatorQueueWaitGrowing", "20m"),
            fires("DynamoOperatorQueueWaitGrowing", "45m", {**WARN, "name": "dynamographdeployment"}),
        ],
        # A steady 20 s wait is long but not growing: the alert is about the trend.
        [
            series("workqueue_queue_duration_seconds_count", LOOP, "0+60x60"),
            series("workqueue_queue_duration_seconds_sum", LOOP, "0+1200x60"),
        ],
        [silent("DynamoOperatorQueueWaitGrowing", "45m")],
    ),
    "DynamoOperatorReconcileSlow": (
        # Every reconcile lands between 10 and 30 s.
        hist(
            "controller_runtime_reconcile_time_seconds",
            CONTROLLER,
            {"1": "0x40", "10": "0x40", "30": "0+60x40", "+Inf": "0+60x40"},
        ),
        [
            silent("DynamoOperatorReconcileSlow", "10m"),
            fires("DynamoOperatorReconcileSlow", "30m", {**WARN, "controller": "dynamographdeployment"}),
        ],
        hist(
            "controller_runtime_reconcile_time_seconds",
            CONTROLLER,
            {"1": "0+60x40", "10": "0+60x40", "30": "0+60x40", "+Inf": "0+60x40"},
        ),
        [silent("DynamoOperatorReconcileSlow", "30m")],
    ),
}


@pytest.mark.parametrize("alert", sorted(CASES))
def test_alert_fires_on_its_condition_and_stays_silent_when_healthy(alert: str, tmp_path: Path) -> None:
    """promtool evaluates the rules over synthetic series: the alert fires (with these labels) in the
    bad case, not before its `for:` has passed, and never in the healthy case. Annotations are left
    out of this copy of the rules (their templates are `check rules`' part)."""
    spec = load_rules()["spec"]
    [group] = spec["groups"]
    group["rules"] = [{k: v for k, v in r.items() if k != "annotations"} for r in group["rules"]]
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(spec))
    bad_series, bad_expect, good_series, good_expect = CASES[alert]
    tests = {
        "rule_files": ["rules.yaml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "name": f"{alert} bad",
                "interval": "1m",
                "input_series": bad_series,
                "alert_rule_test": bad_expect,
            },
            {
                "name": f"{alert} healthy",
                "interval": "1m",
                "input_series": good_series,
                "alert_rule_test": good_expect,
            },
        ],
    }
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(tests, sort_keys=False))
    done = subprocess.run(
        [promtool(), "test", "rules", "tests.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
