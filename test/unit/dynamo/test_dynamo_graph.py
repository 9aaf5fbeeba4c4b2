"""DGD → DCDs, PVCs, scaling adapters, discovery RBAC, model Services."""

from __future__ import annotations

import re
from typing import Any

import pytest
from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo import (
    Capabilities,
    GenContext,
    GenerationError,
    IngressDefaults,
    adapter_selector,
    desired_dcds,
    desired_discovery_rbac,
    desired_graph_objects,
    desired_model_services,
    desired_planner_rbac,
    desired_pvcs,
    desired_scaling_adapters,
    missing_apis,
    validate_graph,
)
from dynamo_operator.internal.dynamo.graph.generate import dcd_names, graph_worker_hash
from unit.dynamo.dynamo_testlib import CTX, NS, dgd, service

Obj = dict[str, Any]
OWNER = {
    "apiVersion": "nvidia.com/v1beta1",  # the storage version, read as v1alpha1
    "kind": "DynamoGraphDeployment",
    "name": "g",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def _dcd(graph: Obj, svc: str, ctx: GenContext = CTX) -> Obj:
    [found] = [d for d in desired_dcds(graph, ctx) if d["spec"]["serviceName"] == svc]
    return found


def test_one_dcd_per_service_sorted() -> None:
    """Every service becomes one DCD; output is sorted by name; workers carry the worker hash."""
    graph = dgd({"W": service("worker"), "F": service("frontend"), "P": service("planner")})
    names = [d["metadata"]["name"] for d in desired_dcds(graph, CTX)]
    assert names[:2] == ["g-f", "g-p"]
    assert re.fullmatch(r"g-w-[0-9a-f]{8}", names[2])


def test_dcd_owner_reference() -> None:
    """A DCD is controlled by its graph."""
    assert _dcd(dgd({"F": service("frontend")}), "F")["metadata"]["ownerReferences"] == [OWNER]


def test_no_owner_reference_without_uid() -> None:
    """Offline (no UID yet) objects carry no ownerReference rather than an invalid one."""
    assert "ownerReferences" not in _dcd(dgd({"F": service("frontend")}, uid=None), "F")["metadata"]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        pytest.param("nvidia.com/dynamo-component", "Frontend", id="component"),
        pytest.param("nvidia.com/dynamo-namespace", "ns1-g", id="dynamo-namespace"),
        pytest.param("nvidia.com/dynamo-graph-deployment-name", "g", id="graph-name"),
    ],
)
@pytest.mark.parametrize("where", ["metadata", "spec"])
def test_dcd_labels(key: str, value: str, where: str) -> None:
    """DCD labels (metadata and spec) identify the service and graph."""
    dcd = _dcd(dgd({"Frontend": service("frontend")}), "Frontend")
    labels = dcd["metadata"]["labels"] if where == "metadata" else dcd["spec"]["labels"]
    assert labels[key] == value


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        pytest.param("serviceName", "Frontend", id="service-name-original-case"),
        pytest.param("dynamoNamespace", "ns1-g", id="dynamo-namespace-computed"),
        pytest.param("backendFramework", "vllm", id="backend-from-graph"),
        pytest.param("replicas", 1, id="replicas-default-1"),
    ],
)
def test_dcd_spec_fields(field: str, expected: Any) -> None:
    """The graph fills serviceName, dynamoNamespace, backendFramework and default replicas."""
    assert _dcd(dgd({"Frontend": service("frontend")}), "Frontend")["spec"][field] == expected


def test_user_dynamo_namespace_is_overwritten() -> None:
    """The deprecated dynamoNamespace input is replaced by the computed value."""
    assert (
        _dcd(dgd({"F": service("frontend", dynamoNamespace="x")}), "F")["spec"]["dynamoNamespace"] == "ns1-g"
    )


def test_global_dynamo_namespace() -> None:
    """globalDynamoNamespace puts the component in namespace `dynamo`."""
    assert (
        _dcd(dgd({"F": service("frontend", globalDynamoNamespace=True)}), "F")["spec"]["dynamoNamespace"]
        == "dynamo"
    )


def test_graph_envs_merged_under_service_envs() -> None:
    """spec.envs apply to every service; a service env of the same name wins; result sorted."""
    graph = dgd(
        {"F": service("frontend", envs=[{"name": "B", "value": "svc"}, {"name": "C", "value": "svc"}])},
        envs=[{"name": "B", "value": "graph"}, {"name": "A", "value": "graph"}],
    )
    assert _dcd(graph, "F")["spec"]["envs"] == [
        {"name": "A", "value": "graph"},
        {"name": "B", "value": "svc"},
        {"name": "C", "value": "svc"},
    ]


