"""The pod-level changes upstream made between df888f68 (April) and 2a6da14c (August), each pinned to
what upstream's operator made at 2a6da14c for its own examples (`../shared/upstream-examples-2a6da14c`),
or, where no example shows it, to upstream's rule at that commit. 2a6da14c is what this operator
generates; `make compat` shows the rest of the comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from compat.generate import SHAPES, Generated, generate
from compat.goldens import SET_2A6DA14C, Example, GoldensMissing, discover, load_golden
from dynamo_operator.internal.dynamo.common.context import Capabilities, GenContext
from dynamo_operator.internal.dynamo.component.failover import engine_container
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds
from dynamo_operator.internal.dynamo.grove.podcliqueset import desired_grove_objects

Obj = dict[str, Any]
SHAPE = {s.name: s for s in SHAPES}
ISTIO = "sidecar.istio.io/inject"


def _example(name: str) -> Example:
    try:
        [found] = [e for e in discover(tuple(SHAPE), SET_2A6DA14C) if e.name == name]
    except GoldensMissing as err:
        pytest.fail(str(err), pytrace=False)
    return found


def _both(name: str, shape: str) -> tuple[dict[str, Obj], Generated]:
    ex = _example(name)
    return load_golden(ex, shape), generate(ex, SHAPE[shape])


def _one(objects: dict[str, Obj], kind: str, where: Callable[[Obj], bool]) -> Obj:
    [found] = [o for k, o in objects.items() if k.startswith(f"{kind}/") and where(o)]
    return found


def _component(name: str) -> Callable[[Obj], bool]:
    def matches(obj: Obj) -> bool:
        labels = obj["spec"]["template"]["metadata"].get("labels") or {}
        return bool(labels.get("nvidia.com/dynamo-component") == name)

    return matches


def _main(deployment: Obj) -> Obj:
    [main] = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "main"]
    return main


def _env(container: Obj) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in container.get("env") or []}


# -- DYN_FORWARDPASS_METRIC_PORT --------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["golden", "golden-lws-gaie"])
def test_a_worker_serves_forward_pass_metrics_on_20380(shape: str) -> None:
    golden, ours = _both("backends_vllm_agg", shape)
    worker = _component("VllmDecodeWorker")
    theirs = _env(_main(_one(golden, "Deployment", worker)))["DYN_FORWARDPASS_METRIC_PORT"]
    assert theirs == "20380"
    assert _env(_main(_one(ours.objects, "Deployment", worker)))["DYN_FORWARDPASS_METRIC_PORT"] == theirs


def test_a_frontend_has_no_forward_pass_metrics_port() -> None:
    golden, ours = _both("backends_vllm_agg", "golden")
    frontend = _component("Frontend")
    assert "DYN_FORWARDPASS_METRIC_PORT" not in _env(_main(_one(golden, "Deployment", frontend)))
    assert "DYN_FORWARDPASS_METRIC_PORT" not in _env(_main(_one(ours.objects, "Deployment", frontend)))


def test_each_failover_engine_binds_its_own_forward_pass_metrics_port() -> None:
    """Engines share the pod's network: engine i gets 20380 + i, once (upstream failover.go)."""
    main = {
        "name": "main",
        "env": [{"name": "DYN_FORWARDPASS_METRIC_PORT", "value": "20380"}],
        "ports": [{"name": "system", "containerPort": 9090}],
    }
    for index in (0, 1):
        env = [e for e in engine_container(main, index)["env"] if e["name"] == "DYN_FORWARDPASS_METRIC_PORT"]
        assert env == [{"name": "DYN_FORWARDPASS_METRIC_PORT", "value": str(20380 + index)}]


# -- EPP: RUST_LOG=info, no Istio sidecar --------------------------------------------------------------


@pytest.mark.parametrize("name", ["backends_vllm_gaie_agg", "backends_vllm_gaie_disagg"])
def test_the_epp_logs_at_info(name: str) -> None:
    golden, ours = _both(name, "golden-lws-gaie")
    epp = _component("Epp")
    assert _env(_main(_one(golden, "Deployment", epp)))["RUST_LOG"] == "info"
    assert _env(_main(_one(ours.objects, "Deployment", epp)))["RUST_LOG"] == "info"


