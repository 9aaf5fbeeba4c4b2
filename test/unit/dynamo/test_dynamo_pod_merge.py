"""Merge order of the pod template: which layer wins for probes, env, securityContext, shm, etc."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal.dynamo import (
    Capabilities,
    GenContext,
    GenerationError,
    desired_component_objects,
)
from dynamo_operator.internal.dynamo.graph.generate import desired_dcds
from dynamo_operator.internal.dynamo.graph.lowering import lowered_graph
from dynamo_operator.internal.dynamo.pod.merge import merge_env, override, override_probe
from hypothesis import given
from hypothesis import strategies as st
from unit.dynamo.dynamo_testlib import (
    CTX,
    NS,
    dcd_of,
    dgd,
    env_map,
    main_container,
    pod_template,
    service,
)

Obj = dict[str, Any]
CTX_STORED = GenContext(namespace=NS, dcd_api_version=V1BETA1)


def _t(spec: Obj, ctx: GenContext | None = None, **graph_spec: Any) -> Obj:
    graph = dgd({"S": spec}, **graph_spec)
    return pod_template(graph, "S", ctx) if ctx else pod_template(graph, "S")


# --- merge helpers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "user", "expected"),
    [
        pytest.param({"a": 1}, {"a": 2}, {"a": 2}, id="scalar-replaced"),
        pytest.param({"a": 1}, {"a": None}, {"a": 1}, id="none-keeps-base"),
        pytest.param({"l": [1, 2]}, {"l": [3]}, {"l": [3]}, id="list-replaced-whole"),
        pytest.param({"l": [1, 2]}, {"l": []}, {"l": [1, 2]}, id="empty-list-keeps-base"),
        pytest.param({"m": {"x": 1, "y": 2}}, {"m": {"y": 3}}, {"m": {"x": 1, "y": 3}}, id="maps-merge"),
        pytest.param({}, {"n": {"x": 1}}, {"n": {"x": 1}}, id="new-key-added"),
        pytest.param({"a": "s"}, {"a": 0}, {"a": 0}, id="explicit-zero-wins"),
    ],
)
def test_override(base: Obj, user: Obj, expected: Obj) -> None:
    """User values layer over the base with one documented semantics."""
    assert override(base, user) == expected


def test_override_does_not_mutate_inputs() -> None:
    """Inputs are never modified (defaults tables are shared)."""
    base, user = {"m": {"x": [1]}}, {"m": {"y": 2}}
    override(base, user)
    assert base == {"m": {"x": [1]}} and user == {"m": {"y": 2}}


@pytest.mark.parametrize(
    ("user", "expected"),
    [
        pytest.param(
            {"failureThreshold": 5},
            {"httpGet": {"path": "/h", "port": "http"}, "failureThreshold": 5},
            id="numbers-layer",
        ),
        pytest.param(
            {"tcpSocket": {"port": 1}},
            {"tcpSocket": {"port": 1}, "failureThreshold": 3},
            id="handler-replaces-handler",
        ),
        pytest.param(
            {"httpGet": {"port": 8080}},
            {"httpGet": {"path": "/h", "port": 8080}, "failureThreshold": 3},
            id="int-port-replaces-named",
        ),
    ],
)
def test_override_probe(user: Obj, expected: Obj) -> None:
    """A user handler replaces the default handler; a named port is replaced by an int port."""
    base = {"httpGet": {"path": "/h", "port": "http"}, "failureThreshold": 3}
    assert override_probe(base, user) == expected


def test_merge_env_high_wins_and_sorts() -> None:
    """Env union by name: the higher layer wins, the result is sorted."""
    low = [{"name": "B", "value": "1"}, {"name": "A", "value": "1"}]
    high = [{"name": "B", "value": "2"}, {"name": "C", "value": "3"}]
    assert merge_env(low, high) == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
        {"name": "C", "value": "3"},
    ]


# --- probes -----------------------------------------------------------------------------------------

USER_PROBE = {"httpGet": {"path": "/mine", "port": 1234}, "periodSeconds": 7}


@pytest.mark.parametrize("probe", ["livenessProbe", "readinessProbe"])
@pytest.mark.parametrize("ctype", ["frontend", "worker", "planner"])
def test_top_level_probe_replaces_default_whole(ctype: str, probe: str) -> None:
    """`livenessProbe`/`readinessProbe` of the component replace the default entirely."""
    assert main_container(_t(service(ctype, **{probe: USER_PROBE})))[probe] == USER_PROBE


@pytest.mark.parametrize("ctype", ["worker", "planner"])
def test_main_container_startup_probe_replaces_default(ctype: str) -> None:
    """A startupProbe in mainContainer replaces the default one."""
    spec = service(ctype, extraPodSpec={"mainContainer": {"startupProbe": {"exec": {"command": ["true"]}}}})
    assert main_container(_t(spec))["startupProbe"] == {"exec": {"command": ["true"]}}


def test_main_container_probe_numbers_layer_over_default() -> None:
    """mainContainer can raise just the startup failureThreshold of a worker via livenessProbe fields."""
    spec = service("worker", extraPodSpec={"mainContainer": {"livenessProbe": {"failureThreshold": 9}}})
    assert main_container(_t(spec))["livenessProbe"] == {
        "httpGet": {"path": "/live", "port": "system"},
        "periodSeconds": 5,
        "timeoutSeconds": 4,
        "failureThreshold": 9,
    }


def test_main_container_probe_handler_replaces_http_default() -> None:
    """A frontend readiness exec in mainContainer drops the default httpGet (never two handlers)."""
    spec = service(
        "frontend",
        extraPodSpec={"mainContainer": {"readinessProbe": {"exec": {"command": ["true"]}}}},
    )
    probe = main_container(_t(spec))["readinessProbe"]
    assert "httpGet" not in probe and probe["exec"] == {"command": ["true"]}


def test_top_level_probe_beats_main_container_probe() -> None:
    """Top-level probes are applied after mainContainer ones."""
    spec = service(
        "worker",
        livenessProbe=USER_PROBE,
        extraPodSpec={"mainContainer": {"livenessProbe": {"failureThreshold": 9}}},
    )
    assert main_container(_t(spec))["livenessProbe"] == USER_PROBE


# --- env --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layer", "expected"),
    [
        pytest.param("mainContainer", "from-main", id="main-container-env-overrides-injected"),
        pytest.param("envs", "from-envs", id="component-envs-override-injected"),
        pytest.param("both", "from-envs", id="component-envs-beat-main-container"),
        pytest.param("graph", "from-graph", id="graph-envs-override-injected"),
        pytest.param("graph+envs", "from-envs", id="service-envs-beat-graph-envs"),
    ],
)
def test_user_env_overrides_injected_env(layer: str, expected: str) -> None:
    """User env wins over injected env: defaults < mainContainer.env < graph envs < service envs."""
    spec = service("frontend")
    graph_spec: Obj = {}
    if layer in ("mainContainer", "both"):
        spec["extraPodSpec"]["mainContainer"]["env"] = [{"name": "DYNAMO_PORT", "value": "from-main"}]
    if layer in ("envs", "both", "graph+envs"):
        spec["envs"] = [{"name": "DYNAMO_PORT", "value": "from-envs"}]
    if layer.startswith("graph"):
        graph_spec["envs"] = [{"name": "DYNAMO_PORT", "value": "from-graph"}]
    assert env_map(main_container(_t(spec, **graph_spec)))["DYNAMO_PORT"] == expected


def test_infrastructure_env_is_lowest_priority() -> None:
    """Operator infrastructure env is injected but never overrides a user value."""
    ctx = GenContext(
        namespace=NS, infrastructure_env={"NATS_SERVER": "nats://op", "ETCD_ENDPOINTS": "etcd:2379"}
    )
    spec = service("worker", envs=[{"name": "NATS_SERVER", "value": "nats://mine"}])
    env = env_map(main_container(_t(spec, ctx)))
    assert (env["NATS_SERVER"], env["ETCD_ENDPOINTS"]) == ("nats://mine", "etcd:2379")


def test_env_is_sorted_by_name() -> None:
    """Env order is deterministic (sorted), whatever order the layers listed it in."""
    names = [e["name"] for e in main_container(_t(service("worker")))["env"]]
    assert names == sorted(names)


def test_env_from_secret() -> None:
    """envFromSecret becomes an envFrom secretRef on the main container."""
    c = main_container(_t(service("worker", envFromSecret="hf-token")))
    assert c["envFrom"] == [{"secretRef": {"name": "hf-token"}}]


def test_kube_discovery_container_mode_env() -> None:
    """Container discovery mode adds CONTAINER_NAME and DYN_KUBE_DISCOVERY_MODE."""
    spec = service("worker", annotations={"nvidia.com/dynamo-kube-discovery-mode": "container"})
    env = env_map(main_container(_t(spec)))
    assert (env["CONTAINER_NAME"], env["DYN_KUBE_DISCOVERY_MODE"]) == ("main", "container")


@pytest.mark.parametrize(
    ("backend", "expected"), [("etcd", "etcd"), ("kubernetes", "kubernetes"), ("other", "kubernetes")]
)
def test_discovery_backend_env(backend: str, expected: str) -> None:
    """DYN_DISCOVERY_BACKEND is kubernetes unless etcd is asked for."""
    spec = service("worker", annotations={"nvidia.com/dynamo-discovery-backend": backend})
    assert env_map(main_container(_t(spec)))["DYN_DISCOVERY_BACKEND"] == expected


# --- pod-level layering --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "security_context",
    [
        pytest.param({"fsGroup": 2000, "runAsUser": 1000}, id="custom"),
        pytest.param({"runAsNonRoot": False}, id="no-fsgroup"),
        pytest.param({}, id="empty-object"),
    ],
)
def test_user_security_context_suppresses_fsgroup_default(security_context: Obj) -> None:
    """Any user securityContext is kept exactly, with no fsGroup injected."""
    t = _t(service("worker", extraPodSpec={"securityContext": security_context}))
    assert t["spec"]["securityContext"] == security_context


def test_shared_memory_disabled() -> None:
    """sharedMemory.disabled removes the /dev/shm volume and mount."""
    t = _t(service("worker", sharedMemory={"disabled": True}))
    assert all(v["name"] != "shared-memory" for v in t["spec"].get("volumes", []))
    assert all(m["mountPath"] != "/dev/shm" for m in main_container(t).get("volumeMounts", []))


def test_shared_memory_resized() -> None:
    """sharedMemory.size sets the emptyDir sizeLimit."""
    t = _t(service("worker", sharedMemory={"size": "16Gi"}))
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in t["spec"][
        "volumes"
    ]


@pytest.mark.parametrize("size", ["0", "0Gi"])
def test_a_zero_v1alpha1_shared_memory_size_is_written_as_the_limit(size: str) -> None:
    """As this operator's releases before v1beta1 wrote it (the kubelet ignores a zero limit), so an
    upgrade rolls no pod; upstream's v1alpha1 renderer gives the default 8Gi instead."""
    t = _t(service("worker", sharedMemory={"size": size}))
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": size}} in t["spec"][
        "volumes"
    ]