@pytest.mark.parametrize("key", consts.PROPAGATED_DGD_ANNOTATIONS)
def test_graph_metadata_annotations_propagate(key: str) -> None:
    """Behaviour-steering DGD annotations are copied to every service (service value wins)."""
    graph = dgd({"A": service("frontend"), "B": service("frontend", annotations={key: "svc"})})
    graph["metadata"]["annotations"] = {key: "graph", "unrelated": "x"}
    assert _dcd(graph, "A")["spec"]["annotations"] == {key: "graph"}
    assert _dcd(graph, "B")["spec"]["annotations"] == {key: "svc"}


def test_graph_spec_labels_and_annotations_fill_missing_keys() -> None:
    """DGD spec.labels/annotations are low-priority defaults for every service."""
    graph = dgd(
        {"F": service("frontend", labels={"team": "svc"}, annotations={"a": "svc"})},
        labels={"team": "graph", "tier": "graph"},
        annotations={"a": "graph", "b": "graph"},
    )
    spec = _dcd(graph, "F")["spec"]
    assert (spec["labels"]["team"], spec["labels"]["tier"]) == ("svc", "graph")
    assert spec["annotations"] == {"a": "svc", "b": "graph"}


def test_frontend_gets_default_ingress_from_operator_settings() -> None:
    """A frontend without ingress gets the operator's default ingress (host = graph name)."""
    ctx = GenContext(
        namespace=NS, ingress=IngressDefaults(controller_class_name="nginx", host_suffix="example.com")
    )
    assert _dcd(dgd({"F": service("frontend")}), "F", ctx)["spec"]["ingress"] == {
        "enabled": True,
        "host": "g",
        "ingressControllerClassName": "nginx",
        "hostSuffix": "example.com",
    }


def test_non_frontend_gets_no_default_ingress() -> None:
    """Only frontends get the default ingress."""
    ctx = GenContext(namespace=NS, ingress=IngressDefaults(controller_class_name="nginx"))
    assert "ingress" not in _dcd(dgd({"W": service("worker")}), "W", ctx)["spec"]


def test_default_ingress_without_operator_settings_is_host_only() -> None:
    """Without operator ingress settings a frontend's ingress names only its host (the graph), as
    upstream writes it; not enabled, so no Ingress is generated."""
    assert _dcd(dgd({"F": service("frontend")}), "F")["spec"]["ingress"] == {"host": "g"}


def test_frontends_own_ingress_is_kept() -> None:
    """A frontend that declares an ingress keeps it as written."""
    own = {"enabled": True, "host": "mine", "ingressControllerClassName": "nginx"}
    assert _dcd(dgd({"F": service("frontend", ingress=own)}), "F")["spec"]["ingress"] == own


# --- planner, EPP -------------------------------------------------------------------------------------


def test_planner_dcd_names_the_planner_service_account() -> None:
    """The planner's DCD spec names the planner ServiceAccount (its binding lets it scale the graph)."""
    spec = _dcd(dgd({"P": service("planner")}), "P")["spec"]
    assert spec["extraPodSpec"]["serviceAccountName"] == "planner-serviceaccount"


def test_planner_keeps_a_service_account_the_user_chose() -> None:
    """A ServiceAccount set on the planner's extraPodSpec stays the user's choice."""
    graph = dgd({"P": service("planner", extraPodSpec={"serviceAccountName": "mine"})})
    assert _dcd(graph, "P")["spec"]["extraPodSpec"]["serviceAccountName"] == "mine"


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        pytest.param(
            {"plugins": []},
            {
                "apiVersion": "inference.networking.x-k8s.io/v1alpha1",
                "kind": "EndpointPickerConfig",
                "plugins": [],
            },
            id="typed",
        ),
        pytest.param(
            {"apiVersion": "example.com/v9", "kind": "Other", "plugins": []},
            {"apiVersion": "example.com/v9", "kind": "Other", "plugins": []},
            id="users-type-wins",
        ),
    ],
)
def test_inline_epp_config_is_typed_in_the_dcd(config: Obj, expected: Obj) -> None:
    """An inline eppConfig.config reaches the DCD with its apiVersion/kind written out."""
    graph = dgd({"E": service("epp", eppConfig={"config": config})})
    assert _dcd(graph, "E")["spec"]["eppConfig"] == {"config": expected}


