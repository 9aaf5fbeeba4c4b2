"""The API server refuses bad Dynamo objects with a message naming the field (CRD schema + CEL rules).

One invalid object per rule (table), immutability on update, and valid edits that must still pass.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from testsupport.cluster import Kubectl, KubectlError

pytestmark = pytest.mark.cluster

Obj = dict[str, Any]


# Short names as kubectl knows them -> the collections; the kinds' own collections by kind.
PLURALS = {
    "dgd": "dynamographdeployments",
    "dcd": "dynamocomponentdeployments",
    "dm": "dynamomodels",
    "dgdsa": "dynamographdeploymentscalingadapters",
    "dgdr": "dynamographdeploymentrequests",
}
BY_KIND = {
    "DynamoGraphDeployment": "dgd",
    "DynamoComponentDeployment": "dcd",
    "DynamoModel": "dm",
    "DynamoGraphDeploymentScalingAdapter": "dgdsa",
    "DynamoGraphDeploymentRequest": "dgdr",
}
VERSION = "/apis/nvidia.com/v1alpha1"


def create(kubectl: Kubectl, ns: str, obj: Obj) -> str:
    """Create one object in `ns` with strict field validation, as `kubectl create` does. Straight to
    the API server where the kubeconfig allows it: the refusal is the server's own message either way,
    and a kubectl process per case cost the suite a minute of CPU."""
    if (direct := kubectl.direct) is None:
        return kubectl("create", "-n", ns, "-f", "-", stdin=json.dumps(obj))
    path = f"{VERSION}/namespaces/{ns}/{PLURALS[BY_KIND[obj['kind']]]}?fieldValidation=Strict"
    return direct.kubectl_like(["create", obj["kind"]], "POST", path, obj, content_type="application/json")


def patch(kubectl: Kubectl, ns: str, resource: str, body: Obj, *extra: str) -> str:
    """A merge patch of `resource` (`dgd/graph`), as `kubectl patch --type=merge` sends it; `extra`
    may name the status subresource."""
    if (direct := kubectl.direct) is None:
        return kubectl("patch", "-n", ns, resource, "--type=merge", "-p", json.dumps(body), *extra)
    short, name = resource.split("/")
    subresource = "/status" if "--subresource=status" in extra else ""
    path = f"{VERSION}/namespaces/{ns}/{PLURALS[short]}/{name}{subresource}?fieldValidation=Strict"
    argv = ["patch", resource, *extra]
    return direct.kubectl_like(argv, "PATCH", path, body, content_type="application/merge-patch+json")


def dgd(name: str = "graph") -> Obj:
    """A valid two-service graph."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name},
        "spec": {
            "backendFramework": "vllm",
            "pvcs": [
                {
                    "name": "cache",
                    "create": True,
                    "size": "10Gi",
                    "storageClass": "standard",
                    "volumeAccessMode": "ReadWriteOnce",
                }
            ],
            "services": {
                "Frontend": {"componentType": "frontend", "replicas": 1},
                "Worker": {
                    "componentType": "worker",
                    "replicas": 1,
                    "volumeMounts": [{"name": "cache", "mountPoint": "/cache"}],
                    "extraPodSpec": {"mainContainer": {"image": "registry.example/w:1"}},
                },
            },
        },
    }


def dcd(name: str = "component") -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": name},
        "spec": {"backendFramework": "vllm", "componentType": "worker", "replicas": 1},
    }


def dm(name: str = "model") -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoModel",
        "metadata": {"name": name},
        "spec": {"modelName": "org/model-lora", "baseModelName": "org/model", "modelType": "base"},
    }


def dgdsa(name: str = "adapter") -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentScalingAdapter",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "dgdRef": {"name": "graph", "serviceName": "Worker"}},
    }