def test_a_v1alpha1_zero_shared_memory_size_is_kept_once_stored_as_v1beta1() -> None:
    graph = convert(dgd({"S": service("worker", sharedMemory={"size": "0"})}), V1BETA1)
    [dcd] = desired_dcds(lowered_graph(graph), CTX_STORED)
    dcd["metadata"]["uid"] = "dcd-uid"
    [deployment, *_] = desired_component_objects(dcd, CTX_STORED)
    assert {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "0"}} in deployment[
        "spec"
    ]["template"]["spec"]["volumes"]


def test_shared_memory_replaces_user_mount_on_dev_shm() -> None:
    """A user mount at /dev/shm is dropped in favour of the shared-memory mount."""
    spec = service(
        "worker", extraPodSpec={"mainContainer": {"volumeMounts": [{"name": "x", "mountPath": "/dev/shm"}]}}
    )
    mounts = main_container(_t(spec))["volumeMounts"]
    assert [m for m in mounts if m["mountPath"] == "/dev/shm"] == [
        {"name": "shared-memory", "mountPath": "/dev/shm"}
    ]


def test_extra_pod_spec_fields_reach_pod() -> None:
    """PodSpec fields of extraPodSpec are merged over the generated pod spec."""
    extra = {
        "nodeSelector": {"gpu": "a100"},
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "terminationGracePeriodSeconds": 5,
    }
    spec = _t(service("worker", extraPodSpec=extra))["spec"]
    assert (spec["nodeSelector"], spec["tolerations"], spec["terminationGracePeriodSeconds"]) == (
        {"gpu": "a100"},
        [{"key": "k", "operator": "Exists"}],
        5,
    )


