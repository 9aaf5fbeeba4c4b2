"""Per-graph side objects (wait-for-leader script, EPP config and InferencePool) and EPP pod defaults."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.dynamo import Capabilities, GenContext, GenerationError, MissingAPIError
from dynamo_operator.internal.dynamo.component.workload import desired_component_objects
from dynamo_operator.internal.dynamo.graph.generate import desired_side_objects
from unit.dynamo.dynamo_testlib import NS, dgd, env_map, main_container, objects_of, pod_template, service

Obj = dict[str, Any]
EPP_CTX = GenContext(namespace=NS, capabilities=Capabilities(lws=True, gateway_inference_extension=True))
EPP_CONFIG = {"eppConfig": {"config": {"plugins": [{"type": "dyn-kv"}]}}}


def _mp_worker(role: str) -> Obj:
    spec = service(
        "worker",
        multinode={"nodeCount": 2},
        resources={"limits": {"gpu": "8"}},
        annotations={"nvidia.com/vllm-distributed-executor-backend": "mp"},
        extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", "16"]}},
    )
    return pod_template(dgd({"W": spec}), "W", role=role)


def test_multinode_graph_gets_wait_leader_config_map() -> None:
    """Any multinode service adds the `<dgd>-wait-leader-script` ConfigMap, owned by the graph."""
    [cm] = desired_side_objects(dgd({"W": service("worker", multinode={"nodeCount": 2})}), EPP_CTX)
    assert cm["metadata"]["name"] == "g-wait-leader-script"
    assert "wait-for-leader.py" in cm["data"]
    assert cm["metadata"]["ownerReferences"][0]["kind"] == "DynamoGraphDeployment"


def test_single_node_graph_has_no_side_objects() -> None:
    """A plain graph needs no side objects."""
    assert desired_side_objects(dgd({"W": service("worker")}), EPP_CTX) == []


def test_vllm_mp_worker_waits_for_leader() -> None:
    """vLLM multiprocessing workers wait for the leader's master port in an init container."""
    t = _mp_worker("worker")
    [init] = t["spec"]["initContainers"]
    assert init["name"] == "wait-for-leader-mp" and "LEADER_PORT=29500" in init["args"][0]
    assert {"name": "wait-leader-script", "configMap": {"name": "g-wait-leader-script"}} in t["spec"][
        "volumes"
    ]


def test_vllm_mp_leader_has_no_wait() -> None:
    """The leader itself does not wait."""
    assert "initContainers" not in _mp_worker("leader")["spec"]


@pytest.mark.parametrize("role", ["leader", "worker"])
def test_vllm_mp_nixl_side_channel_host(role: str) -> None:
    """Both mp roles advertise their pod IP as the NIXL side channel host."""
    env = env_map(main_container(_mp_worker(role)))
    assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"] == {"fieldRef": {"fieldPath": "status.podIP"}}


def test_epp_inline_config_becomes_config_map_and_pool() -> None:
    """An inline EPP config is written to `<dgd>-epp-config`; the InferencePool points at the EPP Service."""
    cm, pool = desired_side_objects(dgd({"Epp": service("epp", **EPP_CONFIG)}), EPP_CTX)
    assert cm["metadata"]["name"] == "g-epp-config"
    assert "kind: EndpointPickerConfig" in cm["data"]["epp-config-dynamo.yaml"]
    assert pool["metadata"]["name"] == "g-pool"
    assert pool["spec"]["endpointPickerRef"] == {"kind": "Service", "name": "g-epp", "port": {"number": 9002}}
    # Every worker class (prefill, decode, aggregated) as upstream 2a6da14c selects them.
    assert pool["spec"]["selector"]["matchLabels"] == {
        "nvidia.com/dynamo-component-class": "worker",
        "nvidia.com/dynamo-namespace": "ns1-g",
    }


def test_inference_pool_carries_the_epp_services_labels() -> None:
    """The InferencePool is labelled like the EPP component: graph, service key, type epp."""
    [_, pool] = desired_side_objects(dgd({"Epp": service("epp", **EPP_CONFIG)}), EPP_CTX)
    assert pool["metadata"]["labels"] == {
        "nvidia.com/dynamo-component": "Epp",
        "nvidia.com/dynamo-component-type": "epp",
        "nvidia.com/dynamo-graph-deployment-name": "g",
    }


def test_epp_config_map_ref_needs_no_config_map() -> None:
    """With configMapRef only the InferencePool is generated."""
    objs = desired_side_objects(
        dgd({"Epp": service("epp", eppConfig={"configMapRef": {"name": "mine"}})}), EPP_CTX
    )
    assert [o["kind"] for o in objs] == ["InferencePool"]