def dgdr(name: str = "request") -> Obj:
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeploymentRequest",
        "metadata": {"name": name},
        "spec": {
            "model": "Qwen/Qwen3-0.6B",
            "backend": "vllm",
            "profilingConfig": {"profilerImage": "registry.example/p:1", "config": {"sla": {"ttft": 200}}},
        },
    }


def svc(obj: Obj, name: str = "Worker") -> Obj:
    service: Obj = obj["spec"]["services"][name]
    return service


def _set(obj: Obj, path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = obj
    for key in parents:
        node = node.setdefault(key, {})
    node[leaf] = value


def edit(
    base: Callable[[], Obj],
    *changes: tuple[str, Any],
    fn: Callable[[Obj], None] | None = None,
    then: Callable[[Obj], None] | None = None,
) -> Obj:
    """`base()` with dotted-path assignments (None deletes) and optional functions applied in order."""
    obj = base()
    for path, value in changes:
        if value is None:
            *parents, leaf = path.split(".")
            node = obj
            for key in parents:
                node = node[key]
            del node[leaf]
        else:
            _set(obj, path, copy.deepcopy(value))
    for step in (fn, then):
        if step is not None:
            step(obj)
    return obj


def _many_services(obj: Obj) -> None:
    obj["spec"]["services"] = {f"s{i}": {"componentType": "worker"} for i in range(26)}


# The smallest inline picker config the schema accepts (plugins and schedulingProfiles are required).
EPP_CONFIG: Obj = {"plugins": [], "schedulingProfiles": []}


def _epp(name: str = "Epp", **extra: Any) -> Callable[[Obj], None]:
    def apply(obj: Obj) -> None:
        obj["spec"]["services"][name] = {"componentType": "epp", **extra}

    return apply


def _services(*keys: str) -> Callable[[Obj], None]:
    """Replace the services with one worker per key."""

    def apply(obj: Obj) -> None:
        obj["spec"]["services"] = {key: {"componentType": "worker"} for key in keys}

    return apply


def _mount(name: str, **extra: Any) -> Callable[[Obj], None]:
    def apply(obj: Obj) -> None:
        svc(obj)["volumeMounts"] = [{"name": name, **extra}]

    return apply


INVALID = [
    # --- DynamoGraphDeployment -------------------------------------------------------------------------
    pytest.param(
        edit(dgd, ("spec.services", {})), "spec.services", "at least one service", id="dgd-no-services"
    ),
    pytest.param(
        edit(dgd, ("spec.backendFramework", "onnx")),
        "spec.backendFramework",
        "Unsupported value",
        id="dgd-backend-enum",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(replicas=-1)),
        "spec.services.Worker.replicas",
        "greater than or equal to 0",
        id="dgd-negative-replicas",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(replica=2)),
        "spec.services.Worker.replica",
        "unknown field",
        id="dgd-typo-is-refused",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o)["extraPodSpec"].update(tolerations=[{"keyy": "gpu"}])),
        "extraPodSpec.tolerations[0].keyy",
        "unknown field",
        id="dgd-pod-spec-typo-is-refused",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o, "Frontend").update(ingress={"enabled": True})),
        "spec.services[Frontend].ingress.host",
        "host is required when ingress is enabled",
        id="ingress-host-required",
    ),
    pytest.param(
        edit(dgd, fn=_mount("cache")),
        "spec.services[Worker].volumeMounts[0].mountPoint",
        "mountPoint is required unless useAsCompilationCache",
        id="mount-point-required",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(sharedMemory={})),
        "spec.services[Worker].sharedMemory.size",
        "size is required when shared memory is enabled",
        id="shared-memory-size-required",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(sharedMemory={"disabled": True, "size": "1Gi"})),
        "spec.services[Worker].sharedMemory.size",
        "size must not be set when shared memory is disabled",
        id="shared-memory-size-forbidden-when-disabled",
    ),
    pytest.param(
        edit(
            dgd,
            (
                "spec.pvcs",
                [{"name": "cache", "create": True, "size": "1Gi", "volumeAccessMode": "ReadWriteOnce"}],
            ),
        ),
        "spec.pvcs[0].storageClass",
        "storageClass is required when create is true",
        id="pvc-create-needs-storage-class",
    ),
    pytest.param(
        edit(
            dgd,
            (
                "spec.pvcs",
                [{"name": "cache", "create": True, "storageClass": "s", "volumeAccessMode": "ReadWriteOnce"}],
            ),
        ),
        "spec.pvcs[0].size",
        "size is required when create is true",
        id="pvc-create-needs-size",
    ),
    pytest.param(
        edit(dgd, ("spec.pvcs", [{"name": "cache", "create": True, "storageClass": "s", "size": "1Gi"}])),
        "spec.pvcs[0].volumeAccessMode",
        "volumeAccessMode is required when create is true",
        id="pvc-create-needs-access-mode",
    ),
    pytest.param(
        edit(dgd, ("spec.pvcs", [{"name": "cache"}, {"name": "cache"}])),
        "spec.pvcs[1]",
        "Duplicate value",
        id="pvc-names-unique",
    ),
    pytest.param(
        edit(dgd, fn=_mount("undeclared", mountPoint="/m")),
        "spec.services",
        "must name a PVC declared in spec.pvcs",
        id="mount-names-declared-pvc",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"strategy": {"type": "Sequential"}})),
        "spec.restart.id",
        "Required value",
        id="restart-id-required",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": ""})),
        "spec.restart.id",
        "at least 1 chars long",
        id="restart-id-not-empty",
    ),
    pytest.param(
        edit(
            dgd,
            ("spec.restart", {"id": "r1", "strategy": {"type": "Parallel", "order": ["Frontend", "Worker"]}}),
        ),
        "spec.restart.strategy.order",
        "order must not be set when type is Parallel",
        id="restart-order-forbidden-for-parallel",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": "r1", "strategy": {"order": ["Worker", "Worker"]}})),
        "spec.restart.strategy.order[1]",
        "Duplicate value",
        id="restart-order-unique",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": "r1", "strategy": {"order": ["Worker"]}})),
        "spec.restart.strategy.order",
        "restart order must name every service exactly once",
        id="restart-order-complete",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": "r1", "strategy": {"order": ["Worker", "Ghost"]}})),
        "spec.restart.strategy.order",
        "restart order must name every service exactly once",
        id="restart-order-existing-services",
    ),
    pytest.param(
        edit(dgd, fn=_epp()),
        "spec.services[Epp].eppConfig",
        "eppConfig is required for an epp component",
        id="epp-config-required",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"config": EPP_CONFIG, "configMapRef": {"name": "c", "key": "k"}})),
        "spec.services[Epp].eppConfig",
        "exactly one of configMapRef and config",
        id="epp-config-xor-configmap",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={})),
        "spec.services[Epp].eppConfig",
        "exactly one of configMapRef and config",
        id="epp-config-one-required",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"config": {"plugins": []}}, replicas=1)),
        "spec.services.Epp.eppConfig.config.schedulingProfiles",
        "Required value",
        id="epp-inline-config-needs-scheduling-profiles",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"configMapRef": {"name": "", "key": "k"}})),
        "spec.services[Epp].eppConfig.configMapRef.name",
        "configMapRef.name is required",
        id="epp-configmap-name-required",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"config": EPP_CONFIG}, multinode={"nodeCount": 2})),
        "spec.services[Epp].multinode",
        "an epp component cannot be multinode",
        id="epp-single-node",
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"config": EPP_CONFIG}, replicas=2)),
        "spec.services[Epp].replicas",
        "an epp component must have exactly 1 replica",
        id="epp-one-replica",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(multinode={"nodeCount": 1})),
        "spec.services.Worker.multinode.nodeCount",
        "greater than or equal to 2",
        id="multinode-at-least-two-nodes",
    ),
    pytest.param(
        edit(dgd, ("metadata.name", "g" * 46)),
        "spec.services",
        "metadata.name plus each spec.services key must be at most 53",
        id="graph-plus-service-name-too-long",
    ),
    pytest.param(
        edit(dgd, ("metadata.name", "g" * 40), fn=lambda o: svc(o).update(multinode={"nodeCount": 2})),
        "spec.services",
        "(45 for multinode services)",
        id="graph-plus-multinode-service-name-too-long",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: o["spec"]["services"].update(bad_name={"componentType": "worker"})),
        "spec.services",
        "service names must be at most 63 characters",
        id="service-name-charset",
    ),
    pytest.param(
        edit(dgd, fn=_many_services), "spec.services", "must have at most 25", id="at-most-25-services"
    ),
    pytest.param(
        edit(dgd, ("spec.pvcs", [{"name": f"p{i}"} for i in range(101)])),
        "spec.pvcs",
        "must have at most 100 items",
        id="at-most-100-pvcs",
    ),
    # --- DynamoComponentDeployment ---------------------------------------------------------------------
    pytest.param(
        edit(dcd, ("metadata.name", "c" * 64)),
        "",
        "metadata.name must be at most 63 characters",
        id="dcd-name-length",
    ),
    pytest.param(
        edit(dcd, ("metadata.name", "c" * 56), ("spec.multinode", {"nodeCount": 2})),
        "",
        "(55 for a multinode component)",
        id="dcd-multinode-name-length",
    ),
    pytest.param(
        edit(dcd, ("spec.ingress", {"enabled": True})),
        "spec.ingress.host",
        "host is required when ingress is enabled",
        id="dcd-shared-rules-apply",
    ),
    pytest.param(
        edit(dcd, ("spec.backendFramework", "tensorflow")),
        "spec.backendFramework",
        "Unsupported value",
        id="dcd-backend-enum",
    ),
    # --- DynamoModel -----------------------------------------------------------------------------------
    pytest.param(
        edit(dm, ("spec.baseModelName", None)), "spec.baseModelName", "Required value", id="dm-base-required"
    ),
    pytest.param(
        edit(dm, ("spec.modelName", None)), "spec.modelName", "Required value", id="dm-name-required"
    ),
    pytest.param(
        edit(dm, ("spec.modelType", "lora")),
        "spec.source",
        "a lora model needs source.uri",
        id="dm-lora-needs-source",
    ),
    pytest.param(
        edit(dm, ("spec.modelType", "lora"), ("spec.source", {"uri": "https://example/m"})),
        "spec.source",
        "starting with s3:// or hf://",
        id="dm-lora-uri-scheme",
    ),
    pytest.param(
        edit(dm, ("spec.modelType", "qlora")), "spec.modelType", "Unsupported value", id="dm-type-enum"
    ),
    # --- DynamoGraphDeploymentScalingAdapter -----------------------------------------------------------
    pytest.param(
        edit(dgdsa, ("spec.replicas", -1)), "spec.replicas", "greater than or equal to 0", id="dgdsa-min-0"
    ),
    pytest.param(
        edit(dgdsa, ("spec.replicas", None)), "spec.replicas", "Required value", id="dgdsa-replicas-required"
    ),
    pytest.param(
        edit(dgdsa, ("spec.dgdRef.serviceName", "")),
        "spec.dgdRef.serviceName",
        "at least 1 chars long",
        id="dgdsa-service-name-required",
    ),
    # --- generated names: unique and valid for every accepted graph -------------------------------------
    pytest.param(
        edit(dgd, fn=lambda o: o["spec"]["services"].update(frontend={"componentType": "frontend"})),
        "spec.services",
        "service names must stay distinct once lower-cased",
        id="dgd-keys-differing-in-case",
    ),
    pytest.param(
        edit(dgd, fn=_services("Cache.A", "Cache-A", "cache-a")),
        "spec.services",
        "service names must stay distinct once lower-cased",
        id="dgd-keys-differing-in-dot-versus-dash",
    ),
    pytest.param(
        edit(dgd, fn=_services("a..b")),
        "spec.services",
        "separated by single dots",
        id="dgd-key-with-empty-part",
    ),
    pytest.param(
        edit(dgd, fn=_services("a.-b")),
        "spec.services",
        "each part starting and ending with a letter or digit",
        id="dgd-key-part-starting-with-dash",
    ),
    pytest.param(
        edit(
            dgd,
            fn=_epp(eppConfig={"config": EPP_CONFIG}, replicas=1),
            then=_epp(name="Epp2", eppConfig={"config": EPP_CONFIG}),
        ),
        "spec.services",
        "at most one service may have componentType epp",
        id="dgd-two-epps",
    ),
    pytest.param(
        edit(dgd, ("metadata.name", "1graph")),
        "metadata.name",
        "must start with a letter",
        id="dgd-name-starting-with-a-digit",
    ),
    # --- DynamoGraphDeploymentRequest ------------------------------------------------------------------
    pytest.param(edit(dgdr, ("spec.model", None)), "spec.model", "Required value", id="dgdr-model-required"),
    pytest.param(
        edit(dgdr, ("spec.backend", "onnx")), "spec.backend", "Unsupported value", id="dgdr-backend-enum"
    ),
    pytest.param(
        edit(dgdr, ("spec.profilingConfig.profilerImage", None)),
        "spec.profilingConfig.profilerImage",
        "Required value",
        id="dgdr-profiler-image-required",
    ),
]


