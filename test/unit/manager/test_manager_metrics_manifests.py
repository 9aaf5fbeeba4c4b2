"""The deployment manifests serve the secure metrics endpoint: config/manager, config/rbac,
config/prometheus and config/certmanager against what the metrics filter sends and needs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal.manager.metrics_auth import SUBJECT_ACCESS_REVIEW, TOKEN_REVIEW

CONFIG = Path(__file__).resolve().parents[3] / "config"


def load(relative: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((CONFIG / relative).read_text())
    return doc


def manager_container() -> dict[str, Any]:
    [container] = load("manager/manager.yaml")["spec"]["template"]["spec"]["containers"]
    return container


def test_the_deployment_serves_secure_metrics_on_8443() -> None:
    """config/manager turns --metrics-secure on at :8443 and names the port `https`."""
    container = manager_container()
    assert "--metrics-secure=true" in container["args"]
    assert "--metrics-bind-address=:8443" in container["args"]
    assert {"name": "https", "containerPort": 8443, "protocol": "TCP"} in container["ports"]
    assert all(p["containerPort"] != 8080 for p in container["ports"])


def test_probes_stay_plain_http_on_their_own_port() -> None:
    """The kubelet has no token: liveness and readiness use the health port over HTTP."""
    container = manager_container()
    for probe in ("livenessProbe", "readinessProbe"):
        get = container[probe]["httpGet"]
        assert get["port"] == "health"
        assert get.get("scheme", "HTTP") == "HTTP"


def test_the_metrics_service_exposes_https_8443() -> None:
    """The Service forwards 8443 to the container's `https` port."""
    [port] = load("manager/metrics_service.yaml")["spec"]["ports"]
    assert port == {"name": "https", "port": 8443, "targetPort": "https", "protocol": "TCP"}


def test_the_operator_may_create_the_reviews_the_filter_sends() -> None:
    """metrics-auth-role grants create on exactly the two review resources, bound to the operator."""
    rules = load("rbac/metrics_auth_role.yaml")["rules"]
    granted = {
        (g, r, v)
        for rule in rules
        for g in rule["apiGroups"]
        for r in rule["resources"]
        for v in rule["verbs"]
    }
    assert granted == {
        (TOKEN_REVIEW.group, TOKEN_REVIEW.plural, "create"),
        (SUBJECT_ACCESS_REVIEW.group, SUBJECT_ACCESS_REVIEW.plural, "create"),
    }
    binding = load("rbac/metrics_auth_role_binding.yaml")
    assert binding["roleRef"]["name"] == "metrics-auth-role"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "controller-manager", "namespace": "system"}
    ]


def test_scrapers_get_a_metrics_reader_role() -> None:
    """metrics-reader: get on the non-resource URL /metrics, nothing else."""
    assert load("rbac/metrics_reader_role.yaml")["rules"] == [
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
    ]


def test_rbac_kustomization_installs_the_metrics_roles() -> None:
    """config/rbac lists the new files next to the existing ones."""
    resources = load("rbac/kustomization.yaml")["resources"]
    for name in (
        "metrics_auth_role.yaml",
        "metrics_auth_role_binding.yaml",
        "metrics_reader_role.yaml",
        "role.yaml",
    ):
        assert name in resources


def test_the_service_monitor_scrapes_https_with_a_bearer_token() -> None:
    """Prometheus presents its ServiceAccount token over TLS; its ServiceAccount may read /metrics."""
    [endpoint] = load("prometheus/monitor.yaml")["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["scheme"], endpoint["path"]) == ("https", "https", "/metrics")
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}
    binding = load("prometheus/metrics_reader_binding.yaml")
    assert binding["roleRef"]["name"] == "dynamo-operator-metrics-reader"
    assert load("prometheus/kustomization.yaml")["resources"] == [
        "monitor.yaml",
        "metrics_reader_binding.yaml",
        "prometheus_rule.yaml",
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kustomize)")
def test_the_certmanager_overlay_mounts_the_certificate_where_the_flag_points() -> None:
    """config/certmanager: --metrics-cert-path is the mount of the Certificate's Secret."""
    out = subprocess.run(
        ["kubectl", "kustomize", str(CONFIG / "certmanager")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    [certificate] = [d for d in docs if d["kind"] == "Certificate" and "metrics" in d["metadata"]["name"]]
    [deployment] = [d for d in docs if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    [cert_path] = [a.split("=", 1)[1] for a in container["args"] if a.startswith("--metrics-cert-path=")]
    [mount] = [m for m in container["volumeMounts"] if m["mountPath"] == cert_path]
    [volume] = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == certificate["spec"]["secretName"]
    [service] = [d for d in docs if d["kind"] == "Service" and d["metadata"]["name"].endswith("-metrics")]
    name, namespace = service["metadata"]["name"], service["metadata"]["namespace"]
    assert f"{name}.{namespace}.svc" in certificate["spec"]["dnsNames"]
