"""`pod/user_pod.py`: what each reader takes from a component's pod fields, and where it puts it."""

from __future__ import annotations

from typing import Any, cast

from dynamo_operator.internal.dynamo.common.inputs import DcdSpec, StoredDcdSpec
from dynamo_operator.internal.dynamo.pod.user_pod import (
    ClaimMount,
    Quantity,
    alpha_user_pod,
    layered_apart,
    layered_components,
    stored_user_pod,
)

Obj = dict[str, Any]


def _stored(main: Obj | None = None, **fields: Any) -> StoredDcdSpec:
    pod = fields.pop("pod", {})
    containers = [{"name": "main", "image": "img", **(main or {})}, *pod.pop("containers", [])]
    return cast(
        StoredDcdSpec,
        {"type": "worker", "podTemplate": {"spec": {**pod, "containers": containers}}, **fields},
    )


def _alpha(**fields: Any) -> DcdSpec:
    return cast(DcdSpec, {"componentType": "worker", **fields})


def test_the_main_containers_env_probes_resources_and_mounts_take_v1alpha1s_flat_places() -> None:
    probe = {"httpGet": {"path": "/h", "port": 9090}}
    pod = stored_user_pod(
        _stored(
            {
                "env": [{"name": "A", "value": "1"}],
                "livenessProbe": probe,
                "startupProbe": probe,
                "resources": {"limits": {"cpu": "1"}},
                "volumeMounts": [{"name": "m", "mountPath": "/m"}],
                "workingDir": "/w",
            }
        )
    )
    assert pod.main == {"image": "img", "startupProbe": probe, "workingDir": "/w"}
    assert pod.env == [{"name": "A", "value": "1"}]
    assert pod.probes == {"livenessProbe": probe}
    assert pod.quantities == [Quantity("limits", "cpu", "1", "resources.limits.cpu")]
    assert pod.mounts == [ClaimMount("m", "/m", details={"name": "m", "mountPath": "/m"})]


def test_a_resource_list_is_read_in_v1alpha1s_order_with_the_nvidia_gpus_counted() -> None:
    pod = stored_user_pod(
        _stored({"resources": {"limits": {"rdma/ib": 1, "nvidia.com/gpu": 2, "memory": "1Gi", "cpu": 4}}})
    )
    assert [(q.name, q.value, q.gpu) for q in pod.quantities] == [
        ("cpu", "4", False),
        ("memory", "1Gi", False),
        ("nvidia.com/gpu", "2", True),
        ("rdma/ib", "1", False),
    ]
    assert pod.gpus("limits") == "2"
    assert pod.gpus("requests") == ""


def test_another_vendors_gpus_are_no_gpu_count_in_v1beta1_but_are_in_v1alpha1() -> None:
    beta = stored_user_pod(_stored({"resources": {"limits": {"amd.com/gpu": 2}}}))
    alpha = alpha_user_pod(_alpha(resources={"limits": {"gpu": "2", "gpuType": "amd.com/gpu"}}))
    assert beta.gpus("limits") == ""
    assert alpha.gpus("limits") == "2"


def test_the_pod_spec_beside_main_keeps_the_other_containers() -> None:
    pod = stored_user_pod(
        _stored(pod={"nodeSelector": {"a": "b"}, "containers": [{"name": "side", "image": "s"}]})
    )
    assert pod.spec == {"nodeSelector": {"a": "b"}, "containers": [{"name": "side", "image": "s"}]}
    assert pod.containers == [{"name": "side", "image": "s"}]


def test_a_pod_spec_of_empty_fields_alone_is_none_and_empty_fields_beside_a_value_stay() -> None:
    assert stored_user_pod(_stored(pod={"nodeSelector": {}, "tolerations": []})).spec == {}
    kept = stored_user_pod(_stored(pod={"nodeSelector": {}, "serviceAccountName": ""})).spec
    assert kept == {"nodeSelector": {}, "serviceAccountName": ""}


