"""The API server's rules for what a workload carries, checked by generation before anything is
written (pod/api_rules.py): each refuses what the API server refuses, and nothing it admits."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.api.conversion import V1ALPHA1, convert
from dynamo_operator.internal.dynamo import Capabilities, GenContext
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import component_view
from dynamo_operator.internal.dynamo.common.stored_terms import dcd_message
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_graph_objects
from dynamo_operator.internal.dynamo.pod import api_rules
from unit.dynamo.dynamo_testlib import NS, dgd, service

Json = dict[str, Any]


@pytest.mark.parametrize(
    "key",
    ["app", "A", "example.com/app", "k8s.io/a.b_c-d", "x" * 63, f"{'a' * 253}/x", "nvidia.com/dynamo-x"],
)
def test_a_qualified_name_is_a_label_key(key: str) -> None:
    api_rules.check_labels({key: "v"}, "spec.labels")


@pytest.mark.parametrize(
    "key", ["", "-a", "a-", "a b", "example.com/", "/a", "Example.com/a", "x" * 64, "a/b/c", f"{'a' * 254}/x"]
)
def test_anything_else_is_refused_as_a_label_key_naming_it(key: str) -> None:
    with pytest.raises(GenerationError, match="is no valid label key") as raised:
        api_rules.check_labels({key: "v"}, "spec.labels")
    assert raised.value.field == f"spec.labels[{key}]"


@pytest.mark.parametrize("value", ["", "v", "v1.2_3-x", "V" * 63])
def test_a_label_value_is_empty_or_a_name_part(value: str) -> None:
    api_rules.check_labels({"k": value}, "labels")


@pytest.mark.parametrize("value", ["a b", "-a", "a.", "x" * 64, "ü"])
def test_anything_else_is_refused_as_a_label_value(value: str) -> None:
    with pytest.raises(GenerationError, match="is no valid label value"):
        api_rules.check_labels({"k": value}, "labels")


def test_an_annotation_key_is_checked_lowercased_as_the_api_server_checks_it() -> None:
    api_rules.check_annotations({"Example.COM/Key": "any value at all"}, "annotations")


def test_an_annotation_key_that_is_no_qualified_name_is_refused() -> None:
    with pytest.raises(GenerationError, match="is no valid annotation key"):
        api_rules.check_annotations({"a/b/c": ""}, "annotations")


@pytest.mark.parametrize(
    "handler",
    [
        {"exec": {"command": ["true"]}},
        {"httpGet": {"path": "/health", "port": 8000}},
        {"httpGet": {"port": "system"}},
        {"tcpSocket": {"port": "http-2"}},
        {"grpc": {"port": 9000}},
    ],
)
def test_a_probe_with_one_complete_handler_passes(handler: Json) -> None:
    api_rules.check_probe({**handler, "periodSeconds": 3}, "spec.livenessProbe")


@pytest.mark.parametrize(
    ("handler", "field"),
    [
        ({"exec": {}}, "livenessProbe.exec.command"),
        ({"httpGet": {"path": "/"}}, "livenessProbe.httpGet.port"),
        ({"httpGet": {"port": 0}}, "livenessProbe.httpGet.port"),
        ({"tcpSocket": {"port": "8000"}}, "livenessProbe.tcpSocket.port"),
        ({"tcpSocket": {"port": "a--b"}}, "livenessProbe.tcpSocket.port"),
        ({"grpc": {"port": "grpc"}}, "livenessProbe.grpc.port"),
    ],
)
def test_a_handler_given_only_in_part_is_refused_naming_its_field(handler: Json, field: str) -> None:
    with pytest.raises(GenerationError) as raised:
        api_rules.check_probe(handler, "livenessProbe")
    assert raised.value.field == field


def test_a_liveness_probe_succeeds_once() -> None:
    with pytest.raises(GenerationError, match="must be 1"):
        api_rules.check_probe({"grpc": {"port": 1}, "successThreshold": 2}, "startupProbe")
    api_rules.check_probe({"grpc": {"port": 1}, "successThreshold": 2}, "readinessProbe")


def test_a_readiness_probe_has_no_grace_period_of_its_own() -> None:
    with pytest.raises(GenerationError, match="must not be set for a readiness probe"):
        api_rules.check_probe({"grpc": {"port": 1}, "terminationGracePeriodSeconds": 5}, "x.readinessProbe")


def test_env_from_a_secret_no_object_can_be_called_is_refused_naming_the_field_written() -> None:
    with pytest.raises(GenerationError, match="cannot name a secret") as raised:
        api_rules.check_env_from(
            [{"secretRef": {"name": "HF_Token"}}], {"HF_Token": "envFromSecret"}, "envFrom"
        )
    assert raised.value.field == "envFromSecret"
    api_rules.check_env_from([{"configMapRef": {"name": "hf-token.v1"}}], {}, "envFrom")


def test_a_probe_without_a_handler_is_refused() -> None:
    with pytest.raises(GenerationError, match=r"exactly one handler .* it has none"):
        api_rules.check_probe({"periodSeconds": 3}, "livenessProbe")


def test_a_probe_with_two_handlers_is_refused_naming_them() -> None:
    with pytest.raises(GenerationError, match="it has exec, grpc"):
        api_rules.check_probe({"exec": {}, "grpc": {"port": 1}}, "livenessProbe")


@pytest.mark.parametrize(
    "source",
    [
        {"fieldRef": {"fieldPath": "metadata.name"}},
        {"resourceFieldRef": {"resource": "limits.cpu"}},
        {"configMapKeyRef": {"name": "my-config.v1", "key": "a.B_c-1"}},
        {"secretKeyRef": {"name": "s", "key": "k", "optional": True}},
        {"fileKeyRef": {"path": "p", "key": "k", "volumeName": "v"}},
    ],
)
def test_a_variable_from_one_source_passes(source: Json) -> None:
    api_rules.check_env([{"name": "X", "value": "", "valueFrom": source}], {}, "env")


def test_a_variable_from_two_sources_is_refused_naming_the_variable() -> None:
    source = {"fieldRef": {"fieldPath": "metadata.name"}, "secretKeyRef": {"name": "s", "key": "k"}}
    with pytest.raises(GenerationError, match="it has fieldRef, secretKeyRef") as raised:
        api_rules.check_env([{"name": "X", "valueFrom": source}], {"X": "envs"}, "env")
    assert raised.value.field == "envs[name=X].valueFrom"


def test_a_variable_from_no_source_is_refused() -> None:
    with pytest.raises(GenerationError, match="it has none"):
        api_rules.check_env([{"name": "X", "valueFrom": {}}], {}, "env")


def test_a_value_beside_a_source_is_refused() -> None:
    with pytest.raises(GenerationError, match="beside a non-empty value"):
        api_rules.check_env([{"name": "X", "value": "1", "valueFrom": {"fieldRef": {}}}], {}, "env")


@pytest.mark.parametrize(
    ("selector", "field"),
    [
        ({"name": "Upper", "key": "k"}, "name"),
        ({"key": "k"}, "name"),
        ({"name": "s"}, "key"),
        ({"name": "s", "key": "a/b"}, "key"),
    ],
)
def test_a_config_map_or_secret_must_be_nameable(selector: Json, field: str) -> None:
    with pytest.raises(GenerationError) as raised:
        api_rules.check_env([{"name": "X", "valueFrom": {"secretKeyRef": selector}}], {}, "env")
    assert raised.value.field == f"env[name=X].valueFrom.secretKeyRef.{field}"


def test_a_container_mounting_no_volume_of_the_pod_is_refused_naming_its_field() -> None:
    helper = {"name": "helper", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}
    with pytest.raises(GenerationError) as raised:
        api_rules.check_volume_mounts(
            [helper], ["models"], {"helper": "extraPodSpec.containers[name=helper]"}
        )
    assert raised.value.field == "extraPodSpec.containers[name=helper].volumeMounts[name=data]"


@pytest.mark.parametrize("name", ["main", "a", "sidecar-1", "x" * 63])
def test_a_dns_label_names_a_container(name: str) -> None:
    api_rules.check_dns_label(name, "containers[name=x].name", "container")


@pytest.mark.parametrize("name", ["Main", "my.data", "-a", "a_b", "x" * 64, ""])
def test_anything_else_cannot_name_a_container_or_a_volume(name: str) -> None:
    with pytest.raises(GenerationError, match="cannot name a volume: it must be a lowercase DNS-1123 label"):
        api_rules.check_dns_label(name, "volumes[name=x].name", "volume")


# --- through generation ----------------------------------------------------------------------------


def _worker_deployment(graph: Json) -> Json:
    ctx = GenContext(namespace=NS)
    [dcd] = [
        o
        for o in desired_graph_objects(graph, ctx)
        if o["kind"] == "DynamoComponentDeployment" and o["spec"]["componentType"] == "worker"
    ]
    [deployment] = [
        o for o in desired_component_objects(component_view(dcd), ctx) if o["kind"] == "Deployment"
    ]
    return deployment


def test_a_v1alpha1_main_container_probe_still_merges_over_the_default_one() -> None:
    """v1alpha1's `extraPodSpec.mainContainer` tunes the default probe: the result has its handler."""
    worker = service("worker")
    worker["extraPodSpec"]["mainContainer"]["livenessProbe"] = {"periodSeconds": 7}
    [main] = _worker_deployment(dgd({"Frontend": service("frontend"), "W": worker}))["spec"]["template"][
        "spec"
    ]["containers"][:1]
    assert main["livenessProbe"]["periodSeconds"] == 7
    assert [h for h in api_rules.PROBE_HANDLERS if h in main["livenessProbe"]] == ["httpGet"]


