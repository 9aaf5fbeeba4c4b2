"""DCD → Deployment / LeaderWorkerSet, Service, Ingress, VirtualService, model Service."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.v1alpha1 import DynamoComponentDeployment
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import (
    Capabilities,
    GenContext,
    MissingAPIError,
    component_of,
    desired_component_objects,
    multinode_missing_api,
)
from unit.dynamo.dynamo_testlib import CTX, NS, dcd_of, dgd, kind, objects_of, service

Obj = dict[str, Any]


def _owner(spec: Obj) -> Obj:
    """The controller ownerReference to the DCD of `spec` as service S of graph g."""
    return {
        "apiVersion": "nvidia.com/v1beta1",  # the storage version, read as v1alpha1
        "kind": "DynamoComponentDeployment",
        "name": _dcd_name(spec),
        "uid": "dcd-uid-S",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _dcd_name(spec: Obj) -> str:
    """The DCD name of `spec` as service S of graph g (`g-s`, workers `g-s-<worker hash>`)."""
    return str(dcd_of(dgd({"S": spec}), "S")["metadata"]["name"])


def _objs(spec: Obj, ctx: GenContext = CTX, **graph: Any) -> list[Obj]:
    return objects_of(dgd({"S": spec}, **graph), "S", ctx)


def _one(objs: list[Obj], k: str) -> Obj:
    [found] = kind(objs, k)
    return found


# --- Deployment ----------------------------------------------------------------------------------


def test_single_node_yields_deployment_named_like_dcd() -> None:
    """A single-node component runs as one Deployment named like its DCD, owned by it."""
    dep = _one(_objs(service("frontend")), "Deployment")
    assert dep["metadata"]["name"] == "g-s"
    assert dep["metadata"]["ownerReferences"] == [_owner(service("frontend"))]


def test_worker_deployment_carries_the_worker_hash_of_its_dcd() -> None:
    """A worker's Deployment is named like its hashed DCD and labelled, as its pods, with the hash."""
    spec = service("worker")
    name = _dcd_name(spec)
    dep = _one(_objs(spec), "Deployment")
    worker_hash = name.rsplit("-", 1)[1]
    assert (dep["metadata"]["name"], dep["metadata"]["labels"][consts.LABEL_WORKER_HASH]) == (
        name,
        worker_hash,
    )
    assert dep["spec"]["template"]["metadata"]["labels"][consts.LABEL_WORKER_HASH] == worker_hash


@pytest.mark.parametrize(("replicas", "expected"), [(None, 1), (0, 0), (4, 4)])
def test_deployment_replicas(replicas: int | None, expected: int) -> None:
    """Deployment replicas follow the service (graph default 1; zero allowed)."""
    spec = service("worker") if replicas is None else service("worker", replicas=replicas)
    assert _one(_objs(spec), "Deployment")["spec"]["replicas"] == expected


def test_deployment_selector() -> None:
    """The Deployment selects its pods by nvidia.com/selector=<dcd name>, which the template carries."""
    dep = _one(_objs(service("worker")), "Deployment")
    name = _dcd_name(service("worker"))
    assert dep["spec"]["selector"] == {"matchLabels": {"nvidia.com/selector": name}}
    assert dep["spec"]["template"]["metadata"]["labels"]["nvidia.com/selector"] == name


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        pytest.param(
            {},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            id="default",
        ),
        pytest.param(
            {consts.ANNOTATION_MAX_SURGE: "1", consts.ANNOTATION_MAX_UNAVAILABLE: "0"},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            id="ints",
        ),
        pytest.param(
            {consts.ANNOTATION_MAX_SURGE: "50%"},
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "25%"}},
            id="percent",
        ),
        pytest.param(
            {consts.ANNOTATION_DEPLOYMENT_STRATEGY: "Recreate"}, {"type": "Recreate"}, id="recreate"
        ),
    ],
)
def test_deployment_strategy(annotations: Obj, expected: Obj) -> None:
    """RollingUpdate 25%/25% unless the component's annotations say otherwise."""
    assert (
        _one(_objs(service("worker", annotations=annotations)), "Deployment")["spec"]["strategy"] == expected
    )


def test_deployment_carries_pod_template_hash() -> None:
    """The Deployment records the hash of its pod template."""
    dep = _one(_objs(service("worker")), "Deployment")
    assert len(dep["metadata"]["annotations"][consts.ANNOTATION_POD_TEMPLATE_HASH]) == 16


