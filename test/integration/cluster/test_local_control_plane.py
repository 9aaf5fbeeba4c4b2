"""The local control plane does what the operator's tests rely on (issue 2, "Done when")."""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from localcluster import LocalCluster, process_alive
from testsupport import eventually_sync
from testsupport.cluster import Kubectl, KubectlError

pytestmark = pytest.mark.cluster

LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
PHASE_ANNOTATION = "kwok.dynamo.test/phase"
MESSAGE_ANNOTATION = "kwok.dynamo.test/message"
LOCALCLUSTER = Path(__file__).resolve().parents[3] / "hack" / "localcluster.py"


def pods(kubectl: Kubectl, ns: str, selector: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = kubectl.json("get", "pods", "-n", ns, "-l", selector)["items"]
    return items


def running_and_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status", {})
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions", []))
    return status.get("phase") == "Running" and ready


def job_condition(kubectl: Kubectl, ns: str, name: str, type_: str) -> bool:
    job = kubectl.json("get", "job", name, "-n", ns)
    return any(c["type"] == type_ and c["status"] == "True" for c in job["status"].get("conditions", []))


def create(kubectl: Kubectl, obj: dict[str, Any]) -> dict[str, Any]:
    created: dict[str, Any] = json.loads(kubectl("create", "-f", "-", "-o", "json", stdin=json.dumps(obj)))
    return created


def start_job(kubectl: Kubectl, ns: str, name: str, containers: list[str]) -> dict[str, Any]:
    """A one-pod Job that never retries; returns its pod once Running."""
    create(
        kubectl,
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": c, "image": "registry.example/job:1"} for c in containers],
                    }
                },
            },
        },
    )
    [pod] = eventually_sync(
        lambda: pods(kubectl, ns, f"job-name={name}"),
        until=lambda ps: len(ps) == 1 and running_and_ready(ps[0]),
        what=f"the pod of Job {name} Running",
    )
    return pod


def test_deployment_pods_run_ready_on_loopback_ips(kubectl: Kubectl, ns: str) -> None:
    """Three replicas become Running and Ready, with pod and host IPs inside 127.0.0.0/8."""
    kubectl("create", "deployment", "x", "--image=registry.example/x:1", "--replicas=3", "-n", ns)
    ready = eventually_sync(
        lambda: pods(kubectl, ns, "app=x"),
        until=lambda ps: len(ps) == 3 and all(running_and_ready(p) for p in ps),
        what="3 pods Running and Ready",
    )
    ips = [ipaddress.ip_address(p["status"]["podIP"]) for p in ready]
    assert all(ip in LOOPBACK for ip in ips), ips
    assert len(set(ips)) == 3
    assert all(ipaddress.ip_address(p["status"]["hostIP"]) in LOOPBACK for p in ready)


def test_deleting_a_deployment_collects_its_replicaset_and_pods(kubectl: Kubectl, ns: str) -> None:
    """The garbage collector removes the dependents of a deleted Deployment."""
    kubectl("create", "deployment", "gone", "--image=registry.example/x:1", "--replicas=2", "-n", ns)
    eventually_sync(lambda: pods(kubectl, ns, "app=gone"), until=lambda ps: len(ps) == 2, what="2 pods")
    assert len(kubectl.json("get", "replicasets", "-n", ns)["items"]) == 1

    kubectl("delete", "deployment", "gone", "-n", ns, "--wait=false")

    eventually_sync(
        lambda: kubectl.json("get", "replicasets,pods", "-n", ns)["items"],
        until=lambda items: items == [],
        what="ReplicaSet and pods garbage-collected",
    )