@pytest.mark.parametrize(
    ("epp", "ctx", "error"),
    [
        pytest.param({}, EPP_CTX, GenerationError, id="no-config"),
        pytest.param({"config": {}, "configMapRef": {"name": "x"}}, EPP_CTX, GenerationError, id="both"),
        pytest.param({"config": {}}, GenContext(namespace=NS), MissingAPIError, id="no-inference-pool-api"),
    ],
)
def test_epp_errors(epp: Obj, ctx: GenContext, error: type[Exception]) -> None:
    """EPP needs exactly one config source and the InferencePool API; errors name the field."""
    with pytest.raises(error, match=r"spec\.services\.Epp\.eppConfig"):
        desired_side_objects(dgd({"Epp": service("epp", eppConfig=epp)}), ctx)


EPP_CHECKS = {
    "grace-130": lambda t: t["spec"]["terminationGracePeriodSeconds"] == 130,
    "service-account": lambda t: t["spec"]["serviceAccountName"] == "epp-serviceaccount",
    "grpc-port": lambda t: (
        {"name": "grpc", "containerPort": 9002, "protocol": "TCP"} in main_container(t)["ports"]
    ),
    "grpc-health-port": lambda t: (
        {"name": "grpc-health", "containerPort": 9003, "protocol": "TCP"} in main_container(t)["ports"]
    ),
    "liveness-grpc": lambda t: (
        main_container(t)["livenessProbe"]["grpc"] == {"port": 9003, "service": "inference-extension"}
    ),
    "startup-180": lambda t: main_container(t)["startupProbe"]["failureThreshold"] == 180,
    "config-volume": lambda t: any(v["name"] == "epp-config" for v in t["spec"]["volumes"]),
    "config-mount": lambda t: (
        {"name": "epp-config", "mountPath": "/etc/epp", "readOnly": True} in main_container(t)["volumeMounts"]
    ),
    "pool-args": lambda t: main_container(t)["args"][:2] == ["--pool-name", "g-pool"],
    "no-command": lambda t: "command" not in main_container(t),
    "env-streaming": lambda t: env_map(main_container(t))["USE_STREAMING"] == "true",
}


@pytest.mark.parametrize("check", [pytest.param(v, id=k) for k, v in EPP_CHECKS.items()])
def test_epp_pod_default(check: Any) -> None:
    """EPP components get their own probes, ports, service account, grace period and config mount."""
    assert check(pod_template(dgd({"Epp": service("epp", **EPP_CONFIG)}), "Epp", EPP_CTX))


def test_missing_image_is_refused() -> None:
    """The operator has no default image: a component without one is refused, naming the field."""
    spec = service("frontend")
    del spec["extraPodSpec"]["mainContainer"]["image"]
    with pytest.raises(GenerationError, match=r"mainContainer\.image"):
        pod_template(dgd({"F": spec}), "F")


# --- a DCD outside any graph --------------------------------------------------------------------------


def _standalone_mp_dcd(**annotations: str) -> Obj:
    """A multinode vLLM DCD nobody's graph owns (applied on its own by a user)."""
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoComponentDeployment",
        "metadata": {"name": "solo", "namespace": NS, "uid": "solo-uid"},
        "spec": {
            **service(
                "worker",
                multinode={"nodeCount": 2},
                resources={"limits": {"gpu": "8"}},
                annotations={"nvidia.com/vllm-distributed-executor-backend": "mp", **annotations},
                extraPodSpec={"mainContainer": {"args": ["--model", "m", "--tensor-parallel-size", "16"]}},
            ),
            "backendFramework": "vllm",
        },
    }


def test_a_standalone_multinode_dcd_writes_the_wait_leader_script_its_workers_mount() -> None:
    """Outside a graph nobody else writes the script: the DCD writes it, owned by itself, under the
    name its worker pods mount."""
    objects = desired_component_objects(_standalone_mp_dcd(), EPP_CTX)
    [cm] = [o for o in objects if o["kind"] == "ConfigMap"]
    [lws] = [o for o in objects if o["kind"] == "LeaderWorkerSet"]
    volumes = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["volumes"]
    assert {"name": "wait-leader-script", "configMap": {"name": cm["metadata"]["name"]}} in volumes
    assert cm["metadata"]["name"] == "solo-wait-leader-script"
    assert "wait-for-leader.py" in cm["data"]
    assert [(r["kind"], r["name"]) for r in cm["metadata"]["ownerReferences"]] == [
        ("DynamoComponentDeployment", "solo")
    ]


def test_a_standalone_multinode_dcd_that_mounts_no_script_writes_none() -> None:
    """Ray workers wait for their head another way (an init container of their own): no ConfigMap."""
    objects = desired_component_objects(
        _standalone_mp_dcd(**{"nvidia.com/vllm-distributed-executor-backend": "ray"}), EPP_CTX
    )
    assert [o for o in objects if o["kind"] == "ConfigMap"] == []


def test_a_graphs_dcd_leaves_the_wait_leader_script_to_its_graph() -> None:
    """In a graph the graph writes the one script all its multinode services mount."""
    graph = dgd({"W": service("worker", multinode={"nodeCount": 2})})
    assert [o for o in objects_of(graph, "W", EPP_CTX) if o["kind"] == "ConfigMap"] == []