def test_user_containers_come_after_main() -> None:
    """User sidecars are kept, after main (tools address main as containers[0])."""
    spec = service("worker", extraPodSpec={"containers": [{"name": "sidecar", "image": "busybox"}]})
    assert [c["name"] for c in _t(spec)["spec"]["containers"]] == ["main", "sidecar"]


def test_user_volumes_do_not_drop_generated_volumes() -> None:
    """A user volume is added next to generated ones (a same-named user volume replaces it)."""
    spec = service("worker", extraPodSpec={"volumes": [{"name": "extra", "emptyDir": {}}]})
    names = [v["name"] for v in _t(spec)["spec"]["volumes"]]
    assert names == ["extra", "shared-memory"]


def test_main_container_overrides_command_and_image() -> None:
    """mainContainer fields replace generated ones; the container keeps the name main."""
    spec = service(
        "frontend", extraPodSpec={"mainContainer": {"name": "x", "command": ["my"], "args": ["a"]}}
    )
    c = main_container(_t(spec))
    assert (c["name"], c["command"], c["args"]) == ("main", ["my"], ["a"])


def test_planner_service_account_user_override() -> None:
    """A user serviceAccountName on a planner wins over planner-serviceaccount."""
    assert (
        _t(service("planner", extraPodSpec={"serviceAccountName": "mine"}))["spec"]["serviceAccountName"]
        == "mine"
    )