@pytest.mark.parametrize(("obj", "field", "message"), INVALID)
def test_invalid_object_is_refused_naming_the_field(
    *, crds: None, kubectl: Kubectl, ns: str, obj: Obj, field: str, message: str
) -> None:
    """Creating the object fails; the error names the offending field and says what is wrong."""
    with pytest.raises(KubectlError) as refused:
        create(kubectl, ns, obj)
    error = refused.value.stderr
    assert field in error, error
    assert message in error, error
    assert "is invalid" in error or "unknown field" in error, error


VALID = [
    pytest.param(dgd(), id="dgd"),
    pytest.param(
        edit(dgd, fn=_mount("cache", useAsCompilationCache=True)), id="dgd-compilation-cache-default-path"
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": "r1", "strategy": {"order": ["Worker", "Frontend"]}})),
        id="dgd-restart-order",
    ),
    pytest.param(
        edit(dgd, ("spec.restart", {"id": "r1", "strategy": {"type": "Parallel"}})), id="dgd-parallel"
    ),
    pytest.param(
        edit(dgd, fn=_epp(eppConfig={"config": EPP_CONFIG}, replicas=1)), id="dgd-epp-inline-config"
    ),
    # "Frontend" has 8 characters: 45 + 8 = 53; the 6-character multinode "Worker" allows 45 - 6 = 39.
    pytest.param(edit(dgd, ("metadata.name", "g" * 45)), id="dgd-longest-name-with-frontend"),
    pytest.param(
        edit(dgd, ("metadata.name", "g" * 39), fn=lambda o: svc(o).update(multinode={"nodeCount": 2})),
        id="dgd-longest-name-with-multinode-worker",
    ),
    pytest.param(
        edit(dgd, fn=lambda o: svc(o).update(sharedMemory={"disabled": True})), id="dgd-shm-disabled"
    ),
    pytest.param(edit(dgd, fn=_services("Cache.A", "cache.b", "a.b-c.d")), id="dgd-dotted-distinct-keys"),
    pytest.param(edit(dgd, ("metadata.name", "g.1-x")), id="dgd-dotted-name"),
    pytest.param(dcd(), id="dcd"),
    pytest.param(edit(dcd, ("metadata.name", "c" * 63)), id="dcd-longest-name"),
    pytest.param(dm(), id="dm-base"),
    pytest.param(
        edit(dm, ("spec.modelType", "lora"), ("spec.source", {"uri": "s3://bucket/lora"})), id="dm-lora-s3"
    ),
    pytest.param(dgdsa(), id="dgdsa"),
    pytest.param(dgdr(), id="dgdr"),
]


