"""Helpers of the multinode tests: the graphs they deploy, and what the real controllers made of them."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import testsupport
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource
from testsupport.api import eventually
from testsupport.cluster import Cluster
from testsupport.components import COMPONENT_LABEL, GRAPH_LABEL
from testsupport.grove_standin import GroveStandIn
from testsupport.objects import condition
from testsupport.operator import TEST_FIELD_MANAGER
from testsupport.volumes import bind_volume

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "config" / "samples"
UPSTREAM = REPO.parent / "shared" / "upstream-examples"
STATEFUL_SET = Resource("apps", "v1", "statefulsets", "StatefulSet")

LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"
READY_TIMEOUT = 180.0
T = TypeVar("T")


ENABLE_GROVE_ANNOTATION = "nvidia.com/enable-grove"


def documents(path: Path, namespace: str) -> list[dict[str, Any]]:
    """Every document of a manifest file, placed in `namespace`. Graphs opt out of Grove (the
    documented `nvidia.com/enable-grove: "false"`): this session runs Grove's operator too, and the
    session operator would otherwise run every new graph as a PodCliqueSet, not through LWS."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
        if doc.get("kind") == "DynamoGraphDeployment":
            annotations = doc["metadata"].setdefault("annotations", {})
            annotations[ENABLE_GROVE_ANNOTATION] = "false"
    return docs


def graph_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    [dgd] = [d for d in docs if d["kind"] == "DynamoGraphDeployment"]
    return dgd