def test_epp_config_map_ref_is_copied_as_written() -> None:
    """An eppConfig naming a ConfigMap is copied unchanged."""
    epp = {"configMapRef": {"name": "mine", "key": "k"}}
    assert _dcd(dgd({"E": service("epp", eppConfig=epp)}), "E")["spec"]["eppConfig"] == epp


# --- worker hash ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ctype", ["worker", "prefill", "decode"])
def test_worker_dcds_are_named_and_labelled_with_one_worker_hash(ctype: str) -> None:
    """Worker, prefill and decode DCDs are `<dgd>-<svc>-<hash>` and labelled with the hash (metadata and
    spec), one hash for every worker of the graph."""
    graph = dgd({"A": service(ctype), "B": service("worker"), "F": service("frontend")})
    wh = graph_worker_hash(graph)
    for svc in ("A", "B"):
        dcd = _dcd(graph, svc)
        assert dcd["metadata"]["name"] == f"g-{svc.lower()}-{wh}"
        assert dcd["metadata"]["labels"][consts.LABEL_WORKER_HASH] == wh
        assert dcd["spec"]["labels"][consts.LABEL_WORKER_HASH] == wh


@pytest.mark.parametrize("ctype", ["frontend", "planner", "epp", "main", ""])
def test_other_components_carry_no_worker_hash(ctype: str) -> None:
    """Components that are not workers keep `<dgd>-<svc>` and get no worker-hash label."""
    spec = service(ctype, eppConfig={"config": {}}) if ctype == "epp" else service(ctype)
    dcd = _dcd(dgd({"S": spec, "W": service("worker")}), "S")
    assert dcd["metadata"]["name"] == "g-s"
    assert consts.LABEL_WORKER_HASH not in dcd["spec"]["labels"]


@pytest.mark.parametrize(
    ("edit", "renamed"),
    [
        pytest.param({"envs": [{"name": "X", "value": "1"}]}, True, id="env-renames"),
        pytest.param({"extraPodSpec": {"mainContainer": {"image": "other:1"}}}, True, id="image-renames"),
        pytest.param({"replicas": 5}, False, id="replicas-keep"),
        pytest.param({"labels": {"team": "a"}}, False, id="labels-keep"),
        pytest.param({"annotations": {"note": "x"}}, False, id="annotations-keep"),
        pytest.param({"scalingAdapter": {"enabled": True}}, False, id="adapter-keep"),
        pytest.param({"modelRef": {"name": "m"}}, False, id="model-ref-keep"),
        pytest.param({"subComponentType": "decode"}, False, id="sub-type-keep"),
    ],
)
def test_worker_names_change_exactly_when_pods_would(edit: Obj, renamed: bool) -> None:
    """Edits that reach the pod template rename worker DCDs (a new set rolls in); scaling, metadata,
    adapter and model-reference edits keep the names."""
    before = dcd_names(dgd({"W": service("worker"), "F": service("frontend")}))
    after = dcd_names(dgd({"W": service("worker", **edit), "F": service("frontend")}))
    assert (before["W"] != after["W"]) is renamed
    assert before["F"] == after["F"]


def test_frontend_edit_keeps_worker_names() -> None:
    """Only worker specs enter the worker hash."""
    before = dcd_names(dgd({"W": service("worker"), "F": service("frontend")}))
    after = dcd_names(
        dgd({"W": service("worker"), "F": service("frontend", envs=[{"name": "X", "value": "1"}])})
    )
    assert before == after


# --- PVCs ---------------------------------------------------------------------------------------------

PVC = {
    "name": "models",
    "create": True,
    "size": "100Gi",
    "storageClass": "fast",
    "volumeAccessMode": "ReadWriteMany",
}


def test_pvc_created_when_create_true() -> None:
    """create: true yields an owned PVC with the given size, class and access mode."""
    [pvc] = desired_pvcs(dgd({"F": service("frontend")}, pvcs=[PVC]), CTX)
    assert pvc["metadata"]["ownerReferences"] == [OWNER]
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": "100Gi"}},
        "storageClassName": "fast",
    }


@pytest.mark.parametrize("create", [False, None])
def test_pvc_never_created_when_not_asked(create: bool | None) -> None:
    """PVCs the user brings (create false/absent) are never generated, hence never owned or deleted."""
    pvc = {**PVC, "create": create}
    assert desired_pvcs(dgd({"F": service("frontend")}, pvcs=[pvc]), CTX) == []