@pytest.mark.parametrize("obj", VALID)
def test_valid_object_is_accepted(crds: None, kubectl: Kubectl, ns: str, obj: Obj) -> None:
    create(kubectl, ns, obj)


def test_graph_defaults_are_applied_by_the_api_server(crds: None, kubectl: Kubectl, ns: str) -> None:
    """CRD defaults match the spec: nodeCount 2, restart strategy Sequential, compilation cache false."""
    obj = edit(dgd, ("spec.restart", {"id": "r1", "strategy": {}}), fn=lambda o: svc(o).update(multinode={}))
    obj["metadata"]["name"] = "defaults"
    create(kubectl, ns, obj)
    stored = kubectl.json("get", "-n", ns, "dgd", "defaults")
    worker = stored["spec"]["services"]["Worker"]
    assert worker["multinode"] == {"nodeCount": 2}
    assert worker["volumeMounts"][0]["useAsCompilationCache"] is False
    assert stored["spec"]["restart"]["strategy"]["type"] == "Sequential"


UPDATES_REFUSED = [
    pytest.param(
        dgd,
        "dgd/graph",
        {"spec": {"backendFramework": "sglang"}},
        "spec.backendFramework",
        "backendFramework is immutable",
        id="dgd-backend-immutable",
    ),
    pytest.param(
        dgd,
        "dgd/graph",
        {"spec": {"services": {"Worker": {"multinode": {"nodeCount": 2}}}}},
        "spec.services",
        "cannot switch between single-node and multinode",
        id="dgd-single-to-multinode",
    ),
    pytest.param(
        dcd,
        "dcd/component",
        {"spec": {"backendFramework": "trtllm"}},
        "spec.backendFramework",
        "backendFramework is immutable",
        id="dcd-backend-immutable",
    ),
    pytest.param(
        dm,
        "dm/model",
        {"spec": {"modelType": "adapter"}},
        "spec.modelType",
        "modelType is immutable",
        id="dm-type-immutable",
    ),
    pytest.param(
        dm,
        "dm/model",
        {"spec": {"baseModelName": "other"}},
        "spec.baseModelName",
        "baseModelName is immutable",
        id="dm-base-immutable",
    ),
]


