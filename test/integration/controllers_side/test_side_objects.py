"""Objects a graph needs beside its own children, on the real API server (issue #11 items 1, 2, 5, 7):
the namespace's EPP ServiceAccount and binding, the MPI SSH key Secret (created once, never rotated),
component annotations on the Ingress, and operator-wide env that a user's value overrides.

Each test runs its own in-process operator restricted to the test's namespace, with the flags it
needs, exactly as `dynamo-operator` registers its controllers.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import SECRET, SERVICE_ACCOUNT, Resource
from testsupport.api import eventually
from testsupport.graphs import IMAGE, two_service_graph
from testsupport.operator import (
    CRD_DIR,
    INFERENCE_POOL_CRD,
    LWS_CRD,
    TEST_FIELD_MANAGER,
    install_crds,
    running_operator,
)

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(300)]

ROLE_BINDING = Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding")
INGRESS = Resource("networking.k8s.io", "v1", "ingresses", "Ingress")
EPP_ROLE = "dynamo-test-epp"
TIMEOUT = 90.0
Obj = dict[str, Any]


async def apply(api: Client, obj: Obj) -> Obj:
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


async def get(api: Client, resource: Resource, name: str, ns: str) -> Obj | None:
    try:
        return await api.get(resource, name, namespace=ns)
    except NotFound:
        return None


def epp_graph(name: str, ns: str) -> Obj:
    """An aggregated GAIE graph: an endpoint picker in front of one decode worker."""
    graph = two_service_graph(name, ns)
    services = graph["spec"]["services"]
    del services["Frontend"]
    services["Epp"] = {
        "componentType": "epp",
        "replicas": 1,
        # A whole picker configuration: v1beta1, the stored version, requires schedulingProfiles.
        "eppConfig": {
            "config": {
                "plugins": [{"type": "single-profile-handler"}],
                "schedulingProfiles": [
                    {"name": "default", "plugins": [{"pluginRef": "single-profile-handler"}]}
                ],
            }
        },
        "extraPodSpec": {"mainContainer": {"image": IMAGE}},
    }
    return graph


def trtllm_multinode_graph(name: str, ns: str, *, replicas: int = 1) -> Obj:
    """A TensorRT-LLM graph whose worker spans two nodes (mpirun over SSH)."""
    main = {"image": IMAGE, "command": ["python3", "-m", "dynamo.trtllm"], "args": ["--model-path", "m"]}
    worker = {
        "componentType": "worker",
        "replicas": replicas,
        "multinode": {"nodeCount": 2},
        "resources": {"limits": {"gpu": "8"}},
        "extraPodSpec": {"mainContainer": main},
    }
    return {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "DynamoGraphDeployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"backendFramework": "trtllm", "services": {"Worker": worker}},
    }


# -- item 1: the EPP ServiceAccount --------------------------------------------------------------------


async def test_epp_service_account_and_binding_are_created_and_outlive_one_graph(
    cluster: Any, api: Client, ns: str
) -> None:
    """Two EPP graphs in a namespace: the ServiceAccount and its binding to --epp-cluster-role-name
    exist, owned by no graph, the EPP pods name it, and deleting one graph keeps both."""
    await install_crds(api, [*sorted(CRD_DIR.glob("*.yaml")), LWS_CRD, INFERENCE_POOL_CRD])
    async with running_operator(cluster, ns, f"--epp-cluster-role-name={EPP_ROLE}"):
        await apply(api, epp_graph("a", ns))
        await apply(api, epp_graph("b", ns))
        sa = await eventually(lambda: get(api, SERVICE_ACCOUNT, "epp-serviceaccount", ns), timeout=TIMEOUT)
        binding = await eventually(
            lambda: get(api, ROLE_BINDING, "epp-serviceaccount-binding", ns), timeout=TIMEOUT
        )
        assert "ownerReferences" not in sa["metadata"] and "ownerReferences" not in binding["metadata"]
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": EPP_ROLE,
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": "epp-serviceaccount", "namespace": ns}
        ]
        epp = await eventually(lambda: get(api, kinds.DEPLOYMENT, "a-epp", ns), timeout=TIMEOUT)
        assert epp["spec"]["template"]["spec"]["serviceAccountName"] == "epp-serviceaccount"

        await api.delete(kinds.DGD, "a", namespace=ns)
        await eventually(
            lambda: get(api, kinds.DEPLOYMENT, "a-epp", ns), until=lambda d: d is None, timeout=TIMEOUT
        )
        assert await get(api, SERVICE_ACCOUNT, "epp-serviceaccount", ns) is not None
        assert await get(api, ROLE_BINDING, "epp-serviceaccount-binding", ns) is not None


# -- item 2: the MPI SSH key Secret ---------------------------------------------------------------------


def identity(secret: Obj) -> tuple[str, str, Obj]:
    return secret["metadata"]["uid"], secret["metadata"]["resourceVersion"], secret["data"]


async def test_mpi_secret_is_created_once_and_never_rotated(cluster: Any, api: Client, ns: str) -> None:
    """A multinode graph gets the Secret (upstream's keys, a real RSA key); re-applying the graph, a
    second multinode graph and an operator restart leave it exactly as it was (same uid,
    resourceVersion, data); the LeaderWorkerSet's pods mount it."""
    await install_crds(api)
    async with running_operator(cluster, ns):
        await apply(api, trtllm_multinode_graph("one", ns))
        secret = await eventually(lambda: get(api, SECRET, "mpi-run-ssh-secret", ns), timeout=TIMEOUT)
        first = identity(secret)
        assert set(secret["data"]) == {"private.key", "private.key.pub"} and secret["type"] == "Opaque"
        assert "ownerReferences" not in secret["metadata"]
        await apply(api, trtllm_multinode_graph("one", ns, replicas=2))
        await apply(api, trtllm_multinode_graph("two", ns))
        # One native-scaled LeaderWorkerSet per multinode service: graph "one" at two replicas too.
        lws = await eventually(
            lambda: api.list(kinds.LWS, namespace=ns),
            until=lambda xs: len(xs) == 2 and sorted(x["spec"]["replicas"] for x in xs) == [1, 2],
            timeout=TIMEOUT,
        )
    async with running_operator(cluster, ns):
        await apply(api, trtllm_multinode_graph("three", ns))
        await eventually(
            lambda: api.list(kinds.LWS, namespace=ns), until=lambda xs: len(xs) >= 3, timeout=TIMEOUT
        )
        assert identity(await api.get(SECRET, "mpi-run-ssh-secret", namespace=ns)) == first
    for obj in lws:
        template = obj["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
        secrets = [v["secret"]["secretName"] for v in template.get("volumes") or [] if "secret" in v]
        assert "mpi-run-ssh-secret" in secrets


async def test_deleted_mpi_secret_comes_back_with_a_new_key(cluster: Any, api: Client, ns: str) -> None:
    """Deleting the Secret is how a key is rotated: the operator makes a new one for the graphs there."""
    await install_crds(api)
    async with running_operator(cluster, ns):
        await apply(api, trtllm_multinode_graph("one", ns))
        old = await eventually(lambda: get(api, SECRET, "mpi-run-ssh-secret", ns), timeout=TIMEOUT)
        await api.delete(SECRET, "mpi-run-ssh-secret", namespace=ns)
        new = await eventually(
            lambda: get(api, SECRET, "mpi-run-ssh-secret", ns),
            until=lambda s: s is not None and s["metadata"]["uid"] != old["metadata"]["uid"],
            timeout=TIMEOUT,
        )
        assert new["data"]["private.key"] != old["data"]["private.key"]


async def test_mpi_secret_is_copied_from_the_source_namespace(
    cluster: Any, api: Client, ns: str, kubectl: Any
) -> None:
    """With --mpi-run-ssh-secret-namespace the key pair kept there (made there when absent) is the
    one copied into the graph's namespace."""
    await install_crds(api)
    source = f"{ns}-src"[:63]
    kubectl("create", "namespace", source)
    try:
        async with running_operator(cluster, ns, f"--mpi-run-ssh-secret-namespace={source}"):
            await apply(api, trtllm_multinode_graph("one", ns))
            copied = await eventually(lambda: get(api, SECRET, "mpi-run-ssh-secret", ns), timeout=TIMEOUT)
        kept = await api.get(SECRET, "mpi-run-ssh-secret", namespace=source)
        assert copied["data"] == kept["data"]
    finally:
        kubectl("delete", "namespace", source, "--wait=false", "--ignore-not-found", check=False)


async def test_single_node_graph_gets_no_mpi_secret(cluster: Any, api: Client, ns: str) -> None:
    await install_crds(api)
    async with running_operator(cluster, ns):
        await apply(api, two_service_graph("g", ns))
        await eventually(lambda: get(api, kinds.DEPLOYMENT, "g-frontend", ns), timeout=TIMEOUT)
        assert await get(api, SECRET, "mpi-run-ssh-secret", ns) is None


# -- items 5 and 7: operator-wide env, annotations on the Ingress ------------------------------------------


async def test_component_annotations_reach_the_ingress_and_user_env_wins(
    cluster: Any, api: Client, ns: str
) -> None:
    """A frontend's annotations are on its Ingress (control keys excepted); --nats-address reaches
    every component's env unless the service sets NATS_SERVER itself."""
    await install_crds(api)
    graph = two_service_graph("g", ns)
    frontend = graph["spec"]["services"]["Frontend"]
    frontend["annotations"] = {
        "nginx.ingress.kubernetes.io/proxy-body-size": "64m",
        "nvidia.com/deployment-strategy": "Recreate",
    }
    frontend["ingress"] = {"enabled": True, "host": "chat", "ingressControllerClassName": "nginx"}
    frontend["envs"] = [{"name": "NATS_SERVER", "value": "nats://mine:4222"}]
    async with running_operator(
        cluster, ns, "--nats-address=nats://operator:4222", "--discovery-backend=etcd"
    ):
        await apply(api, graph)
        ingress = await eventually(lambda: get(api, INGRESS, "g-frontend", ns), timeout=TIMEOUT)
        annotations = ingress["metadata"].get("annotations") or {}
        assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == "64m"
        assert "nvidia.com/deployment-strategy" not in annotations

        def env_of(deployment: Obj) -> dict[str, str]:
            [main] = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "main"]
            return {e["name"]: e.get("value", "") for e in main.get("env") or []}

        front = env_of(
            await eventually(lambda: get(api, kinds.DEPLOYMENT, "g-frontend", ns), timeout=TIMEOUT)
        )
        workers = await eventually(
            lambda: api.list(kinds.DEPLOYMENT, namespace=ns),
            until=lambda xs: any("worker" in d["metadata"]["name"] for d in xs),
            timeout=TIMEOUT,
        )
        [worker] = [env_of(d) for d in workers if "worker" in d["metadata"]["name"]]
        assert (front["NATS_SERVER"], worker["NATS_SERVER"]) == ("nats://mine:4222", "nats://operator:4222")
        assert front["DYN_DISCOVERY_BACKEND"] == worker["DYN_DISCOVERY_BACKEND"] == "etcd"