def test_planner_service_account_from_context() -> None:
    """The planner SA name comes from operator settings."""
    ctx = GenContext(namespace=NS, planner_service_account="custom-planner")
    assert _t(service("planner"), ctx)["spec"]["serviceAccountName"] == "custom-planner"


def test_discovery_service_account_for_kube_discovery() -> None:
    """With Kubernetes discovery, pods without an SA use the graph's discovery SA."""
    assert _t(service("worker"))["spec"]["serviceAccountName"] == "g-k8s-service-discovery"


def test_no_discovery_service_account_with_etcd() -> None:
    """With etcd discovery no SA is set."""
    ctx = GenContext(namespace=NS, discovery_backend="etcd")
    assert "serviceAccountName" not in _t(service("worker"), ctx)["spec"]


# --- resources --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param(
            {"requests": {"cpu": "2", "memory": "4Gi"}},
            {"requests": {"cpu": "2", "memory": "4Gi"}},
            id="cpu-memory",
        ),
        pytest.param({"limits": {"gpu": "2"}}, {"limits": {"nvidia.com/gpu": "2"}}, id="gpu-default-type"),
        pytest.param(
            {"limits": {"gpu": "1", "gpuType": "gpu.intel.com/xe"}},
            {"limits": {"gpu.intel.com/xe": "1"}},
            id="gpu-type",
        ),
        pytest.param(
            {"requests": {"custom": {"example.com/foo": "3"}}},
            {"requests": {"example.com/foo": "3"}},
            id="custom",
        ),
        pytest.param({"claims": [{"name": "gpu-claim"}]}, {"claims": [{"name": "gpu-claim"}]}, id="claims"),
    ],
)
def test_resources_translation(resources: Obj, expected: Obj) -> None:
    """cpu/memory/gpu(/gpuType)/custom/claims become container ResourceRequirements."""
    assert main_container(_t(service("worker", resources=resources)))["resources"] == expected