@pytest.mark.parametrize("name", ["backends_vllm_gaie_agg", "backends_vllm_gaie_disagg"])
def test_epp_pods_and_their_workload_opt_out_of_the_istio_sidecar(name: str) -> None:
    """The EPP's pods, its Deployment and its Service carry `sidecar.istio.io/inject: "false"`."""
    golden, ours = _both(name, "golden-lws-gaie")
    epp = _component("Epp")
    for objects in (golden, ours.objects):
        deployment = _one(objects, "Deployment", epp)
        assert deployment["spec"]["template"]["metadata"]["annotations"][ISTIO] == "false"
        assert deployment["metadata"]["annotations"][ISTIO] == "false"
        assert objects["Service/qwen-epp"]["metadata"]["annotations"][ISTIO] == "false"


def _epp_graph(epp_annotations: dict[str, str] | None, graph_annotations: dict[str, str]) -> Obj:
    epp: Obj = {"componentType": "epp", "eppConfig": {"configMapRef": {"name": "cfg"}}}
    if epp_annotations is not None:
        epp["annotations"] = epp_annotations
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": "g", "namespace": "ns", "uid": "u1"},
        "spec": {"annotations": graph_annotations, "services": {"Epp": epp}},
    }


@pytest.mark.parametrize(
    ("epp_annotations", "graph_annotations", "expected"),
    [
        pytest.param(None, {}, "false", id="default-off"),
        pytest.param(None, {ISTIO: "true"}, "false", id="graph-wide-true-does-not-undo-it"),
        pytest.param({ISTIO: "true"}, {}, "true", id="the-components-own-annotation-wins"),
    ],
)
def test_who_decides_the_epps_istio_sidecar(
    epp_annotations: dict[str, str] | None, graph_annotations: dict[str, str], expected: str
) -> None:
    [dcd] = desired_dcds(_epp_graph(epp_annotations, graph_annotations), GenContext(namespace="ns"))
    assert dcd["spec"]["annotations"][ISTIO] == expected


def test_the_grove_pathway_leaves_the_epps_istio_sidecar_alone() -> None:
    """Upstream stamps it on the EPP's DCD only; its Grove cliques do not carry it."""
    golden, ours = _both("backends_vllm_gaie_agg", "golden-grove")
    for objects in (golden, ours.objects):
        [pcs] = [o for k, o in objects.items() if k.startswith("PodCliqueSet/")]
        [epp] = [c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "epp"]
        assert ISTIO not in (epp.get("annotations") or {})


# -- TensorRT-LLM multinode: mpirun forwards CPATH and TRITON_PTXAS_PATH -------------------------------


def _leader_args(objects: dict[str, Obj]) -> str:
    [pcs] = [o for k, o in objects.items() if k.startswith("PodCliqueSet/")]
    [leader] = [c for c in pcs["spec"]["template"]["cliques"] if c["name"] == "decode-ldr"]
    return " ".join(leader["spec"]["podSpec"]["containers"][0]["args"])


@pytest.mark.parametrize("name", ["CPATH", "TRITON_PTXAS_PATH"])
def test_trtllm_mpirun_forwards_the_compiler_paths(name: str) -> None:
    golden, ours = _both("backends_trtllm_disagg-multinode", "golden-grove")
    assert f"-x {name} " in _leader_args(golden)
    assert f"-x {name} " in _leader_args(ours.objects)