@pytest.mark.parametrize("missing", ["size", "storageClass", "volumeAccessMode"])
def test_pvc_create_requires_fields(missing: str) -> None:
    """create: true without size/storageClass/volumeAccessMode is refused, naming the field."""
    pvc = {k: v for k, v in PVC.items() if k != missing}
    with pytest.raises(GenerationError, match=rf"spec\.pvcs\[0\]\.{missing}"):
        desired_pvcs(dgd({"F": service("frontend")}, pvcs=[pvc]), CTX)


# --- scaling adapters -----------------------------------------------------------------------------


def test_scaling_adapter_for_enabled_services_only() -> None:
    """An adapter `<dgd>-<lower(svc)>` exists only for services with scalingAdapter.enabled."""
    graph = dgd(
        {
            "Decode": service("decode", replicas=3, scalingAdapter={"enabled": True}),
            "F": service("frontend", scalingAdapter={"enabled": False}),
        }
    )
    [adapter] = desired_scaling_adapters(graph, CTX)
    assert adapter["metadata"]["name"] == "g-decode"
    assert adapter["spec"] == {"replicas": 3, "dgdRef": {"name": "g", "componentName": "Decode"}}
    assert adapter["metadata"]["labels"] == {
        "nvidia.com/dynamo-component": "Decode",
        "nvidia.com/dynamo-graph-deployment-name": "g",
    }
    assert adapter["metadata"]["ownerReferences"] == [OWNER]


def test_scaling_adapter_default_replicas() -> None:
    """Adapter replicas default to 1."""
    [adapter] = desired_scaling_adapters(dgd({"W": service("worker", scalingAdapter={"enabled": True})}), CTX)
    assert adapter["spec"]["replicas"] == 1


def test_adapter_selector() -> None:
    """The scale-subresource selector string names graph and component."""
    assert (
        adapter_selector("g", "W")
        == "nvidia.com/dynamo-graph-deployment-name=g,nvidia.com/dynamo-component=W"
    )


# --- discovery RBAC and model Services -------------------------------------------------------------


def test_discovery_rbac_objects() -> None:
    """Kubernetes discovery needs a ServiceAccount, Role and RoleBinding named after the graph."""
    objs = desired_discovery_rbac(dgd({"F": service("frontend")}), CTX)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("ServiceAccount", "g-k8s-service-discovery"),
        ("Role", "g-k8s-service-discovery-role"),
        ("RoleBinding", "g-k8s-service-discovery-binding"),
    ]
    assert all(o["metadata"]["ownerReferences"] == [OWNER] for o in objs)


def test_no_discovery_rbac_with_etcd() -> None:
    """With etcd discovery no RBAC is generated."""
    assert (
        desired_discovery_rbac(
            dgd({"F": service("frontend")}), GenContext(namespace=NS, discovery_backend="etcd")
        )
        == []
    )


ETCD = {consts.ANNOTATION_DISCOVERY_BACKEND: "etcd"}
KUBE = {consts.ANNOTATION_DISCOVERY_BACKEND: "kubernetes"}


def test_a_graph_annotated_for_etcd_gets_no_discovery_rbac() -> None:
    graph = dgd({"F": service("frontend")})
    graph["metadata"]["annotations"] = dict(ETCD)
    assert desired_discovery_rbac(graph, CTX) == []


def test_a_graph_whose_spec_annotations_say_etcd_gets_no_discovery_rbac() -> None:
    assert desired_discovery_rbac(dgd({"F": service("frontend")}, annotations=dict(ETCD)), CTX) == []


def test_one_service_on_kubernetes_discovery_in_an_etcd_graph_gets_discovery_rbac() -> None:
    graph = dgd({"F": service("frontend", annotations=dict(KUBE)), "W": service("worker")})
    graph["metadata"]["annotations"] = dict(ETCD)
    assert len(desired_discovery_rbac(graph, CTX)) == 3


def test_a_service_annotated_for_etcd_beside_one_on_kubernetes_still_gets_discovery_rbac() -> None:
    graph = dgd({"F": service("frontend", annotations=dict(ETCD)), "W": service("worker")})
    assert len(desired_discovery_rbac(graph, CTX)) == 3


def test_services_all_annotated_for_etcd_get_no_discovery_rbac() -> None:
    graph = dgd(
        {"F": service("frontend", annotations=dict(ETCD)), "W": service("worker", annotations=dict(ETCD))}
    )
    assert desired_discovery_rbac(graph, CTX) == []