@pytest.mark.parametrize(("base", "resource", "body", "field", "message"), UPDATES_REFUSED)
def test_immutable_field_change_is_refused(
    *,
    crds: None,
    kubectl: Kubectl,
    ns: str,
    base: Callable[[], Obj],
    resource: str,
    body: Obj,
    field: str,
    message: str,
) -> None:
    create(kubectl, ns, base())
    with pytest.raises(KubectlError) as refused:
        patch(kubectl, ns, resource, body)
    assert field in refused.value.stderr and message in refused.value.stderr, refused.value.stderr


def test_removing_the_backend_framework_is_refused(crds: None, kubectl: Kubectl, ns: str) -> None:
    create(kubectl, ns, dgd())
    with pytest.raises(KubectlError, match="backendFramework is immutable"):
        kubectl(
            "patch",
            "-n",
            ns,
            "dgd/graph",
            "--type=json",
            "-p",
            '[{"op":"remove","path":"/spec/backendFramework"}]',
        )


UPDATES_ACCEPTED = [
    pytest.param({"spec": {"services": {"Planner": {"componentType": "planner"}}}}, id="dgd-add-service"),
    pytest.param({"spec": {"services": {"Frontend": None}}}, id="dgd-remove-service"),
    pytest.param({"spec": {"services": {"Worker": {"replicas": 4}}}}, id="dgd-scale-service"),
    pytest.param(
        {
            "spec": {
                "services": {"Worker": {"extraPodSpec": {"mainContainer": {"image": "registry.example/w:2"}}}}
            }
        },
        id="dgd-new-image",
    ),
    pytest.param({"spec": {"restart": {"id": "restart-1"}}}, id="dgd-restart"),
]