def test_model_ref_labels_and_annotation() -> None:
    """modelRef adds the base-model hash label to pods and the base-model annotation to the Deployment."""
    dep = _one(_objs(service("worker", modelRef={"name": "llama"})), "Deployment")
    assert dep["metadata"]["annotations"][consts.ANNOTATION_BASE_MODEL] == "llama"
    assert consts.LABEL_BASE_MODEL_HASH in dep["spec"]["template"]["metadata"]["labels"]


def test_model_ref_labels_the_components_service() -> None:
    """A modelRef component's Service carries the base-model hash label, as its pods do."""
    objs = _objs(service("worker", modelRef={"name": "llama"}))
    [svc] = [o for o in kind(objs, "Service") if consts.LABEL_COMPONENT in o["metadata"].get("labels", {})]
    pod_labels = _one(objs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert svc["metadata"]["labels"][consts.LABEL_BASE_MODEL_HASH] == pod_labels[consts.LABEL_BASE_MODEL_HASH]


def test_a_dcd_generates_the_same_after_a_trip_through_its_api_model() -> None:
    """Generation reads the object's JSON form (its view): a DCD written from the pydantic model
    (camelCase, no nulls) generates what the dict it came from does."""
    raw = dcd_of(dgd({"S": service("worker")}), "S")
    written = DynamoComponentDeployment.model_validate(raw).to_dict()
    assert desired_component_objects(written, CTX) == desired_component_objects(raw, CTX)


def test_standalone_dcd() -> None:
    """A DCD without a graph still generates; its Dynamo namespace falls back to its own setting."""
    dcd = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "solo", "namespace": NS, "uid": "u"},
        "spec": {
            "componentType": "frontend",
            "dynamoNamespace": "custom",
            "extraPodSpec": {"mainContainer": {"image": "x"}},
        },
    }
    dep = _one(desired_component_objects(dcd, CTX), "Deployment")
    assert dep["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-namespace"] == "custom"


def test_component_of_finds_parent_from_owner_reference() -> None:
    """The parent graph comes from the controller ownerReference of kind DynamoGraphDeployment."""
    assert component_of(dcd_of(dgd({"S": service("worker")}, name="parent"), "S")).parent_dgd == "parent"


# --- Service ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ctype", "port"),
    [
        pytest.param(
            "frontend", {"name": "http", "port": 8000, "targetPort": "http", "protocol": "TCP"}, id="frontend"
        ),
        pytest.param(
            "worker", {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}, id="worker"
        ),
        pytest.param(
            "prefill",
            {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"},
            id="prefill",
        ),
        pytest.param(
            "decode", {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"}, id="decode"
        ),
        pytest.param(
            "planner",
            {"name": "system", "port": 9090, "targetPort": "system", "protocol": "TCP"},
            id="planner",
        ),
    ],
)
def test_service_port_per_type(ctype: str, port: Obj) -> None:
    """Each component's Service exposes one port chosen by component type."""
    assert _one(_objs(service(ctype)), "Service")["spec"]["ports"] == [port]


def test_service_selector() -> None:
    """The Service selects by component type, Dynamo namespace and component."""
    svc = _one(_objs(service("worker")), "Service")
    assert svc["spec"]["selector"] == {
        "nvidia.com/dynamo-component": "S",
        "nvidia.com/dynamo-component-type": "worker",
        "nvidia.com/dynamo-namespace": "ns1-g",
    }
    assert svc["metadata"]["labels"]["nvidia.com/dynamo-discovery-enabled"] == "true"


@pytest.mark.parametrize(
    ("ctype", "has_service"), [("frontend", True), ("worker", False), ("planner", False)]
)
def test_service_with_etcd_discovery_only_for_frontend(ctype: str, has_service: bool) -> None:
    """Without Kubernetes discovery only frontends get a Service."""
    ctx = GenContext(namespace=NS, discovery_backend="etcd")
    assert bool(kind(_objs(service(ctype), ctx), "Service")) is has_service


def test_multinode_service_selects_leaders() -> None:
    """A multinode component's Service selects only leader pods."""
    objs = _objs(service("worker", multinode={"nodeCount": 2}))
    assert _one(objs, "Service")["spec"]["selector"]["role"] == "leader"


# --- Ingress / VirtualService ------------------------------------------------------------------------

INGRESS = {"enabled": True, "host": "chat", "ingressControllerClassName": "nginx"}


@pytest.mark.parametrize(
    ("extra", "host"),
    [
        pytest.param({}, "chat.local", id="default-suffix"),
        pytest.param({"hostPrefix": "dev-"}, "dev-chat.local", id="prefix"),
        pytest.param({"hostSuffix": "example.com"}, "chat.example.com", id="suffix"),
    ],
)
def test_ingress_host(extra: Obj, host: str) -> None:
    """Host = <hostPrefix><host>.<hostSuffix or local>."""
    ing = _one(_objs(service("frontend", ingress={**INGRESS, **extra})), "Ingress")
    assert ing["spec"]["rules"][0]["host"] == host


def test_ingress_routes_to_component_service() -> None:
    """One rule: / (Prefix) → the component Service on 8000, with the given class."""
    ing = _one(_objs(service("frontend", ingress=INGRESS)), "Ingress")
    assert ing["spec"]["ingressClassName"] == "nginx"
    assert ing["spec"]["rules"][0]["http"]["paths"] == [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "g-s", "port": {"number": 8000}}}}
    ]