def test_one_model_service_per_distinct_model() -> None:
    """Services serving the same base model share one headless Service."""
    graph = dgd(
        {
            "A": service("worker", modelRef={"name": "llama"}),
            "B": service("worker", modelRef={"name": "llama"}),
            "C": service("worker", modelRef={"name": "qwen"}),
        }
    )
    assert len(desired_model_services(graph, CTX)) == 2


# --- whole graph, validation ------------------------------------------------------------------------


def test_graph_objects_order() -> None:
    """Objects come in apply order: PVCs, RBAC, model Services, DCDs, adapters."""
    graph = dgd(
        {"W": service("worker", modelRef={"name": "m"}, scalingAdapter={"enabled": True})},
        pvcs=[PVC],
    )
    kinds = [o["kind"] for o in desired_graph_objects(graph, CTX)]
    assert kinds == [
        "PersistentVolumeClaim",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Service",
        "DynamoComponentDeployment",
        "DynamoGraphDeploymentScalingAdapter",
    ]


def test_every_graph_object_is_hash_stamped() -> None:
    """Every desired object carries its content hash."""
    graph = dgd(
        {"W": service("worker", modelRef={"name": "m"}, scalingAdapter={"enabled": True})}, pvcs=[PVC]
    )
    assert all(
        consts.ANNOTATION_LAST_APPLIED_HASH in o["metadata"]["annotations"]
        for o in desired_graph_objects(graph, CTX)
    )


@pytest.mark.parametrize(
    ("graph", "field"),
    [
        pytest.param(dgd({}), "spec.services", id="no-services"),
        pytest.param(
            dgd({"W": service("worker", volumeMounts=[{"name": "x", "mountPoint": "/x"}])}),
            r"volumeMounts\[name=x\]",
            id="undeclared-pvc",
        ),
        pytest.param(
            dgd({"W": service("worker", multinode={"nodeCount": 1})}),
            "multinode.nodeCount",
            id="node-count-1",
        ),
        pytest.param(
            {"kind": "DynamoGraphDeployment", "metadata": {}, "spec": {}}, "metadata.name", id="no-name"
        ),
    ],
)
def test_validate_graph_names_field(graph: Obj, field: str) -> None:
    """Semantic errors name the offending field."""
    with pytest.raises(GenerationError, match=field):
        validate_graph(graph, CTX)


@pytest.mark.parametrize(
    ("spec", "caps", "field"),
    [
        pytest.param(service("worker", multinode={"nodeCount": 2}), {}, "S.multinode", id="multinode-no-lws"),
        pytest.param(
            service("frontend", ingress={"enabled": True, "host": "h", "useVirtualService": True}),
            {},
            "S.ingress.useVirtualService",
            id="vs-no-istio",
        ),
        pytest.param(service("epp", eppConfig={"config": {}}), {}, "S.componentType", id="epp-no-pool-api"),
    ],
)
def test_missing_apis_name_service_and_api(spec: Obj, caps: dict[str, bool], field: str) -> None:
    """missing_apis lists, per service, the optional API it needs that the cluster lacks."""
    [err] = missing_apis(dgd({"S": spec}), GenContext(namespace=NS, capabilities=Capabilities(**caps)))
    assert err.field == f"spec.services.{field}"


def test_no_missing_apis_when_served() -> None:
    """Nothing is missing when the APIs are there."""
    caps = Capabilities(lws=True, istio=True, gateway_inference_extension=True)
    spec = {"W": service("worker", multinode={"nodeCount": 2}), "E": service("epp", eppConfig={"config": {}})}
    assert missing_apis(dgd(spec), GenContext(namespace=NS, capabilities=caps)) == []


def test_planner_rbac_only_with_planner() -> None:
    """The shared planner SA is generated only for graphs with a planner, without an owner."""
    assert desired_planner_rbac(dgd({"W": service("worker")}), CTX) == []
    [sa] = desired_planner_rbac(dgd({"P": service("planner")}), CTX)
    assert (sa["kind"], sa["metadata"]["name"]) == ("ServiceAccount", "planner-serviceaccount")
    assert "ownerReferences" not in sa["metadata"]


def test_planner_rbac_binds_configured_cluster_role() -> None:
    """With a planner ClusterRole configured, a RoleBinding binds the SA to it."""
    ctx = GenContext(namespace=NS, planner_cluster_role="planner-role")
    _, binding = desired_planner_rbac(dgd({"P": service("planner")}), ctx)
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "planner-role",
    }