@pytest.mark.parametrize("body", UPDATES_ACCEPTED)
def test_valid_graph_edit_is_accepted(crds: None, kubectl: Kubectl, ns: str, body: Obj) -> None:
    """Adding and removing services stays legal (upstream forbids it; we support it)."""
    create(kubectl, ns, dgd())
    patch(kubectl, ns, "dgd/graph", body)


def test_multinode_service_can_be_replaced_under_a_new_name(crds: None, kubectl: Kubectl, ns: str) -> None:
    """The single/multinode rule only concerns a service that exists before and after."""
    create(kubectl, ns, dgd())
    patch(
        kubectl,
        ns,
        "dgd/graph",
        {
            "spec": {
                "services": {
                    "Worker": None,
                    "WorkerMn": {"componentType": "worker", "multinode": {"nodeCount": 2}},
                }
            }
        },
    )


def test_model_name_and_lora_source_may_change(crds: None, kubectl: Kubectl, ns: str) -> None:
    create(kubectl, ns, edit(dm, ("spec.modelType", "lora"), ("spec.source", {"uri": "hf://org/lora@v1"})))
    patch(
        kubectl, ns, "dm/model", {"spec": {"modelName": "org/lora-v2", "source": {"uri": "hf://org/lora@v2"}}}
    )


