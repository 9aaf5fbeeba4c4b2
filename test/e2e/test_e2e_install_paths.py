"""The three ways to install the operator, each exercised end to end on a fresh local control plane of
its own (the suite's shared cluster keeps its operator): `make build-installer` + `kubectl apply`,
`make deploy IMG=...` / `make undeploy` / `make uninstall`, and the Helm chart (cluster-wide, then
restricted to one namespace by `helm upgrade`).

kwok would only simulate the operator's pod, so after each install the Deployment is scaled to zero and
the operator runs here as a process with the installed ServiceAccount's token and the installed
Deployment's own arguments (addresses moved to free loopback ports): the installed RBAC and flags are
what it runs with. Tests run in file order and leave the cluster as they found it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from localcluster import LocalCluster, free_ports
from testsupport.cluster import Kubectl, KubectlError

pytestmark = [pytest.mark.cluster]

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "config" / "samples"
CHART = REPO / "deploy" / "helm" / "dynamo-operator"
IMG = "registry.example/team/dynamo-operator:e2e"
NS, DEPLOY, SA = "dynamo-system", "dynamo-operator-controller-manager", "dynamo-operator-controller-manager"
CRDS = [
    "dynamocomponentdeployments.nvidia.com",
    "dynamographdeployments.nvidia.com",
    "dynamographdeploymentrequests.nvidia.com",
    "dynamographdeploymentscalingadapters.nvidia.com",
    "dynamomodels.nvidia.com",
]
TIMEOUT = 180.0
T = TypeVar("T")


def wait_for(probe: Callable[[], T], what: str, timeout: float = TIMEOUT, interval: float = 1.0) -> T:
    """Poll until probe() is truthy (bounded); its last value on success."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what} (last: {value!r})")
        time.sleep(interval)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    if os.environ.get("DYNAMO_E2E_MODE") == "kind":
        pytest.skip("installs and removes the operator cluster-wide: needs a throwaway local control plane")
    work = tmp_path_factory.mktemp("install-paths")
    cluster = LocalCluster(f"e2e-install-{os.getpid()}", state_dir=work / "cluster", owner_pid=os.getpid())
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


@pytest.fixture(scope="module")
def kc(fresh: LocalCluster) -> Kubectl:
    return Kubectl(fresh.kubeconfig)


def make(fresh: LocalCluster, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["KUBECONFIG"] = fresh.kubeconfig
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )


def helm(fresh: LocalCluster, *args: str) -> str:
    path = subprocess.run(
        ["bash", "-c", f'. "{REPO}/hack/cluster-versions.sh" && printf %s "$HELM_BIN_DIR/helm"'],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    if not Path(path).is_file():
        pytest.fail(f"helm is not built ({path}): `make test-e2e` builds it (make helm)", pytrace=False)
    done = subprocess.run(
        [path, f"--kubeconfig={fresh.kubeconfig}", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def config_digest() -> str:
    h = hashlib.sha256()
    for path in sorted((REPO / "config").rglob("*")):
        if path.is_file():
            h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


def exists(kc: Kubectl, *what: str) -> bool:
    try:
        kc("get", *what)
    except KubectlError:
        return False
    return True


def served_crds(kc: Kubectl) -> list[str]:
    return sorted(c for c in CRDS if exists(kc, "crd", c))


@contextlib.contextmanager
def operator(
    fresh: LocalCluster, kc: Kubectl, tmp: Path, *, namespace: str = NS, deployment: str = DEPLOY
) -> Iterator[Path]:
    """The installed operator as a local process: its Deployment scaled to zero, then the Deployment's
    arguments run with a token of its ServiceAccount. Yields the log path; stops it (SIGTERM) after."""
    dep = kc.json("get", "deployment", deployment, "-n", namespace)
    kc("scale", "deployment", deployment, "-n", namespace, "--replicas=0")
    pod = dep["spec"]["template"]["spec"]
    [manager] = pod["containers"]
    metrics, health = free_ports(2)
    moved = {
        "--metrics-bind-address": f"127.0.0.1:{metrics}",
        "--health-probe-bind-address": f"127.0.0.1:{health}",
    }
    args = []
    for arg in manager["args"]:
        name, _, value = arg.partition("=")
        args.append(f"{name}={moved[name]}" if name in moved and value != "0" else arg)
    kubeconfig = fresh.token_kubeconfig(pod["serviceAccountName"], namespace, tmp / "operator.kubeconfig")
    exe = Path(sys.executable).with_name("dynamo-operator")
    log = tmp / "operator.log"
    env = {**os.environ, "POD_NAMESPACE": namespace, "PYTHONSAFEPATH": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen([exe, f"--kubeconfig={kubeconfig}", *args], stdout=out, stderr=out, env=env)
    try:

        def ready() -> bool:
            assert proc.poll() is None, f"the operator exited: {log.read_text()[-2000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{health}/readyz", timeout=2) as resp:
                    return resp.status == 200
            except OSError:
                return False

        wait_for(ready, "operator /readyz", timeout=60, interval=0.5)
        yield log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def no_forbidden(log: Path) -> None:
    """The installed RBAC covered everything the operator did (so far: removing the operator's own RBAC
    later is no finding)."""
    denied = [line[:300] for line in log.read_text(errors="replace").splitlines() if "Forbidden" in line]
    assert not denied, "\n".join(denied[:5])


def graph_ready(kc: Kubectl, ns: str, name: str) -> bool:
    try:
        dgd = kc.json("get", "dgd", name, "-n", ns)
    except KubectlError:
        return False
    conds = {c["type"]: c for c in (dgd.get("status") or {}).get("conditions") or ()}
    ready = conds.get("Ready", {})
    return ready.get("status") == "True" and ready.get("observedGeneration") == dgd["metadata"]["generation"]


def new_namespace(kc: Kubectl, name: str) -> str:
    kc("create", "namespace", name)
    kc("wait", "--for=create", "serviceaccount/default", "-n", name, "--timeout=30s", timeout=40)
    return name


def apply_sample(kc: Kubectl, ns: str, *names: str) -> None:
    for name in names:
        kc("apply", "--server-side", "-n", ns, "-f", str(SAMPLES / f"nvidia.com_v1alpha1_{name}.yaml"))


def wait_gone(kc: Kubectl, *what: str, timeout: float = TIMEOUT) -> None:
    wait_for(lambda: not exists(kc, *what), f"{' '.join(what)} deleted", timeout=timeout)


def test_build_installer_is_one_file_that_installs_the_operator(
    fresh: LocalCluster, kc: Kubectl, tmp_path: Path
) -> None:
    """`make build-installer IMG=...` → dist/install.yaml (here a temp path) → `kubectl apply -f`: the
    operator runs IMG, with its CRDs and RBAC; `kubectl delete -f` removes it all again."""
    installer = tmp_path / "install.yaml"
    done = make(fresh, "build-installer", f"IMG={IMG}", f"INSTALLER={installer}")
    assert done.returncode == 0, done.stderr
    kc("apply", "--server-side", "-f", str(installer), timeout=120)
    kc("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", timeout=70)
    image = kc(
        "get", "deployment", DEPLOY, "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"
    )
    assert image == IMG
    assert served_crds(kc) == sorted(CRDS)
    kc("delete", "-f", str(installer), "--ignore-not-found", "--wait=true", timeout=180)
    assert served_crds(kc) == []


def test_make_deploy_honours_img_and_undeploy_clears_a_lora_models_finalizer(
    fresh: LocalCluster, kc: Kubectl, tmp_path: Path
) -> None:
    """`make deploy IMG=...` runs that image (the tree is not edited); with a graph and a LoRA model
    (whose finalizer needs the operator) in place, `make undeploy` deletes the custom resources while
    the operator still runs, then the operator, and keeps the CRDs; `make uninstall` removes those."""
    before = config_digest()
    done = make(fresh, "deploy", f"IMG={IMG}")
    assert done.returncode == 0, done.stderr
    assert config_digest() == before, "make deploy edited the committed tree"
    image = kc(
        "get", "deployment", DEPLOY, "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"
    )
    assert image == IMG
    ns = new_namespace(kc, "install-kustomize")
    with operator(fresh, kc, tmp_path) as log:
        apply_sample(kc, ns, "dynamographdeployment_vllm_agg", "dynamomodel_lora")
        wait_for(lambda: graph_ready(kc, ns, "vllm-agg"), "vllm-agg Ready")
        wait_for(
            lambda: "nvidia.com/finalizer" in kc("get", "dm", "qwen3-0-6b-sql-lora", "-n", ns, "-o", "json"),
            "the LoRA model's finalizer",
        )
        no_forbidden(log)
        done = make(fresh, "undeploy", timeout=TIMEOUT + 60)
        assert done.returncode == 0, done.stderr
    assert not exists(kc, "dm", "qwen3-0-6b-sql-lora", "-n", ns)
    assert json.loads(kc("get", "dgd", "-A", "-o", "json"))["items"] == []
    assert served_crds(kc) == sorted(CRDS), "undeploy keeps the CRDs"
    assert not exists(kc, "clusterrole", "dynamo-operator-manager-role")
    wait_gone(kc, "namespace", NS)

    done = make(fresh, "uninstall", timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: served_crds(kc) == [], "CRDs removed by make uninstall")
    kc("delete", "namespace", ns, "--wait=false")


def test_helm_chart_installs_an_operator_that_reconciles_and_uninstalls_keeping_the_crds(
    fresh: LocalCluster, kc: Kubectl, tmp_path: Path
) -> None:
    """`helm install` with default values: the operator, run with the chart's ServiceAccount and arguments
    (secure metrics included), makes a graph Ready; `helm uninstall` after the graph is deleted removes
    the operator but keeps the CRDs (resource policy keep)."""
    repo, tag = IMG.rsplit(":", 1)
    helm(
        fresh, "install", "dynamo-operator", str(CHART), "-n", NS, "--create-namespace",
        "--set", f"controllerManager.manager.image.repository={repo}",
        "--set", f"controllerManager.manager.image.tag={tag}",
    )  # fmt: skip
    kc("wait", "--for=condition=Established", "crd", "--all", "--timeout=60s", timeout=70)
    image = kc(
        "get", "deployment", DEPLOY, "-n", NS, "-o", "jsonpath={.spec.template.spec.containers[0].image}"
    )
    assert image == IMG
    ns = new_namespace(kc, "install-helm")
    with operator(fresh, kc, tmp_path) as log:
        apply_sample(kc, ns, "dynamographdeployment_vllm_agg")
        wait_for(lambda: graph_ready(kc, ns, "vllm-agg"), "vllm-agg Ready")
        kc("delete", "dgd", "vllm-agg", "-n", ns, "--wait=true", timeout=120)
        no_forbidden(log)
    helm(fresh, "uninstall", "dynamo-operator", "-n", NS, "--wait", "--timeout=2m")
    assert not exists(kc, "clusterrole", "dynamo-operator-manager-role")
    assert served_crds(kc) == sorted(CRDS), "the chart's CRDs are kept on uninstall"
    kc("delete", "namespace", ns, "--wait=false")


def test_helm_chart_restricted_to_one_namespace_manages_only_that_one(
    fresh: LocalCluster, kc: Kubectl, tmp_path: Path
) -> None:
    """namespaceRestriction: the operator's rules are a Role in the target namespace; with exactly those
    rights it makes a graph there Ready, without a single 403, and leaves a graph elsewhere alone."""
    team, other = new_namespace(kc, "team-a"), new_namespace(kc, "team-b")
    helm(
        fresh, "install", "team-a", str(CHART), "-n", team,
        "--set", "crds.install=false",
        "--set", "admissionPolicy.enabled=false",
        "--set", "namespaceRestriction.enabled=true",
    )  # fmt: skip
    deployment = "team-a-dynamo-operator-controller-manager"
    assert exists(kc, "role", "team-a-dynamo-operator-manager-role", "-n", team)
    with operator(fresh, kc, tmp_path, namespace=team, deployment=deployment) as log:
        apply_sample(kc, team, "dynamographdeployment_vllm_agg")
        apply_sample(kc, other, "dynamographdeployment_vllm_agg")
        wait_for(lambda: graph_ready(kc, team, "vllm-agg"), "vllm-agg Ready in the managed namespace")
        assert not (kc.json("get", "dgd", "vllm-agg", "-n", other).get("status") or {}).get("conditions")
        assert kc("get", "deployments", "-n", other, "-o", "name") == ""
        kc("delete", "dgd", "vllm-agg", "-n", team, "--wait=true", timeout=120)
        no_forbidden(log)
    helm(fresh, "uninstall", "team-a", "-n", team, "--wait", "--timeout=2m")
    for name in (team, other):
        kc("delete", "namespace", name, "--wait=false")


def test_uninstalled_everything_left_no_operator_object(kc: Kubectl) -> None:
    """What the three paths created is gone (but the CRDs the chart keeps on purpose)."""
    leftovers: list[Any] = [
        o["metadata"]["name"]
        for kind in ("clusterroles", "clusterrolebindings", "validatingadmissionpolicies")
        for o in kc.json("get", kind)["items"]
        if "dynamo-operator" in o["metadata"]["name"]
    ]
    assert leftovers == []