def test_a_graph_label_no_object_can_carry_refuses_the_graph() -> None:
    graph = dgd({"Frontend": service("frontend"), "W": service("worker")}, labels={"team": "a b"})
    with pytest.raises(GenerationError) as raised:
        desired_graph_objects(graph, GenContext(namespace=NS))
    assert raised.value.field == "spec.labels[team]"


def test_a_component_annotation_no_object_can_carry_refuses_the_graph() -> None:
    worker = copy.deepcopy(service("worker"))
    worker["annotations"] = {"a/b/c": "x"}
    with pytest.raises(GenerationError) as raised:
        desired_graph_objects(dgd({"Frontend": service("frontend"), "W": worker}), GenContext(namespace=NS))
    assert raised.value.field == "spec.services.W.annotations[a/b/c]"


def test_a_dcd_written_on_its_own_is_refused_for_a_pod_label_naming_its_v1beta1_field() -> None:
    dcd = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "solo", "namespace": NS, "uid": "u-solo", "generation": 1},
        "spec": {
            "name": "solo",
            "type": "frontend",
            "podTemplate": {
                "metadata": {"labels": {"tier": "not valid"}},
                "spec": {"containers": [{"name": "main", "image": "img:1"}]},
            },
        },
    }
    with pytest.raises(GenerationError) as raised:
        desired_component_objects(component_view(dcd), GenContext(namespace=NS))
    assert dcd_message(raised.value.field, raised.value.message).startswith(
        "spec.podTemplate.metadata.labels[tier]: 'not valid' is no valid label value"
    )