def test_ingress_tls() -> None:
    """tls.secretName adds a TLS block for the host."""
    ing = _one(_objs(service("frontend", ingress={**INGRESS, "tls": {"secretName": "cert"}})), "Ingress")
    assert ing["spec"]["tls"] == [{"hosts": ["chat.local"], "secretName": "cert"}]


def test_ingress_annotations_and_labels_applied() -> None:
    """IngressSpec annotations/labels land on the Ingress (upstream ignored them)."""
    ing = _one(
        _objs(service("frontend", ingress={**INGRESS, "annotations": {"a": "1"}, "labels": {"l": "2"}})),
        "Ingress",
    )
    assert ing["metadata"]["annotations"]["a"] == "1" and ing["metadata"]["labels"]["l"] == "2"


@pytest.mark.parametrize(
    "ingress",
    [
        pytest.param({**INGRESS, "enabled": False}, id="disabled"),
        pytest.param({"enabled": True, "host": "chat"}, id="no-class"),
    ],
)
def test_no_ingress(ingress: Obj) -> None:
    """No Ingress when disabled or without a controller class."""
    assert kind(_objs(service("frontend", ingress=ingress)), "Ingress") == []


def test_virtual_service() -> None:
    """useVirtualService + gateway yields an Istio VirtualService instead of an Ingress."""
    ingress = {"enabled": True, "host": "chat", "useVirtualService": True, "virtualServiceGateway": "gw"}
    objs = _objs(
        service("frontend", ingress=ingress), GenContext(namespace=NS, capabilities=Capabilities(istio=True))
    )
    vs = _one(objs, "VirtualService")
    assert kind(objs, "Ingress") == []
    assert (vs["apiVersion"], vs["spec"]["hosts"], vs["spec"]["gateways"]) == (
        "networking.istio.io/v1beta1",
        ["chat.local"],
        ["gw"],
    )
    assert vs["spec"]["http"][0]["route"] == [{"destination": {"host": "g-s", "port": {"number": 8000}}}]


def test_virtual_service_without_istio_names_missing_api() -> None:
    """Asking for a VirtualService without Istio is a MissingAPIError naming the API."""
    ingress = {"enabled": True, "host": "chat", "useVirtualService": True, "virtualServiceGateway": "gw"}
    with pytest.raises(MissingAPIError, match=r"networking\.istio\.io"):
        _objs(service("frontend", ingress=ingress), GenContext(namespace=NS))


# --- model Service --------------------------------------------------------------------------------


def test_model_service_shape() -> None:
    """Headless, selects by base-model hash, port 9090 `system`."""
    from dynamo_operator.internal.dynamo.component.workload import desired_model_service

    svc = desired_model_service("llama", NS, None)
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["ports"] == [{"name": "system", "port": 9090, "targetPort": 9090, "protocol": "TCP"}]
    assert svc["spec"]["selector"] == {
        consts.LABEL_BASE_MODEL_HASH: svc["metadata"]["labels"][consts.LABEL_BASE_MODEL_HASH]
    }
    assert svc["metadata"]["annotations"] == {consts.ANNOTATION_BASE_MODEL: "llama"}


def test_graph_dcd_does_not_emit_model_service() -> None:
    """In a graph the model Service is the graph's (one per model), not each DCD's."""
    assert all(
        o["metadata"]["name"].startswith("g-") for o in _objs(service("worker", modelRef={"name": "m"}))
    )