@pytest.mark.parametrize(
    ("state", "allowed"),
    [
        pytest.param("", True, id="initial"),
        pytest.param("Pending", True, id="pending"),
        pytest.param("Failed", True, id="failed"),
        pytest.param("Profiling", False, id="profiling"),
        pytest.param("Deploying", False, id="deploying"),
        pytest.param("Ready", False, id="ready"),
        pytest.param("DeploymentDeleted", False, id="deployment-deleted"),
    ],
)
def test_request_spec_is_immutable_once_profiling_started(
    crds: None, kubectl: Kubectl, ns: str, state: str, allowed: bool
) -> None:
    """Spec edits pass before profiling starts and are refused after; metadata stays editable."""
    create(kubectl, ns, dgdr())
    patch(kubectl, ns, "dgdr/request", {"status": {"state": state}}, "--subresource=status")
    edit_spec = {"spec": {"autoApply": True}}
    if allowed:
        patch(kubectl, ns, "dgdr/request", edit_spec)
    else:
        with pytest.raises(KubectlError, match="spec is immutable once profiling has started"):
            patch(kubectl, ns, "dgdr/request", edit_spec)
    patch(kubectl, ns, "dgdr/request", {"metadata": {"labels": {"edited": "yes"}}})


@pytest.mark.parametrize(
    ("phase", "allowed"),
    [
        pytest.param("Pending", False, id="pending"),
        pytest.param("InProgress", False, id="in-progress"),
        pytest.param("Completed", True, id="completed"),
        pytest.param("", True, id="none"),
    ],
)
def test_restart_id_is_frozen_during_a_rolling_update(
    crds: None, kubectl: Kubectl, ns: str, phase: str, allowed: bool
) -> None:
    """A restart may not start while workers roll; other spec edits stay possible meanwhile."""
    create(kubectl, ns, dgd())
    patch(kubectl, ns, "dgd/graph", {"status": {"rollingUpdate": {"phase": phase}}}, "--subresource=status")
    patch(kubectl, ns, "dgd/graph", {"spec": {"services": {"Worker": {"replicas": 2}}}})
    restart = {"spec": {"restart": {"id": "r2"}}}
    if allowed:
        patch(kubectl, ns, "dgd/graph", restart)
    else:
        with pytest.raises(
            KubectlError, match=r"restart\.id cannot change while a rolling update is in progress"
        ):
            patch(kubectl, ns, "dgd/graph", restart)