def test_a_named_frontend_sidecar_may_tune_the_frontend_probe_it_is_completed_with() -> None:
    """v1beta1's `frontendSidecar` names a container the operator completes: its own partial probe
    goes over the frontend's, as it does for the main container in v1alpha1."""
    worker = {
        "name": "W",
        "type": "worker",
        "frontendSidecar": "fe",
        "podTemplate": {
            "spec": {
                "containers": [
                    {"name": "main", "image": "img:1", "command": ["python3", "-m", "dynamo.vllm"]},
                    {"name": "fe", "image": "fe:1", "readinessProbe": {"periodSeconds": 9}},
                ]
            }
        },
    }
    beta = {
        "apiVersion": "nvidia.com/v1beta1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": NS, "uid": "u-named-sidecar", "generation": 1},
        "spec": {
            "components": [
                {
                    "name": "Frontend",
                    "type": "frontend",
                    "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img:1"}]}},
                },
                worker,
            ]
        },
    }
    deployment = _worker_deployment(convert(beta, V1ALPHA1))
    [sidecar] = [x for x in deployment["spec"]["template"]["spec"]["containers"] if x["name"] == "fe"]
    assert sidecar["readinessProbe"]["periodSeconds"] == 9
    assert [h for h in api_rules.PROBE_HANDLERS if h in sidecar["readinessProbe"]] == ["httpGet"]


def _frontend_with_ingress(ingress: Json) -> Json:
    frontend = service("frontend")
    frontend["ingress"] = {"enabled": True, "ingressControllerClassName": "nginx", **ingress}
    return dgd({"Frontend": frontend, "W": service("worker")})


@pytest.mark.parametrize(
    ("ingress", "field"),
    [
        ({"host": "My_Host"}, "ingress.host"),
        ({"host": "api", "tls": {"secretName": "TLS"}}, "ingress.tls.secretName"),
        ({"host": "api", "labels": {"a b": "c"}}, "ingress.labels[a b]"),
    ],
)
def test_an_ingress_the_api_server_would_refuse_refuses_the_graph(ingress: Json, field: str) -> None:
    with pytest.raises(GenerationError) as raised:
        desired_graph_objects(_frontend_with_ingress(ingress), GenContext(namespace=NS))
    assert raised.value.field == f"spec.services.Frontend.{field}"


def test_an_ingress_host_may_be_a_wildcard() -> None:
    api_rules.check_subdomain("*.example.com", "ingress.host", "host", wildcard=True)


def test_only_a_probe_given_in_place_of_the_default_says_it_replaces_it() -> None:
    with pytest.raises(GenerationError, match="replaces the default one whole"):
        api_rules.check_probe({"periodSeconds": 3}, "livenessProbe", replaces_default=True)
    with pytest.raises(GenerationError) as raised:
        api_rules.check_probe({"periodSeconds": 3}, "extraPodSpec.containers[name=x].livenessProbe")
    assert "default" not in str(raised.value)


def _istio_graph(ingress: Json) -> Json:
    return _frontend_with_ingress(
        {"useVirtualService": True, "virtualServiceGateway": "gw/public", **ingress}
    )


def test_a_virtual_service_label_the_api_server_would_refuse_refuses_the_graph() -> None:
    ctx = GenContext(namespace=NS, capabilities=Capabilities(istio=True))
    with pytest.raises(GenerationError) as raised:
        desired_graph_objects(_istio_graph({"host": "api", "labels": {"a b": "c"}}), ctx)
    assert raised.value.field == "spec.services.Frontend.ingress.labels[a b]"


def test_a_virtual_service_host_is_left_to_istio() -> None:
    ctx = GenContext(namespace=NS, capabilities=Capabilities(istio=True))
    desired_graph_objects(_istio_graph({"host": "API"}), ctx)