def test_job_pod_succeeds_when_annotated(kubectl: Kubectl, ns: str) -> None:
    """A Running Job pod does not finish by itself; the Succeeded annotation completes the Job."""
    pod = start_job(kubectl, ns, "ok", ["main"])
    assert not job_condition(kubectl, ns, "ok", "Complete")

    kubectl("annotate", "pod", pod["metadata"]["name"], "-n", ns, f"{PHASE_ANNOTATION}=Succeeded")

    eventually_sync(lambda: job_condition(kubectl, ns, "ok", "Complete"), what="Job ok Complete")
    [done] = pods(kubectl, ns, "job-name=ok")
    assert done["status"]["phase"] == "Succeeded"
    assert done["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 0


def test_job_pod_fails_with_the_annotated_message(kubectl: Kubectl, ns: str) -> None:
    """The Failed annotation terminates container `main` with exit code 1 and the given message."""
    pod = start_job(kubectl, ns, "bad", ["sidecar", "main"])
    message = "CUDA out of memory: tried to allocate 2 GiB"

    kubectl(
        "annotate", "pod", pod["metadata"]["name"], "-n", ns,
        f"{MESSAGE_ANNOTATION}={message}", f"{PHASE_ANNOTATION}=Failed",
    )  # fmt: skip

    eventually_sync(lambda: job_condition(kubectl, ns, "bad", "Failed"), what="Job bad Failed")
    [failed] = pods(kubectl, ns, "job-name=bad")
    assert failed["status"]["phase"] == "Failed"
    states = {s["name"]: s["state"]["terminated"] for s in failed["status"]["containerStatuses"]}
    assert (states["main"]["exitCode"], states["main"]["reason"], states["main"]["message"]) == (
        1,
        "Error",
        message,
    )
    assert states["sidecar"]["exitCode"] == 0


def test_create_token_yields_a_token_the_apiserver_accepts(kubectl: Kubectl, ns: str) -> None:
    """`kubectl create token default` works and a TokenReview authenticates the ServiceAccount."""
    token = kubectl("create", "token", "default", "-n", ns).strip()
    review = create(
        kubectl, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
    )
    assert review["status"]["authenticated"] is True
    assert review["status"]["user"]["username"] == f"system:serviceaccount:{ns}:default"


def test_token_kubeconfig_acts_as_the_service_account(
    local_cluster: LocalCluster, kubectl: Kubectl, ns: str, tmp_path: Path
) -> None:
    """A token kubeconfig is subject to RBAC: the bare ServiceAccount may not list pods."""
    path = local_cluster.token_kubeconfig("default", ns, tmp_path / "sa.kubeconfig")
    as_sa = Kubectl(path)
    whoami = as_sa.json("auth", "whoami")
    assert whoami["status"]["userInfo"]["username"] == f"system:serviceaccount:{ns}:default"
    with pytest.raises(KubectlError, match="forbidden"):
        as_sa("get", "pods", "-n", ns)


def test_lease_updates_need_the_current_resource_version(kubectl: Kubectl, ns: str) -> None:
    """A Lease can be created and updated; an update carrying a stale resourceVersion conflicts."""
    lease = create(
        kubectl,
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader", "namespace": ns},
            "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
        },
    )
    stale = json.loads(json.dumps(lease))
    lease["spec"]["holderIdentity"] = "b"
    updated = json.loads(kubectl("replace", "-f", "-", "-o", "json", stdin=json.dumps(lease)))
    assert updated["spec"]["holderIdentity"] == "b"
    assert updated["metadata"]["resourceVersion"] != stale["metadata"]["resourceVersion"]

    stale["spec"]["holderIdentity"] = "c"
    with pytest.raises(KubectlError, match="the object has been modified"):
        kubectl("replace", "-f", "-", stdin=json.dumps(stale))
    assert kubectl.json("get", "lease", "leader", "-n", ns)["spec"]["holderIdentity"] == "b"


def _cli(*args: str, state_dir: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(LOCALCLUSTER), *args, "--name=pytest-second", f"--state-dir={state_dir}"],
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_down_leaves_no_process_or_state_and_up_works_again(
    local_cluster: LocalCluster, tmp_path: Path
) -> None:
    """Through the CLI: up, up again (no-op), down, down again (no-op), and a second up and down."""
    state_dir = tmp_path / "second"
    for _ in range(2):
        kubeconfig = _cli("up", "--nodes=1", state_dir=state_dir)
        assert _cli("up", "--nodes=1", state_dir=state_dir) == kubeconfig
        assert Kubectl(kubeconfig)("get", "--raw", "/readyz") == "ok"
        recorded = json.loads((state_dir / "state.json").read_text())["components"]
        assert len(recorded) == 5
        assert all(process_alive(c["pid"], c["exe"]) for c in recorded.values())

        _cli("down", state_dir=state_dir)
        _cli("down", state_dir=state_dir)

        assert not state_dir.exists()
        assert [c["pid"] for c in recorded.values() if process_alive(c["pid"])] == []


WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.gc.dynamo.test}
spec:
  group: gc.dynamo.test
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
"""
# Well inside the 30 s after which the controller-manager's garbage collector re-reads discovery: a
# dependent collected sooner was collected because its owner's kind was known from the start.
GC_BOUND_SECONDS = 10.0


def test_crds_installed_by_up_are_known_to_the_garbage_collector_from_the_start(
    local_cluster: LocalCluster, tmp_path: Path
) -> None:
    """`up --crds`: the CRDs are Established when up returns, and a dependent of a custom object
    deleted at once is collected without waiting for the garbage collector's next discovery."""
    crd = tmp_path / "widget-crd.yaml"
    crd.write_text(WIDGET_CRD)
    state_dir = tmp_path / "second"
    try:
        kubectl = Kubectl(_cli("up", "--nodes=1", f"--crds={crd}", state_dir=state_dir))
        owner = create(
            kubectl,
            {
                "apiVersion": "gc.dynamo.test/v1",
                "kind": "Widget",
                "metadata": {"name": "w", "namespace": "default"},
            },
        )
        reference = {
            "apiVersion": "gc.dynamo.test/v1",
            "kind": "Widget",
            "name": "w",
            "uid": owner["metadata"]["uid"],
        }
        create(
            kubectl,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "dependent", "namespace": "default", "ownerReferences": [reference]},
            },
        )
        kubectl("delete", "widget", "w", "-n", "default", "--wait=false")

        def dependent_gone() -> bool:
            return kubectl("get", "configmap", "-n", "default", "-o", "name").find("configmap/dependent") < 0

        eventually_sync(dependent_gone, timeout=GC_BOUND_SECONDS)
    finally:
        _cli("down", state_dir=state_dir)


def test_fault_hooks_restart_components_and_expire_history(
    local_cluster: LocalCluster, kubectl: Kubectl, ns: str
) -> None:
    """A stopped component comes back on the same port; after compact_etcd and an apiserver
    restart, a watch from an older resourceVersion gets 410 Expired."""
    server = local_cluster.server
    local_cluster.stop_component("kwok")
    assert "kwok" not in local_cluster.pids()
    local_cluster.start_component("kwok")
    assert "kwok" in local_cluster.pids()

    old_rv = create(
        kubectl, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": ns}}
    )["metadata"]["resourceVersion"]
    kubectl("create", "configmap", "b", "-n", ns)  # moves the revision past old_rv
    assert local_cluster.compact_etcd() > int(old_rv)
    # 400 is the default: the flag travels, and later tests in this session are not throttled.
    local_cluster.restart_apiserver(["--max-requests-inflight=400"])
    assert local_cluster.server == server
    cmdline = Path(f"/proc/{local_cluster.pids()['kube-apiserver']}/cmdline").read_bytes().split(b"\0")
    assert b"--max-requests-inflight=400" in cmdline

    # The restarted watch cache starts at the current revision: anything older has expired.
    stream = kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={old_rv}")
    event = json.loads(stream.splitlines()[0])
    assert (event["type"], event["object"]["code"]) == ("ERROR", 410)


@pytest.mark.fault
def test_pods_stay_ready_when_the_fake_kubelet_stalls(tmp_path: Path) -> None:
    """kwok silent for longer than kcm's node grace period (50 s) leaves its pods Ready and the Node
    untainted: a starved fake kubelet must not hang rollouts (kwok never re-reports a pod Ready)."""
    state_dir = tmp_path / "stall"
    kubectl = Kubectl(_cli("up", "--nodes=1", state_dir=state_dir))
    try:
        kubectl("create", "deployment", "web", "--image=registry.example/web:1", "--replicas=2")
        eventually_sync(
            lambda: pods(kubectl, "default", "app=web"),
            until=lambda ps: len(ps) == 2 and all(running_and_ready(p) for p in ps),
            what="two web pods Ready",
        )
        stalled = LocalCluster("pytest-second", state_dir=state_dir)
        stalled.stop_component("kwok")
        time.sleep(65)  # past the 50 s grace period and one 5 s node-monitor period
        stalled.start_component("kwok")

        after = pods(kubectl, "default", "app=web")
        assert len(after) == 2 and all(running_and_ready(p) for p in after)
        [node] = kubectl.json("get", "nodes")["items"]
        assert not node["spec"].get("taints")
    finally:
        _cli("down", state_dir=state_dir)