# -- PVC volumes and mounts, once each --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shape"),
    [
        pytest.param("diffusers_agg", "golden-lws-gaie", id="diffusers-lws"),
        pytest.param("diffusers_agg_user_workload", "golden-lws-gaie", id="diffusers-user-workload-lws"),
        pytest.param("backends_trtllm_disagg-multinode", "golden-grove", id="trtllm-multinode-grove"),
        pytest.param("backends_trtllm_disagg-multinode", "golden-lws-gaie", id="trtllm-multinode-lws"),
    ],
)
def test_a_pvc_is_one_volume_and_one_mount_per_pod(name: str, shape: str) -> None:
    """A PVC named by the pod template and by a volumeMount is one volume and one mount, as in
    upstream's pods; every pod of the example has the same PVC volumes as upstream's."""
    golden, ours = _both(name, shape)

    def pods(objects: dict[str, Obj]) -> dict[str, Obj]:
        out: dict[str, Obj] = {}
        for key, obj in objects.items():
            if key.startswith("Deployment/"):
                out[obj["spec"]["template"]["metadata"]["labels"]["nvidia.com/dynamo-component"]] = obj[
                    "spec"
                ]["template"]["spec"]
            elif key.startswith("PodCliqueSet/"):
                out.update({c["name"]: c["spec"]["podSpec"] for c in obj["spec"]["template"]["cliques"]})
        return out

    theirs, mine = pods(golden), pods(ours.objects)
    assert theirs and set(theirs) == set(mine)
    for pod, spec in mine.items():
        volumes = [v["name"] for v in spec.get("volumes") or []]
        mounts = [m["name"] for m in spec["containers"][0].get("volumeMounts") or []]
        assert len(volumes) == len(set(volumes)) and len(mounts) == len(set(mounts)), pod
        assert _claims(spec) == _claims(theirs[pod]), pod


def _claims(pod: Obj) -> list[tuple[str, str]]:
    return sorted(
        (v["name"], v["persistentVolumeClaim"]["claimName"])
        for v in pod.get("volumes") or []
        if "persistentVolumeClaim" in v
    )


# -- the graph's annotations on Grove component Services ------------------------------------------------


def test_grove_component_services_carry_the_graphs_and_components_annotations() -> None:
    """Upstream 2a6da14c writes the graph's spec.annotations under the component's own on the
    component's Service; the graph's metadata keys (origin version, ...) stay off it."""
    graph = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {
            "name": "g",
            "namespace": "ns",
            "uid": "u1",
            "annotations": {"nvidia.com/dynamo-operator-origin-version": "1.5.0"},
        },
        "spec": {
            "annotations": {"team": "a", "shared": "graph"},
            "services": {
                "Frontend": {
                    "componentType": "frontend",
                    "annotations": {"shared": "component"},
                    "extraPodSpec": {"mainContainer": {"image": "img"}},
                }
            },
        },
    }
    ctx = GenContext(namespace="ns", capabilities=Capabilities(grove=True))
    [service] = [o for o in desired_grove_objects(graph, ctx) if o["kind"] == "Service"]
    annotations = {
        k: v for k, v in service["metadata"]["annotations"].items() if k != "nvidia.com/last-applied-hash"
    }
    assert annotations == {"team": "a", "shared": "component"}


# -- workload metadata ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["golden", "golden-lws-gaie"])
def test_deployments_and_services_carry_no_origin_version(shape: str) -> None:
    golden, ours = _both("backends_vllm_agg", shape)
    for objects in (golden, ours.objects):
        for key, obj in objects.items():
            if key.startswith(("Deployment/", "Service/")):
                assert "nvidia.com/dynamo-operator-origin-version" not in (
                    obj["metadata"].get("annotations") or {}
                ), key


def test_a_model_serving_worker_names_its_base_model_on_its_pods() -> None:
    golden, ours = _both("backends_vllm_lora_agg_lora", "golden")
    worker = _component("VllmDecodeWorker")
    for objects in (golden, ours.objects):
        template = _one(objects, "Deployment", worker)["spec"]["template"]["metadata"]
        assert template["annotations"]["nvidia.com/dynamo-base-model"] == "Qwen/Qwen3-0.6B"


@pytest.mark.parametrize("shape", ["golden", "golden-lws-gaie"])
def test_prefill_and_decode_workers_are_labelled_by_their_sub_type(shape: str) -> None:
    """Pod label, Service selector, DYN_COMPONENT and the workload's sub-type label: as upstream's."""
    golden, ours = _both("backends_vllm_disagg", shape)
    for component, role in (("VllmDecodeWorker", "decode"), ("VllmPrefillWorker", "prefill")):
        for objects in (golden, ours.objects):
            deployment = _one(objects, "Deployment", _component(component))
            labels = deployment["spec"]["template"]["metadata"]["labels"]
            assert labels["nvidia.com/dynamo-component-type"] == role
            assert deployment["metadata"]["labels"]["nvidia.com/dynamo-sub-component-type"] == role
            assert _env(_main(deployment))["DYN_COMPONENT"] == role
