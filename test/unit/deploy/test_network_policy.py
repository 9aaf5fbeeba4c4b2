"""The optional NetworkPolicy in front of the metrics port (issue #34): config/network-policy, left out
of config/default until its line there is uncommented, and the chart's `metrics.networkPolicy`, off by
default. Rendered by kubectl kustomize and by the helm of hack/build-helm.sh."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from testsupport import manifests

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
ENABLE_LINE = "# - ../network-policy"
Obj = dict[str, Any]


def load_all(text: str) -> list[Obj]:
    return manifests.parse(text)


def render_chart(*values: str) -> list[Obj]:
    return manifests.helm_template(*values)


def kustomize(directory: Path) -> list[Obj]:
    done = subprocess.run(
        ["kubectl", "kustomize", str(directory)], capture_output=True, text=True, timeout=120, check=True
    )
    return load_all(done.stdout)


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def pod_labels(objs: list[Obj]) -> dict[str, str]:
    [deployment] = of_kind(objs, "Deployment")
    return dict(deployment["spec"]["template"]["metadata"]["labels"])


def assert_narrows_only(
    policy: Obj, port: int, namespace_labels: dict[str, str], pods: dict[str, str]
) -> None:
    """The policy selects the operator's pods; `port` admits only namespaces with `namespace_labels`;
    every other TCP port admits anyone."""
    spec = policy["spec"]
    assert spec["podSelector"]["matchLabels"].items() <= pods.items()
    assert spec["policyTypes"] == ["Ingress"]
    narrowed, rest = spec["ingress"]
    assert narrowed == {
        "from": [{"namespaceSelector": {"matchLabels": namespace_labels}}],
        "ports": [{"protocol": "TCP", "port": port}],
    }
    assert "from" not in rest
    assert rest["ports"] == [
        {"protocol": "TCP", "port": 1, "endPort": port - 1},
        {"protocol": "TCP", "port": port + 1, "endPort": 65535},
    ]


@pytest.fixture(scope="module")
def enabled_config(tmp_path_factory: pytest.TempPathFactory) -> list[Obj]:
    """config/default with its network-policy line uncommented, rendered from a copy of config/."""
    copy = tmp_path_factory.mktemp("config") / "config"
    shutil.copytree(REPO / "config", copy)
    kustomization = copy / "default" / "kustomization.yaml"
    text = kustomization.read_text()
    assert text.count(ENABLE_LINE) == 1, "config/default names ../network-policy on one commented line"
    kustomization.write_text(text.replace(ENABLE_LINE, "  - ../network-policy"))
    return kustomize(copy / "default")


def test_config_default_leaves_the_network_policy_out() -> None:
    """Off unless asked for: a cluster without an enforcing network plugin gains nothing from it, and
    one whose Prometheus namespace is not labelled would lose its scrapes."""
    assert of_kind(kustomize(REPO / "config" / "default"), "NetworkPolicy") == []


def test_uncommenting_its_line_installs_a_policy_narrowing_only_the_metrics_port(
    enabled_config: list[Obj],
) -> None:
    """The policy lands in the operator's namespace under its prefix, selects the Deployment's pods,
    admits only `metrics: enabled` namespaces to :8443 and leaves the other ports open."""
    [policy] = of_kind(enabled_config, "NetworkPolicy")
    assert (policy["metadata"]["name"], policy["metadata"]["namespace"]) == (
        "dynamo-operator-metrics-ingress",
        "dynamo-system",
    )
    assert_narrows_only(policy, 8443, {"metrics": "enabled"}, pod_labels(enabled_config))


def test_the_chart_renders_no_network_policy_by_default() -> None:
    assert of_kind(render_chart(), "NetworkPolicy") == []


def test_the_chart_renders_the_policy_of_config_when_enabled(enabled_config: list[Obj]) -> None:
    """metrics.networkPolicy.enabled=true: the same name and rules as config/network-policy; its pod
    selector matches the chart's own Deployment."""
    objs = render_chart("metrics.networkPolicy.enabled=true")
    [policy] = of_kind(objs, "NetworkPolicy")
    [theirs] = of_kind(enabled_config, "NetworkPolicy")
    assert policy["metadata"]["name"] == theirs["metadata"]["name"]
    assert policy["metadata"]["namespace"] == "dynamo-system"
    assert policy["spec"]["ingress"] == theirs["spec"]["ingress"]
    assert_narrows_only(policy, 8443, {"metrics": "enabled"}, pod_labels(objs))


def test_the_chart_policy_follows_the_plain_http_port() -> None:
    """With metrics.secure=false the narrowed port is :8080."""
    objs = render_chart("metrics.networkPolicy.enabled=true", "metrics.secure=false")
    [policy] = of_kind(objs, "NetworkPolicy")
    assert_narrows_only(policy, 8080, {"metrics": "enabled"}, pod_labels(objs))


def test_the_chart_policy_takes_other_namespace_labels() -> None:
    """namespaceLabels replaces the default label (a map: --set merges, so null the default first)."""
    objs = render_chart(
        "metrics.networkPolicy.enabled=true",
        "metrics.networkPolicy.namespaceLabels.metrics=null",
        "metrics.networkPolicy.namespaceLabels.kubernetes\\.io/metadata\\.name=monitoring",
    )
    [policy] = of_kind(objs, "NetworkPolicy")
    assert_narrows_only(policy, 8443, {"kubernetes.io/metadata.name": "monitoring"}, pod_labels(objs))


def test_the_chart_renders_no_policy_when_metrics_are_off() -> None:
    assert (
        of_kind(render_chart("metrics.networkPolicy.enabled=true", "metrics.enabled=false"), "NetworkPolicy")
        == []
    )