def multinode_services(dgd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {svc: spec for svc, spec in dgd["spec"]["services"].items() if spec.get("multinode")}


async def apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    """Apply as the test's own field manager (edits never fight the operator's)."""
    return await api.apply(kinds.resource_of(obj), copy.deepcopy(obj), field_manager=TEST_FIELD_MANAGER)


def _claim(docs: list[dict[str, Any]], pvc: dict[str, Any], namespace: str) -> dict[str, Any] | None:
    """The claim the user brings for a graph PVC: the file's own, else a small one; None when the
    operator creates it (`create: true`)."""
    for doc in docs:
        if doc["kind"] == "PersistentVolumeClaim" and doc["metadata"]["name"] == pvc["name"]:
            return doc
    if pvc.get("create"):
        return None
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": pvc["name"], "namespace": namespace},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }


async def deploy(api: Client, docs: list[dict[str, Any]]) -> list[str]:
    """Apply the manifests (the graph last), with a PersistentVolume pre-bound to every claim the graph
    mounts (no provisioner here) and the claim itself when the user is to bring it and the file has
    none; returns the PersistentVolumes' names."""
    dgd = graph_of(docs)
    namespace = dgd["metadata"]["namespace"]
    docs = list(docs)
    volumes = []
    for pvc in dgd["spec"].get("pvcs") or ():
        claim = _claim(docs, pvc, namespace)
        if claim is not None and claim not in docs:
            docs.insert(0, claim)
        claim_spec = (claim or {}).get("spec") or {}
        volume = await bind_volume(
            api,
            namespace,
            pvc["name"],
            storage=claim_spec.get("resources", {}).get("requests", {}).get("storage")
            or pvc.get("size")
            or "1Gi",
            access_modes=claim_spec.get("accessModes") or [pvc.get("volumeAccessMode") or "ReadWriteOnce"],
            storage_class=claim_spec.get("storageClassName", "")
            if claim
            else pvc.get("storageClass") or "standard",
            field_manager=TEST_FIELD_MANAGER,
        )
        volumes.append(volume)
    for doc in sorted(docs, key=lambda d: d["kind"] == "DynamoGraphDeployment"):
        await apply(api, doc)
    return volumes


def is_ready(dgd: dict[str, Any]) -> bool:
    """`successful`, Ready=True, for the current generation."""
    status = dgd.get("status") or {}
    return (
        status.get("state") == "successful"
        and condition(dgd, "Ready").get("status") == "True"
        and status.get("observedGeneration") == dgd["metadata"].get("generation")
    )


async def wait_graph(api: Client, namespace: str, name: str, *, ready: bool = True) -> dict[str, Any]:
    """The DGD once it is (or, with ready=False, is no longer) Ready."""
    dgd: dict[str, Any] = await eventually(
        lambda: api.get(kinds.DGD, name, namespace=namespace),
        until=lambda d: is_ready(d) == ready,
        timeout=READY_TIMEOUT,
    )
    return dgd


async def sets_of(api: Client, namespace: str, graph: str, service: str) -> list[dict[str, Any]]:
    """The service's LeaderWorkerSets, by name."""
    found = await api.list(
        kinds.LWS, namespace=namespace, label_selector=f"{GRAPH_LABEL}={graph},{COMPONENT_LABEL}={service}"
    )
    live = [s for s in found if not s["metadata"].get("deletionTimestamp")]
    return sorted(live, key=lambda s: str(s["metadata"]["name"]))


async def pods_of(api: Client, namespace: str, lws: str) -> list[dict[str, Any]]:
    """The live pods of one LeaderWorkerSet (leader and workers), by name."""
    found = await api.list(kinds.POD, namespace=namespace, label_selector=f"{LWS_NAME_LABEL}={lws}")
    live = [p for p in found if not p["metadata"].get("deletionTimestamp")]
    return sorted(live, key=lambda p: str(p["metadata"]["name"]))


def running_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and condition(pod, "Ready").get("status") == "True"


def groups_of(pods: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The pods of one LeaderWorkerSet by group index (LWS's label), each group's pods by name."""
    out: dict[str, list[dict[str, Any]]] = {}
    for pod in pods:
        out.setdefault(str((pod["metadata"].get("labels") or {}).get(GROUP_INDEX_LABEL)), []).append(pod)
    return out


def is_leader(pod: dict[str, Any]) -> bool:
    return (pod["metadata"].get("labels") or {}).get(WORKER_INDEX_LABEL) == "0"


def owner_kind(obj: dict[str, Any]) -> tuple[str, str]:
    [owner] = [o for o in obj["metadata"].get("ownerReferences") or () if o.get("controller")]
    return str(owner["kind"]), str(owner["name"])


PODGANG = Resource("scheduler.grove.io", "v1alpha1", "podgangs", "PodGang")  # Grove's, not ours to watch
STANDIN, REAL = "standin", "real"


@dataclass(frozen=True, slots=True)
class GroveBackend:
    """What plays Grove's operator for a test: the simulation (`standin`, always) or Grove's real
    operator (`real`, a process of the local cluster, when GROVE_OPERATOR names its binary)."""

    name: str
    cluster: Cluster
    standin: GroveStandIn | None = None

    def diagnostics(self) -> tuple[str, list[str]]:
        """(what, lines) for a timed-out wait: the stand-in's failed writes, or the real operator's log."""
        if self.standin is not None:
            return "the stand-in's last failed writes", list(self.standin.errors)
        return "grove-operator.log", []

    def log(self) -> Path | None:
        if self.standin is None and self.cluster.local is not None:
            return self.cluster.local.log_path("grove-operator")
        return None


GROVE_KINDS = {
    "PodClique": kinds.POD_CLIQUE,
    "PodCliqueScalingGroup": kinds.POD_CLIQUE_SCALING_GROUP,
    "PodGang": PODGANG,
}


def _log_lines_naming(log: Path, namespace: str, count: int) -> list[str]:
    if not log.exists():
        return []
    named = [line for line in log.read_text(errors="replace").splitlines() if namespace in line]
    return [line[:400] for line in named[-count:]]


async def grove_state(
    api: Client, namespace: str, log: Path | None = None, notes: tuple[str, list[str]] | None = None
) -> str:
    """What Grove and the cluster made in `namespace`, one line per object, for a timed-out wait's
    message: each PodClique's replicas and conditions, each pod's phase, gates and node, and the
    newest lines of Grove's log that name the namespace (CI keeps nothing else once the cluster is
    torn down)."""
    lines = []
    for kind, resource in GROVE_KINDS.items():
        for obj in await api.list(resource, namespace=namespace):
            status = obj.get("status") or {}
            conditions = {
                c.get("type"): (c.get("status"), c.get("reason")) for c in status.get("conditions") or ()
            }
            counts = {k: v for k, v in status.items() if not isinstance(v, (dict, list))}
            replicas = obj["spec"].get("replicas")
            lines.append(f"{kind}/{obj['metadata']['name']} spec.replicas={replicas} {counts} {conditions}")
    for pod in await api.list(kinds.POD, namespace=namespace):
        spec, status = pod["spec"], pod.get("status") or {}
        lines.append(
            f"Pod/{pod['metadata']['name']} phase={status.get('phase')} ready={running_ready(pod)}"
            f" gates={[g['name'] for g in spec.get('schedulingGates') or ()]} node={spec.get('nodeName')}"
            f" deleting={bool(pod['metadata'].get('deletionTimestamp'))}"
        )
    if log is not None:
        lines.append(f"--- last lines of {log.name} naming {namespace}:")
        lines.extend(await asyncio.to_thread(_log_lines_naming, log, namespace, 15))
    if notes is not None and notes[1]:
        lines.append(f"--- {notes[0]}:")
        lines.extend(notes[1])
    return "\n".join(lines)


def grove_documents(path: Path, namespace: str) -> list[dict[str, Any]]:
    """Every document of a manifest file, placed in `namespace`, as a user applies it: no Grove opt-out,
    so with Grove served the graph takes the Grove pathway."""
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    for doc in docs:
        doc["metadata"]["namespace"] = namespace
    return docs


async def eventually_on_grove(
    api: Client,
    namespace: str,
    probe: Callable[[], Awaitable[T]],
    *,
    until: Callable[[T], bool] | None = None,
    grove: GroveBackend,
    what: str = "",
) -> T:
    """`eventually` bounded by READY_TIMEOUT; on timeout the AssertionError also says what Grove and
    the cluster made in `namespace` (`grove_state`, with Grove's log when the real operator runs on a
    local cluster, the stand-in's failed writes when it plays Grove)."""
    try:
        return await testsupport.eventually(probe, until=until, timeout=READY_TIMEOUT, what=what)
    except AssertionError as e:
        state = await grove_state(api, namespace, grove.log(), grove.diagnostics())
        raise AssertionError(f"[grove: {grove.name}] {e}\n{state}") from e
