"""The conversion webhook as deployed: config/default (Service, port, RBAC), config/certmanager and the
Helm chart's webhook values. Rendered by kubectl kustomize and the real helm of test_helm_chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dynamo_operator.flags import DEFAULT_WEBHOOK_SECRET, DEFAULT_WEBHOOK_SERVICE, build_parser
from dynamo_operator.webhook_setup import CONVERTED_CRDS
from testsupport import manifests
from unit.deploy.test_helm_chart import args, container, render  # the chart test's helm helpers

REPO = Path(__file__).resolve().parents[3]
Obj = dict[str, Any]


def kustomize(overlay: str) -> list[Obj]:
    return manifests.kustomize(REPO / "config" / overlay)


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o["kind"] == kind]


def converted_crds(objs: list[Obj]) -> list[Obj]:
    return [
        o
        for o in of_kind(objs, "CustomResourceDefinition")
        if (o["spec"].get("conversion") or {}).get("strategy") == "Webhook"
    ]


def named(objs: list[Obj], kind: str, name: str) -> Obj:
    [obj] = [o for o in of_kind(objs, kind) if o["metadata"]["name"] == name]
    return obj


def test_the_crds_that_convert_are_the_ones_the_operator_keeps_the_bundle_of() -> None:
    assert sorted(o["metadata"]["name"] for o in converted_crds(kustomize("default"))) == sorted(
        CONVERTED_CRDS
    )


def test_the_crds_name_the_webhook_service_of_config_default() -> None:
    objs = kustomize("default")
    service = named(objs, "Service", DEFAULT_WEBHOOK_SERVICE)
    assert service["metadata"]["namespace"] == "dynamo-system"
    assert service["spec"]["ports"] == [
        {"name": "webhook", "port": 9443, "targetPort": "webhook-server", "protocol": "TCP"}
    ]
    for crd in converted_crds(objs):
        ref = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert (ref["name"], ref["namespace"], ref["path"]) == (
            DEFAULT_WEBHOOK_SERVICE,
            "dynamo-system",
            "/convert",
        )
        assert ref["port"] == service["spec"]["ports"][0]["port"] == 9443
        assert crd["spec"]["conversion"]["webhook"]["conversionReviewVersions"] == ["v1"]


def test_the_manager_serves_the_webhook_port_the_service_targets() -> None:
    [deployment] = of_kind(kustomize("default"), "Deployment")
    [manager] = deployment["spec"]["template"]["spec"]["containers"]
    assert {"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"} in manager["ports"]
    options = build_parser().parse_args(manager["args"])
    assert options.webhook_bind_address == ":9443"
    assert options.webhook_cert_mode == "self"


def test_rbac_grants_the_crd_patch_by_name_and_the_secret_in_the_operator_namespace() -> None:
    objs = kustomize("default")
    role = named(objs, "ClusterRole", "dynamo-operator-manager-role")
    patch = [
        r for r in role["rules"] if "patch" in r["verbs"] and r["resources"] == ["customresourcedefinitions"]
    ]
    assert [sorted(r["resourceNames"]) for r in patch] == [sorted(CONVERTED_CRDS)]
    secret_role = named(objs, "Role", "dynamo-operator-webhook-cert-role")
    assert secret_role["metadata"]["namespace"] == "dynamo-system"
    updates = [r for r in secret_role["rules"] if "update" in r["verbs"]]
    assert [r["resourceNames"] for r in updates] == [[DEFAULT_WEBHOOK_SECRET]]
    binding = named(objs, "RoleBinding", "dynamo-operator-webhook-cert-rolebinding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "dynamo-operator-controller-manager", "namespace": "dynamo-system"}
    ]


def test_certmanager_issues_for_the_service_and_injects_into_the_converted_crds() -> None:
    objs = kustomize("certmanager")
    cert = named(objs, "Certificate", "dynamo-operator-webhook-cert")
    assert f"{DEFAULT_WEBHOOK_SERVICE}.dynamo-system.svc" in cert["spec"]["dnsNames"]
    for crd in of_kind(objs, "CustomResourceDefinition"):
        annotation = (crd["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")
        if crd["metadata"]["name"] in CONVERTED_CRDS:
            assert annotation == "dynamo-system/dynamo-operator-webhook-cert"
        else:
            assert annotation is None
    [deployment] = of_kind(objs, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    [manager] = pod["containers"]
    options = build_parser().parse_args(manager["args"])
    assert options.webhook_cert_mode == "external"
    [mount] = [m for m in manager["volumeMounts"] if m["name"] == "webhook-certs"]
    assert mount["mountPath"] == options.webhook_cert_dir
    [volume] = [v for v in pod["volumes"] if v["name"] == "webhook-certs"]
    assert volume["secret"]["secretName"] == cert["spec"]["secretName"]


# -- the chart -----------------------------------------------------------------------------------------


def test_chart_defaults_serve_the_webhook_like_config_default() -> None:
    objs = render()
    [service] = [o for o in of_kind(objs, "Service") if o["metadata"]["name"] == DEFAULT_WEBHOOK_SERVICE]
    theirs = named(kustomize("default"), "Service", DEFAULT_WEBHOOK_SERVICE)
    assert service["spec"]["ports"] == theirs["spec"]["ports"]
    assert {"name": "webhook-server", "containerPort": 9443, "protocol": "TCP"} in container(objs)["ports"]
    assert not [a for a in args(objs) if a.startswith("--webhook")]


def test_chart_cert_manager_mode_issues_mounts_and_annotates() -> None:
    objs = render("webhook.certManager.enabled=true")
    cert = named(objs, "Certificate", "dynamo-operator-webhook-cert")
    assert "dynamo-operator-webhook-service.dynamo-system.svc" in cert["spec"]["dnsNames"]
    assert cert["spec"]["issuerRef"] == {
        "kind": "Issuer",
        "name": "dynamo-operator-webhook-selfsigned-issuer",
    }
    assert named(objs, "Issuer", "dynamo-operator-webhook-selfsigned-issuer")
    options = build_parser().parse_args(args(objs))
    assert options.webhook_cert_mode == "external"
    for crd in of_kind(objs, "CustomResourceDefinition"):
        annotations = crd["metadata"]["annotations"]
        assert annotations["helm.sh/resource-policy"] == "keep"
        injected = annotations.get("cert-manager.io/inject-ca-from")
        assert injected == (
            "dynamo-system/dynamo-operator-webhook-cert"
            if crd["metadata"]["name"] in CONVERTED_CRDS
            else None
        )


def test_chart_cert_manager_mode_takes_an_issuer_of_the_users() -> None:
    objs = render("webhook.certManager.enabled=true", "webhook.certManager.issuerRef.kind=ClusterIssuer",
                  "webhook.certManager.issuerRef.name=corp-ca")  # fmt: skip
    cert = named(objs, "Certificate", "dynamo-operator-webhook-cert")
    assert cert["spec"]["issuerRef"] == {"kind": "ClusterIssuer", "name": "corp-ca"}
    assert not of_kind(objs, "Issuer")


def test_another_release_names_its_service_in_the_crds_and_the_flags() -> None:
    objs = render(release="dyn", namespace="ops")
    options = build_parser().parse_args(args(objs))
    assert options.webhook_service_name == "dyn-dynamo-operator-webhook-service"
    assert options.webhook_secret_name == "dyn-dynamo-operator-webhook-cert"
    assert named(objs, "Service", "dyn-dynamo-operator-webhook-service")["metadata"]["namespace"] == "ops"
    for crd in converted_crds(objs):
        ref = crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
        assert (ref["name"], ref["namespace"]) == ("dyn-dynamo-operator-webhook-service", "ops")
    role = named(objs, "Role", "dyn-dynamo-operator-webhook-cert-role")
    assert [r.get("resourceNames") for r in role["rules"] if "update" in r["verbs"]] == [
        ["dyn-dynamo-operator-webhook-cert"]
    ]