def test_resources_merge_over_main_container_resources_per_key() -> None:
    """Component resources override mainContainer resources key by key."""
    spec = service(
        "worker",
        resources={"limits": {"cpu": "4"}},
        extraPodSpec={"mainContainer": {"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}},
    )
    assert main_container(_t(spec))["resources"] == {"limits": {"cpu": "4", "memory": "1Gi"}}


def test_bad_quantity_names_the_field() -> None:
    """An unparsable quantity is refused, naming the field."""
    with pytest.raises(GenerationError, match=r"resources\.limits\.cpu"):
        _t(service("worker", resources={"limits": {"cpu": "lots"}}))


# --- metadata ---------------------------------------------------------------------------------------


def test_extra_pod_metadata_reaches_pod() -> None:
    """extraPodMetadata labels and annotations are put on the pod template."""
    t = _t(service("worker", extraPodMetadata={"labels": {"team": "a"}, "annotations": {"note": "x"}}))
    assert t["metadata"]["labels"]["team"] == "a" and t["metadata"]["annotations"]["note"] == "x"


def test_extra_pod_metadata_cannot_override_selector_labels() -> None:
    """Operator-owned labels (selector, component, namespace, worker hash) are re-asserted after user
    labels."""
    labels = {
        "nvidia.com/selector": "x",
        "nvidia.com/dynamo-component": "x",
        "nvidia.com/dynamo-namespace": "x",
        "nvidia.com/dynamo-worker-hash": "x",
    }
    spec = service("worker", extraPodMetadata={"labels": labels})
    name = dcd_of(dgd({"S": spec}), "S")["metadata"]["name"]
    got = _t(spec)["metadata"]["labels"]
    assert (
        got["nvidia.com/selector"],
        got["nvidia.com/dynamo-component"],
        got["nvidia.com/dynamo-namespace"],
        got["nvidia.com/dynamo-worker-hash"],
    ) == (name, "S", "ns1-g", name.rsplit("-", 1)[1])


@pytest.mark.parametrize(
    ("ctype", "suffixed"),
    [
        pytest.param("worker", True, id="worker"),
        pytest.param("prefill", True, id="prefill"),
        pytest.param("decode", True, id="decode"),
        pytest.param("frontend", False, id="frontend"),
        pytest.param("planner", False, id="planner"),
    ],
)
def test_workers_get_their_hash_as_namespace_suffix(ctype: str, suffixed: bool) -> None:
    """Worker pods carry DYN_NAMESPACE_WORKER_SUFFIX=<worker hash> (old and new workers of a rollout
    register apart); other components do not."""
    graph = dgd({"S": service(ctype)})
    name = dcd_of(graph, "S")["metadata"]["name"]
    got = env_map(main_container(pod_template(graph, "S"))).get("DYN_NAMESPACE_WORKER_SUFFIX")
    assert got == (name.rsplit("-", 1)[1] if suffixed else None)


def test_standalone_worker_dcd_gets_no_namespace_suffix() -> None:
    """A DCD written by hand (no worker-hash label) gets no suffix."""
    dcd = dcd_of(dgd({"S": service("worker")}), "S")
    dcd["spec"]["labels"].pop("nvidia.com/dynamo-worker-hash")
    dcd["metadata"]["labels"].pop("nvidia.com/dynamo-worker-hash")  # a graph's DCD is read by both
    [deployment] = [o for o in desired_component_objects(dcd, CTX) if o["kind"] == "Deployment"]
    assert "DYN_NAMESPACE_WORKER_SUFFIX" not in env_map(main_container(deployment["spec"]["template"]))


def test_metrics_label_opt_out() -> None:
    """nvidia.com/enable-metrics=false drops the metrics-enabled pod label."""
    t = _t(service("worker", annotations={"nvidia.com/enable-metrics": "false"}))
    assert "nvidia.com/metrics-enabled" not in t["metadata"]["labels"]


def test_component_annotations_reach_pod() -> None:
    """Component annotations are put on pods (upstream dropped them in the Deployment path)."""
    assert _t(service("worker", annotations={"a": "b"}))["metadata"]["annotations"]["a"] == "b"


# --- image pull secrets -------------------------------------------------------------------------------

SECRETS_CTX = GenContext(
    namespace=NS,
    capabilities=Capabilities(lws=True),
    docker_secrets={"nvcr.io": ("ngc-b", "ngc-a"), "docker.io": ("hub",)},
)


@pytest.mark.parametrize(
    ("image", "annotations", "user", "expected"),
    [
        pytest.param("nvcr.io/nvidia/x:1", {}, [], ["ngc-a", "ngc-b"], id="discovered-sorted"),
        pytest.param("ubuntu:22.04", {}, [], ["hub"], id="docker-hub-default"),
        pytest.param("quay.io/x/y", {}, [], None, id="no-match"),
        pytest.param(
            "nvcr.io/x", {"nvidia.com/disable-image-pull-secret-discovery": "true"}, [], None, id="opt-out"
        ),
        pytest.param(
            "nvcr.io/x",
            {"nvidia.com/disable-image-pull-secret-discovery": "true"},
            [{"name": "u"}],
            ["u"],
            id="opt-out-keeps-user",
        ),
        pytest.param(
            "nvcr.io/x",
            {},
            [{"name": "z"}, {"name": "ngc-b"}, {"name": "z"}],
            ["z", "ngc-b", "ngc-a"],
            id="user-first-deduped",
        ),
    ],
)
def test_image_pull_secrets(
    image: str, annotations: Obj, user: list[Obj], expected: list[str] | None
) -> None:
    """Pull secrets: user ones first, then discovered ones for the image's registry; opt-out honoured."""
    extra: Obj = {"mainContainer": {"image": image}}
    if user:
        extra["imagePullSecrets"] = user
    t = _t(service("worker", annotations=annotations, extraPodSpec=extra), SECRETS_CTX)
    got = t["spec"].get("imagePullSecrets")
    assert (None if got is None else [s["name"] for s in got]) == expected


def test_opt_out_annotation_on_graph_metadata_is_honoured() -> None:
    """The opt-out annotation on the DGD's metadata reaches every service."""
    graph = dgd({"S": service("worker")})
    graph["metadata"]["annotations"] = {"nvidia.com/disable-image-pull-secret-discovery": "true"}
    assert "imagePullSecrets" not in pod_template(graph, "S", SECRETS_CTX)["spec"]


# --- errors -----------------------------------------------------------------------------------------


def test_non_cache_mount_without_mount_point_is_refused() -> None:
    """A plain PVC mount needs a mountPoint."""
    with pytest.raises(GenerationError, match=r"volumeMounts\[name=data\]\.mountPoint"):
        _t(service("worker", volumeMounts=[{"name": "data"}]), pvcs=[{"name": "data"}])


def test_cache_mount_without_default_path_is_refused() -> None:
    """SGLang has no default compilation cache path: the mountPoint is required."""
    with pytest.raises(GenerationError, match="mountPoint"):
        _t(
            service("worker", "sglang", volumeMounts=[{"name": "c", "useAsCompilationCache": True}]),
            backend="sglang",
            pvcs=[{"name": "c"}],
        )


def test_contradicting_backend_is_refused() -> None:
    """A worker whose command runs another backend than backendFramework is refused."""
    with pytest.raises(GenerationError, match="backendFramework"):
        _t(service("worker", "sglang"), backend="vllm")


def test_pvc_mount_adds_volume() -> None:
    """volumeMounts reference graph PVCs by claim name."""
    t = _t(
        service("worker", volumeMounts=[{"name": "models", "mountPoint": "/models"}]),
        pvcs=[{"name": "models"}],
    )
    assert {"name": "models", "persistentVolumeClaim": {"claimName": "models"}} in t["spec"]["volumes"]
    assert {"name": "models", "mountPath": "/models"} in main_container(t)["volumeMounts"]


# --- properties -------------------------------------------------------------------------------------

_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("abcd"), inner, max_size=3),
    max_leaves=8,
)
_maps = st.dictionaries(st.sampled_from("abcdef"), _values, max_size=5)


