"""The operator's Grafana dashboard and alert rules (config/prometheus) as tests read them: every PromQL
expression they hold, and the metric names each expression selects.

The name finder is a small lexer, not a PromQL parser (promtool checks the syntax): it drops string
literals, label matchers `{...}`, ranges `[...]`, numbers and durations, Grafana's `$variables`, the
label lists of `by`/`without`/`on`/`ignoring`/`group_*`, keywords, and identifiers called as functions
or aggregations; what remains are the metric names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
PROMETHEUS_DIR = REPO / "config" / "prometheus"
DASHBOARD = PROMETHEUS_DIR / "dashboard.json"
RULES = PROMETHEUS_DIR / "prometheus_rule.yaml"

_AGGREGATIONS = frozenset(
    [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
    ]
)
_KEYWORDS = frozenset(["and", "or", "unless", "bool", "offset", "atan2"])
_LABEL_LIST_KEYWORDS = frozenset(["by", "without", "on", "ignoring", "group_left", "group_right"])
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_CLOSING = {"{": "}", "[": "]"}
# Grafana's label_values(metric, label) / label_values(metric{...}, label) of a query variable.
_LABEL_VALUES = re.compile(r"^\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)")


@dataclass(frozen=True, slots=True)
class Query:
    """One expression and where it came from (a panel's title and refId, or an alert's name)."""

    where: str
    expr: str


def _skip_string(expr: str, i: int) -> int:
    quote, i = expr[i], i + 1
    while i < len(expr) and expr[i] != quote:
        i += 2 if expr[i] == "\\" and quote != "`" else 1
    return i + 1


def _skip_group(expr: str, i: int, opening: str, closing: str) -> int:
    """Index after the bracket that closes the one at `i` (strings inside skipped)."""
    depth = 0
    while i < len(expr):
        c = expr[i]
        if c in "\"'`":
            i = _skip_string(expr, i)
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced {opening!r} in {expr!r}")


def metric_names(expr: str) -> set[str]:
    """The metric names `expr` selects."""
    names: set[str] = set()
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'`":
            i = _skip_string(expr, i)
        elif c in _CLOSING:
            i = _skip_group(expr, i, c, _CLOSING[c])
        elif c == "#":  # a comment runs to the end of the line
            end = expr.find("\n", i)
            i = n if end < 0 else end
        elif c == "$":  # a Grafana variable: $job, ${job}, $__rate_interval
            m = _IDENT.match(expr, i + 1) or re.compile(r"\{[^}]*\}").match(expr, i + 1)
            i = m.end() if m else i + 1
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            m = re.compile(r"[0-9.]+(?:[eE][+-]?[0-9]+)?[A-Za-z0-9_]*").match(expr, i)
            i = m.end() if m else i + 1
        elif m := _IDENT.match(expr, i):
            word, i = m.group(), m.end()
            rest = expr[i:].lstrip()
            if word in _LABEL_LIST_KEYWORDS:
                if rest.startswith("("):
                    i = _skip_group(expr, expr.index("(", i), "(", ")")
            elif word in _AGGREGATIONS or word in _KEYWORDS or rest.startswith("("):
                pass  # an aggregation, a keyword or a function call
            else:
                names.add(word)
        else:
            i += 1
    return names


def load_dashboard(path: Path = DASHBOARD) -> dict[str, Any]:
    dashboard: dict[str, Any] = json.loads(path.read_text())
    return dashboard


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel that draws something, rows' nested panels included; rows themselves left out."""
    out: list[dict[str, Any]] = []
    for panel in dashboard.get("panels", []):
        if panel.get("type") == "row":
            out += panel.get("panels", [])
        else:
            out.append(panel)
    return out


def dashboard_queries(dashboard: dict[str, Any]) -> list[Query]:
    """Every panel target's expression, and each query variable's label_values metric as a query."""
    out = [
        Query(f"panel {p.get('title')!r} {t.get('refId')}", t["expr"])
        for p in panels(dashboard)
        for t in p.get("targets", [])
    ]
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        query = var["query"]["query"] if isinstance(var.get("query"), dict) else var.get("query", "")
        m = _LABEL_VALUES.match(query)
        if not m:
            raise ValueError(f"variable {var.get('name')!r}: not a label_values() query: {query!r}")
        out.append(Query(f"variable {var['name']!r}", m.group(1)))
    return out


def load_rules(path: Path = RULES) -> dict[str, Any]:
    """The PrometheusRule object of `path`."""
    [rule] = [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") == "PrometheusRule"]
    return dict(rule)


def rule_queries(rule: dict[str, Any]) -> list[Query]:
    return [
        Query(f"rule {r.get('alert') or r.get('record')!r}", r["expr"])
        for group in rule["spec"]["groups"]
        for r in group["rules"]
    ]


def used_metric_names() -> dict[str, set[str]]:
    """Metric name → where the dashboard and the rules use it."""
    out: dict[str, set[str]] = {}
    for q in [*dashboard_queries(load_dashboard()), *rule_queries(load_rules())]:
        for name in metric_names(q.expr):
            out.setdefault(name, set()).add(q.where)
    return out