def test_a_zero_shared_memory_size_disables_it_in_v1beta1_and_is_the_limit_in_v1alpha1() -> None:
    beta = stored_user_pod(_stored(sharedMemorySize="0"))
    alpha = alpha_user_pod(_alpha(sharedMemory={"size": "0Gi"}))
    assert (beta.shared_memory_disabled, beta.shared_memory_size) == (True, "0")
    assert (alpha.shared_memory_disabled, alpha.shared_memory_size) == (False, "0Gi")
    assert layered_apart(_alpha(sharedMemory={"size": "0Gi"})) == "a zero sharedMemory.size"


def test_the_compilation_cache_comes_first_and_a_main_mount_at_its_name_and_path_gives_its_details() -> None:
    pod = stored_user_pod(
        _stored(
            {
                "volumeMounts": [
                    {"name": "data", "mountPath": "/d"},
                    {"name": "c", "mountPath": "/c", "readOnly": True},
                ]
            },
            compilationCache={"pvcName": "c", "mountPath": "/c"},
        )
    )
    assert [(m.name, m.mount_path, m.compilation_cache) for m in pod.mounts] == [
        ("c", "/c", True),
        ("data", "/d", False),
    ]
    assert pod.mounts[0].details == {"name": "c", "mountPath": "/c", "readOnly": True}


def test_a_mount_given_twice_is_one_with_the_last_ones_details() -> None:
    pod = stored_user_pod(
        _stored(
            {
                "volumeMounts": [
                    {"name": "m", "mountPath": "/m", "subPath": "a"},
                    {"name": "m", "mountPath": "/m"},
                ]
            }
        )
    )
    assert pod.mounts == [ClaimMount("m", "/m", details={"name": "m", "mountPath": "/m"})]


def test_v1beta1_names_its_frontend_sidecar_and_v1alpha1_gives_a_block() -> None:
    assert stored_user_pod(_stored(frontendSidecar="fe")).named_sidecar == "fe"
    alpha = alpha_user_pod(_alpha(frontendSidecar={"image": "fe:1"}))
    assert (alpha.frontend_sidecar, alpha.named_sidecar) == ({"image": "fe:1"}, None)


def test_a_v1alpha1_component_whose_two_places_agree_with_its_pod_template_is_not_layered_apart() -> None:
    spec = _alpha(
        envs=[{"name": "A", "value": "1"}],
        envFromSecret="s",
        resources={"limits": {"cpu": "1"}},
        livenessProbe={"httpGet": {"path": "/h", "port": 9090}},
        volumeMounts=[
            {"name": "c", "mountPoint": "/c", "useAsCompilationCache": True},
            {"name": "d", "mountPoint": "/d"},
        ],
        extraPodSpec={
            "mainContainer": {"image": "img", "env": [{"name": "B", "value": "2"}]},
            "nodeSelector": {"a": "b"},
        },
    )
    assert layered_apart(spec) is None


def test_v1alpha1_flat_mounts_out_of_v1beta1s_order_are_layered_apart() -> None:
    spec = _alpha(
        volumeMounts=[
            {"name": "d", "mountPoint": "/d"},
            {"name": "c", "mountPoint": "/c", "useAsCompilationCache": True},
        ]
    )
    assert (
        layered_apart(spec)
        == "volumeMounts v1beta1 lists otherwise (the cache first, each name and path once)"
    )


def test_layered_components_names_those_of_a_graph_or_a_dcd_and_nothing_of_other_kinds() -> None:
    service = {
        "componentType": "worker",
        "envFromSecret": "s",
        "extraPodSpec": {"mainContainer": {"envFrom": [{}]}},
    }
    graph = {
        "kind": "DynamoGraphDeployment",
        "spec": {"services": {"W": service, "F": {"componentType": "frontend"}}},
    }
    dcd = {"kind": "DynamoComponentDeployment", "metadata": {"name": "w"}, "spec": service}
    reason = "envFromSecret beside the main container's envFrom"
    assert layered_components(graph) == [("W", reason)]
    assert layered_components(dcd) == [("w", reason)]
    assert layered_components({"kind": "DynamoModel", "spec": service}) == []


def test_a_null_probe_in_the_pod_template_is_no_probe() -> None:
    assert stored_user_pod(_stored({"livenessProbe": None})).probes == {}