@given(_maps)
def test_override_with_empty_is_identity(base: Obj) -> None:
    """Layering nothing changes nothing."""
    assert override(base, {}) == base


@given(_maps, _maps)
def test_override_is_idempotent(base: Obj, user: Obj) -> None:
    """Applying the same user layer twice equals applying it once."""
    once = override(base, user)
    assert override(once, user) == once


@given(_maps, _maps)
def test_user_scalars_always_win(base: Obj, user: Obj) -> None:
    """Every non-null, non-container user value is present in the result."""
    out = override(base, user)
    for key, value in user.items():
        if value is not None and not isinstance(value, dict | list):
            assert out[key] == value


_envs = st.lists(
    st.builds(
        lambda n, v: {"name": n, "value": v}, st.sampled_from(["A", "B", "C", "D"]), st.text(max_size=3)
    ),
    max_size=6,
)


@given(_envs, _envs)
def test_merge_env_properties(low: list[Obj], high: list[Obj]) -> None:
    """The union holds each name once, sorted, with the last high value winning."""
    out = merge_env(low, high)
    names = [e["name"] for e in out]
    assert names == sorted({e["name"] for e in low + high})
    for var in high:
        assert {
            "name": var["name"],
            "value": [h for h in high if h["name"] == var["name"]][-1]["value"],
        } in out