# --- LeaderWorkerSet -------------------------------------------------------------------------------

MULTI = {"multinode": {"nodeCount": 3}, "resources": {"limits": {"gpu": "8"}}}


@pytest.mark.parametrize("replicas", [1, 2, 5, 0])
def test_a_multinode_component_is_one_lws_carrying_its_replicas(replicas: int) -> None:
    """N replicas: one LeaderWorkerSet `<dcd>-0` with `replicas: N` (LWS scales the groups), no
    Deployment; zero replicas too is that one set, scaled to zero."""
    spec = service("worker", replicas=replicas, **MULTI)
    objs = _objs(spec)
    [lws] = kind(objs, "LeaderWorkerSet")
    assert (lws["metadata"]["name"], lws["spec"]["replicas"]) == (f"{_dcd_name(spec)}-0", replicas)
    assert kind(objs, "Deployment") == []


def test_lws_spec() -> None:
    """apiVersion leaderworkerset.x-k8s.io/v1, leader created first, group size = nodeCount."""
    spec = service("worker", **MULTI)
    lws = _one(_objs(spec), "LeaderWorkerSet")
    assert lws["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    assert (
        lws["spec"]["replicas"],
        lws["spec"]["startupPolicy"],
        lws["spec"]["leaderWorkerTemplate"]["size"],
    ) == (
        1,
        "LeaderCreated",
        3,
    )
    assert lws["metadata"]["ownerReferences"] == [_owner(spec)]


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_lws_template_labels(role: str) -> None:
    """Templates carry their role, and neither the Deployment selector label nor the per-replica
    `instance-id` (one set holds every group now)."""
    spec = service("worker", replicas=2, **MULTI)
    lws = _one(_objs(spec), "LeaderWorkerSet")
    labels = lws["spec"]["leaderWorkerTemplate"][f"{role}Template"]["metadata"]["labels"]
    assert labels["role"] == role
    assert "nvidia.com/selector" not in labels
    assert "instance-id" not in labels
    assert "instance-id" not in lws["metadata"]["labels"]


@pytest.mark.parametrize("volcano", [True, False])
def test_no_pod_group_and_the_default_scheduler_with_or_without_volcano(volcano: bool) -> None:
    """Upstream 2a6da14c makes no Volcano PodGroup for a LeaderWorkerSet and leaves its pods to the
    default scheduler, Volcano served or not."""
    ctx = GenContext(namespace=NS, capabilities=Capabilities(lws=True, volcano=volcano))
    objs = _objs(service("worker", replicas=2, **MULTI), ctx)
    assert kind(objs, "PodGroup") == []
    lwt = _one(objs, "LeaderWorkerSet")["spec"]["leaderWorkerTemplate"]
    for role in ("leaderTemplate", "workerTemplate"):
        assert "schedulerName" not in lwt[role]["spec"]
        assert "scheduling.k8s.io/group-name" not in (lwt[role]["metadata"].get("annotations") or {})


def test_multinode_without_lws_names_missing_api() -> None:
    """Without the LWS API a multinode component cannot be generated; the error names the API."""
    ctx = GenContext(namespace=NS)
    with pytest.raises(MissingAPIError, match=r"leaderworkerset\.x-k8s\.io/v1 LeaderWorkerSet") as err:
        _objs(service("worker", **MULTI), ctx)
    assert err.value.api == "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet"


@pytest.mark.parametrize(
    ("multinode", "lws", "missing"),
    [
        pytest.param(True, False, "leaderworkerset.x-k8s.io/v1 LeaderWorkerSet", id="multinode-no-lws"),
        pytest.param(True, True, None, id="multinode-lws"),
        pytest.param(False, False, None, id="single-node"),
    ],
)
def test_multinode_missing_api(multinode: bool, lws: bool, missing: str | None) -> None:
    """multinode_missing_api says which API a component lacks, for the controller's condition."""
    spec = service("worker", **MULTI) if multinode else service("worker")
    comp = component_of(dcd_of(dgd({"S": spec}), "S"))
    assert (
        multinode_missing_api(comp, GenContext(namespace=NS, capabilities=Capabilities(lws=lws))) == missing
    )


def test_every_component_object_is_hash_stamped() -> None:
    """Every child carries its content hash."""
    objs = _objs(service("frontend", ingress=INGRESS))
    assert all(consts.ANNOTATION_LAST_APPLIED_HASH in o["metadata"]["annotations"] for o in objs)
