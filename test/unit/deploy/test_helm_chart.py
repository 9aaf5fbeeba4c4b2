"""The Helm chart (deploy/helm/dynamo-operator), rendered by a real helm (`make helm` builds it from its
Go module): by default the same objects as config/default, secure metrics included; its values switch
what they say and nothing else; what it shares with config/ is a byte-for-byte copy."""

from __future__ import annotations

import subprocess
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.flags import build_parser
from dynamo_operator.internal import optional_api_table
from dynamo_operator.internal.client import resource
from testsupport import manifests
from testsupport.manifests import helm

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
RELEASE, NAMESPACE = "dynamo-operator", "dynamo-system"
Obj = dict[str, Any]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the CRDs are almost 1 MB of YAML
CLUSTER_SCOPED = {
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Namespace",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}
# Set by Helm on every object, absent from config/default: compared apart.
HELM_LABELS = {
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
}


def load_all(text: str) -> list[Obj]:
    return manifests.parse(text)


def render(*values: str, release: str = RELEASE, namespace: str = NAMESPACE) -> list[Obj]:
    """`helm template` with these --set values, parsed (fresh objects on every call)."""
    return manifests.helm_template(*values, release=release, namespace=namespace)


def kustomized() -> list[Obj]:
    """config/default as kubectl kustomize renders it; kustomize also sets a namespace on kinds it does
    not know to be cluster-scoped (the admission policy binding), which the API server ignores."""
    objs = manifests.kustomize(REPO / "config" / "default")
    for obj in objs:
        if obj["kind"] in CLUSTER_SCOPED:
            obj["metadata"].pop("namespace", None)
    return objs


def key(obj: Obj) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace", ""))


def by_key(objs: Iterable[Obj]) -> dict[tuple[str, str, str], Obj]:
    return {key(o): o for o in objs}


def the(objs: list[Obj], kind: str, name_suffix: str = "") -> Obj:
    [obj] = [o for o in objs if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
    return obj


def container(objs: list[Obj]) -> Obj:
    [c] = the(objs, "Deployment")["spec"]["template"]["spec"]["containers"]
    return dict(c)


def args(objs: list[Obj]) -> list[str]:
    return list(container(objs)["args"])


def strip_helm(obj: Obj) -> Obj:
    """The object without Helm's labels and the CRDs' keep annotation."""
    out = yaml.load(yaml.safe_dump(obj), Loader=LOADER)
    meta = out["metadata"]
    meta["labels"] = {k: v for k, v in (meta.get("labels") or {}).items() if k not in HELM_LABELS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != "helm.sh/resource-policy"}
    meta.pop("annotations", None)
    if annotations:
        meta["annotations"] = annotations
    return dict(out)


def cluster_scoped(objs: list[Obj]) -> set[str]:
    return {o["kind"] for o in objs if "namespace" not in o["metadata"]}


def test_chart_lints_clean() -> None:
    done = subprocess.run(
        [helm(), "lint", "--strict", str(CHART)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_defaults_render_the_objects_of_config_default() -> None:
    """Release dynamo-operator in dynamo-system: every object of config/default but its Namespace
    (helm install --create-namespace), under the same name, and nothing else."""
    chart = by_key(render())
    expected = by_key(o for o in kustomized() if o["kind"] != "Namespace")
    assert set(chart) == set(expected)


@pytest.mark.parametrize(
    "kind",
    [
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "ServiceAccount",
        "ValidatingAdmissionPolicyBinding",
    ],
)
def test_defaults_match_config_default_object_by_object(kind: str) -> None:
    """Same rules, subjects, policy, schemas: only Helm's own labels and the CRDs' keep policy differ."""
    chart = by_key(o for o in render() if o["kind"] == kind)
    expected = by_key(o for o in kustomized() if o["kind"] == kind)
    assert chart
    for k, obj in chart.items():
        assert strip_helm(obj) == strip_helm(expected[k]), k


def test_admission_policy_is_config_admissions() -> None:
    """Compared with the source file (kustomize re-folds the multi-line CEL strings, without meaning)."""
    # The operator's identity, written into the adapter policy at install time (as config/default does).
    identity = {"operatorNs": "'dynamo-system'", "operatorSa": "'dynamo-operator-controller-manager'"}
    for file, name in (
        ("adapter_replicas_policy.yaml", "adapter-managed-replicas"),
        ("dgdr_namespace_policy.yaml", "dgdr-own-namespace"),
    ):
        source = yaml.safe_load((REPO / "config" / "admission" / file).read_text())
        for variable in source["spec"].get("variables", []):
            variable["expression"] = identity.get(variable["name"], variable["expression"])
        policy = the(render(), "ValidatingAdmissionPolicy", name)
        assert policy["metadata"]["name"] == f"dynamo-operator-{name}"
        assert policy["spec"] == source["spec"]


def test_deployment_runs_the_manager_as_config_default_does() -> None:
    """Args (secure metrics on :8443 included), ports, probes, env, resources, security contexts, volumes."""
    chart, expected = the(render(), "Deployment"), the(kustomized(), "Deployment")
    mine, theirs = container(render()), container(kustomized())
    assert sorted(mine.pop("args")) == sorted(theirs.pop("args"))
    assert mine.pop("image") == "dynamo-operator:0.1.0"
    theirs.pop("image")
    assert mine == theirs
    pod, their_pod = chart["spec"]["template"]["spec"], expected["spec"]["template"]["spec"]
    for field in ("serviceAccountName", "securityContext", "volumes", "terminationGracePeriodSeconds"):
        assert pod[field] == their_pod[field], field
    assert chart["spec"]["replicas"] == expected["spec"]["replicas"]


def test_metrics_service_is_https_on_8443_by_default() -> None:
    [port] = the(render(), "Service", "-metrics")["spec"]["ports"]
    [their_port] = the(kustomized(), "Service", "-metrics")["spec"]["ports"]
    assert port == their_port == {"name": "https", "port": 8443, "targetPort": "https", "protocol": "TCP"}


def test_insecure_metrics_serve_plain_http_on_8080_without_the_auth_role() -> None:
    objs = render("metrics.secure=false")
    assert {"--metrics-bind-address=:8080", "--metrics-secure=false"} <= set(args(objs))
    assert [p["name"] for p in the(objs, "Service", "-metrics")["spec"]["ports"]] == ["http"]
    roles = {o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRole"}
    assert roles == {"dynamo-operator-manager-role"}


def test_metrics_disabled_bind_nothing() -> None:
    objs = render("metrics.enabled=false")
    assert "--metrics-bind-address=0" in args(objs)
    assert not [o for o in objs if o["kind"] == "Service" and o["metadata"]["name"].endswith("-metrics")]
    assert [p["name"] for p in container(objs)["ports"]] == ["health", "webhook-server"]


def test_metrics_certificate_secret_is_mounted_and_passed() -> None:
    objs = render("metrics.certSecretName=metrics-tls")
    assert "--metrics-cert-path=/tmp/k8s-metrics-server/metrics-certs" in args(objs)
    volumes = the(objs, "Deployment")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "metrics-certs", "secret": {"secretName": "metrics-tls", "optional": False}} in volumes


def test_service_monitor_scrapes_like_config_prometheus() -> None:
    """Off by default (never auto-detected); when on, HTTPS with the bearer token, as config/prometheus."""
    assert "ServiceMonitor" not in {o["kind"] for o in render()}
    [endpoint] = the(render("metrics.serviceMonitor.enabled=true"), "ServiceMonitor")["spec"]["endpoints"]
    [their] = yaml.safe_load((REPO / "config/prometheus/monitor.yaml").read_text())["spec"]["endpoints"]
    assert endpoint == their


def _cluster_scoped_rule(rule: Obj) -> bool:
    """Whether a rule names cluster-scoped resources, as the operator's descriptors say (namespaced=False)."""
    unscoped = {
        (r.group, r.plural)
        for module in (resource, optional_api_table)
        for r in vars(module).values()
        if isinstance(r, resource.Resource) and not r.namespaced
    }
    return (rule["apiGroups"][0], rule["resources"][0].split("/")[0]) in unscoped


def test_restricted_mode_puts_the_rules_in_a_role_of_the_target_namespace() -> None:
    """--namespace=<target>; every namespaced rule of config/rbac in a Role there; only the rules on
    cluster-scoped resources (CRDs, ClusterTopologyBindings) stay cluster-wide."""
    objs = render("namespaceRestriction.enabled=true", "namespaceRestriction.targetNamespace=team")
    assert "--namespace=team" in args(objs)
    role = the(objs, "Role", "-manager-role")
    assert role["metadata"]["namespace"] == "team"
    rules = yaml.safe_load((CHART / "files" / "manager-role.yaml").read_text())["rules"]
    assert role["rules"] == [r for r in rules if not _cluster_scoped_rule(r)]
    crd_reader = the(objs, "ClusterRole", "-crd-reader")
    assert crd_reader["rules"] == [r for r in rules if _cluster_scoped_rule(r)]


def test_restricted_mode_grants_cluster_topology_bindings_cluster_wide() -> None:
    """A Role grants nothing on a cluster-scoped resource: Grove's ClusterTopologyBindings are read
    through the ClusterRole, never listed in the namespaced Role."""
    objs = render("namespaceRestriction.enabled=true")
    granted = [r for r in the(objs, "ClusterRole", "-crd-reader")["rules"] if "grove.io" in r["apiGroups"]]
    assert granted == [
        {
            "apiGroups": ["grove.io"],
            "resources": ["clustertopologybindings"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    assert all(
        "clustertopologybindings" not in r["resources"] for r in the(objs, "Role", "-manager-role")["rules"]
    )
    assert "dynamo-operator-manager-role" not in {
        o["metadata"]["name"] for o in objs if o["kind"] == "ClusterRole"
    }


def test_restricted_mode_without_the_cluster_wide_extras_renders_only_namespaced_objects() -> None:
    """For an installer with namespace rights only (plus reading CRDs): CRDs, admission policy and the
    metrics auth role switched off leave nothing cluster-scoped but the CRD reader."""
    objs = render(
        "namespaceRestriction.enabled=true",
        "crds.install=false",
        "admissionPolicy.enabled=false",
        "metrics.secure=false",
    )
    assert cluster_scoped(objs) == {"ClusterRole", "ClusterRoleBinding"}
    assert {o["metadata"]["name"] for o in objs if "namespace" not in o["metadata"]} == {
        "dynamo-operator-crd-reader",
        "dynamo-operator-crd-reader-rolebinding",
    }


def test_crds_are_kept_on_uninstall_and_can_be_left_out() -> None:
    crds = [o for o in render() if o["kind"] == "CustomResourceDefinition"]
    assert len(crds) == 5
    assert all(c["metadata"]["annotations"] == {"helm.sh/resource-policy": "keep"} for c in crds)
    assert "CustomResourceDefinition" not in {o["kind"] for o in render("crds.install=false")}


@pytest.mark.parametrize(
    ("value", "flag"),
    [
        pytest.param(
            "dynamo.istioVirtualServiceGateway=istio-system/gw",
            "--istio-virtual-service-gateway=istio-system/gw",
        ),
        pytest.param("dynamo.virtualServiceSupportsHttps=true", "--virtual-service-supports-https=true"),
        pytest.param("dynamo.ingress.controllerClassName=nginx", "--ingress-controller-class-name=nginx"),
        pytest.param("dynamo.ingress.tlsSecretName=tls", "--ingress-controller-tls-secret-name=tls"),
        pytest.param("dynamo.ingress.hostSuffix=example.com", "--ingress-host-suffix=example.com"),
        pytest.param(
            "dynamo.metrics.prometheusEndpoint=http://prom:9090", "--prometheus-endpoint=http://prom:9090"
        ),
        pytest.param("dynamo.modelExpressURL=http://mx:8001", "--model-express-url=http://mx:8001"),
        pytest.param("dynamo.mpiRun.secretName=mpi-ssh", "--mpi-run-ssh-secret-name=mpi-ssh"),
        pytest.param(
            "dynamo.mpiRun.keepInReleaseNamespace=true", f"--mpi-run-ssh-secret-namespace={NAMESPACE}"
        ),
        pytest.param("dynamo.discoveryBackend=etcd", "--discovery-backend=etcd"),
        pytest.param("dynamo.rbac.eppClusterRoleName=epp", "--epp-cluster-role-name=epp"),
        pytest.param(
            "controllerManager.leaderElection.id=dynamo.nvidia.com", "--leader-election-id=dynamo.nvidia.com"
        ),
        pytest.param("controllerManager.logFormat=console", "--log-format=console"),
        pytest.param("controllerManager.maxConcurrentReconciles=16", "--max-concurrent-reconciles=16"),
        pytest.param(
            r"controllerManager.groupKindConcurrency.DynamoComponentDeployment\.nvidia\.com=24",
            "--group-kind-concurrency=DynamoComponentDeployment.nvidia.com=24",
        ),
    ],
)
def test_each_setting_becomes_its_flag_and_the_operator_accepts_it(value: str, flag: str) -> None:
    """The rendered arguments parse with the operator's own parser (no chart/flag drift)."""
    rendered = args(render(value))
    assert flag in rendered
    build_parser().parse_args(rendered)


def test_defaults_pass_no_optional_flag() -> None:
    """An optional integration that is off adds no flag (and, per the tests above, no object or rule)."""
    assert sorted(args(render())) == sorted(
        [
            "--leader-elect",
            "--health-probe-bind-address=:8081",
            "--metrics-bind-address=:8443",
            "--metrics-secure=true",
        ]
    )


def test_restricted_mode_keeps_a_key_pair_per_namespace() -> None:
    """Restricted, the operator may not read the release namespace's Secrets: no source namespace."""
    rendered = args(
        render(
            "dynamo.mpiRun.keepInReleaseNamespace=true",
            "namespaceRestriction.enabled=true",
            "namespaceRestriction.targetNamespace=team-a",
        )
    )
    assert not [a for a in rendered if a.startswith("--mpi-run-ssh-secret-namespace")]


def test_epp_cluster_role_is_bindable() -> None:
    """The EPP ClusterRole given is bound per namespace by the operator, so it may `bind` it."""
    objs = render("dynamo.rbac.eppClusterRoleName=epp")
    [bind] = [r for r in the(objs, "ClusterRole", "-manager-role")["rules"] if r.get("verbs") == ["bind"]]
    assert bind["resourceNames"] == ["epp"]


def test_cluster_role_names_are_passed_and_bindable() -> None:
    """Each ClusterRole name given becomes its flag, and the operator may `bind` exactly those."""
    objs = render(
        "dynamo.rbac.plannerClusterRoleName=planner", "dynamo.rbac.dgdrProfilingClusterRoleName=profiler"
    )
    assert {"--planner-cluster-role-name=planner", "--dgdr-profiling-cluster-role-name=profiler"} <= set(
        args(objs)
    )
    [bind] = [r for r in the(objs, "ClusterRole", "-manager-role")["rules"] if r.get("verbs") == ["bind"]]
    assert bind == {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "verbs": ["bind"],
        "resourceNames": ["planner", "profiler"],
    }
    assert not [
        r for r in the(render(), "ClusterRole", "-manager-role")["rules"] if r.get("verbs") == ["bind"]
    ]


def test_nats_and_etcd_addresses_are_passed_when_set() -> None:
    rendered = args(render("natsAddr=nats://nats:4222", "etcdAddr=etcd:2379"))
    assert {"--natsAddr=nats://nats:4222", "--etcdAddr=etcd:2379"} <= set(rendered)


def test_image_defaults_to_the_app_version_which_is_the_package_version() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert chart["appVersion"] == chart["version"] == version
    assert container(render())["image"] == f"dynamo-operator:{version}"
    digest = "sha256:" + "cd" * 32
    assert container(render(f"controllerManager.manager.image.digest={digest}"))["image"].endswith(
        "@" + digest
    )


def test_other_release_names_prefix_every_object() -> None:
    """Two releases never collide: every name carries the release."""
    names = {
        o["metadata"]["name"] for o in render(release="team-a") if o["kind"] != "CustomResourceDefinition"
    }
    assert all(n.startswith("team-a-dynamo-operator-") for n in names), names


def test_several_replicas_without_leader_election_are_refused() -> None:
    done = subprocess.run(
        [helm(), "template", RELEASE, str(CHART), "--set", "controllerManager.replicas=2",
         "--set", "controllerManager.leaderElection.enabled=false"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0 and "leaderElection" in done.stderr


@pytest.mark.parametrize(
    ("copy", "source"),
    [
        pytest.param(f"files/crds/{p.name}", f"config/crd/bases/{p.name}", id=p.name)
        for p in sorted((REPO / "config" / "crd" / "bases").glob("*.yaml"))
    ]
    + [
        pytest.param("files/manager-role.yaml", "config/rbac/role.yaml", id="manager-role"),
        pytest.param(
            "files/adapter-replicas-policy.yaml", "config/admission/adapter_replicas_policy.yaml", id="policy"
        ),
        pytest.param(
            "files/dgdr-namespace-policy.yaml",
            "config/admission/dgdr_namespace_policy.yaml",
            id="dgdr-namespace-policy",
        ),
    ],
)
def test_chart_files_are_copies_of_config(copy: str, source: str) -> None:
    """`make manifests` (chart-sync) keeps them in step; edit config/, never the copies."""
    assert (CHART / copy).read_bytes() == (REPO / source).read_bytes(), f"run `make chart-sync` ({copy})"


def test_no_stale_crd_copies() -> None:
    copies = {p.name for p in (CHART / "files" / "crds").glob("*.yaml")}
    assert copies == {p.name for p in (REPO / "config" / "crd" / "bases").glob("*.yaml")}
