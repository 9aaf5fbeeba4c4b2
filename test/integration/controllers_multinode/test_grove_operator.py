"""Grove (its stand-in, and its real operator when GROVE_OPERATOR is set: the `grove` fixture, see
conftest.py) in the local cluster: a PodCliqueSet shaped exactly as
upstream's operator writes it for a multinode graph (upstream-examples/golden-grove) becomes
PodCliques, PodCliqueScalingGroups and a PodGang; Grove lifts its scheduling gate, kube-scheduler
places the pods, kwok runs them, and Grove reports them ready. No status here is written by a test.
The PodCliqueSets pass Grove's own CRD schema on the way in.

Against the real operator this proves the controller, not our pathway; against the stand-in it pins
the simulation to what the real operator does (which generates the PodCliqueSet from a graph): that one
builds on this fixture.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import PERSISTENT_VOLUME_CLAIM as PVC
from dynamo_operator.internal.client.resource import POD, SERVICE_ACCOUNT
from integration.controllers_multinode.multinode_testlib import (
    PODGANG,
    UPSTREAM,
    GroveBackend,
    condition,
    grove_state,
    running_ready,
)
from testsupport.api import eventually
from testsupport.volumes import bind_volume, delete_volumes

pytestmark = [pytest.mark.cluster, pytest.mark.addons("grove")]

PCS = kinds.POD_CLIQUE_SET
PCLQ = kinds.POD_CLIQUE
PCSG = kinds.POD_CLIQUE_SCALING_GROUP
PCS_LABEL = "app.kubernetes.io/part-of"
GOLDENS = {
    backend: UPSTREAM / "golden-grove" / f"backends_{backend}_disagg-multinode.json"
    for backend in ("vllm", "sglang", "trtllm")
}
TIMEOUT = 180.0
FIELD_MANAGER = "integration-test"


def golden(backend: str, namespace: str) -> dict[str, dict[str, Any]]:
    """The golden's objects (Kind/name -> object), placed in `namespace`."""
    text = GOLDENS[backend].read_text().replace("<ns>", namespace)
    objects: dict[str, dict[str, Any]] = json.loads(text)
    return objects


def podcliqueset(objects: dict[str, dict[str, Any]], namespace: str) -> dict[str, Any]:
    [pcs] = [copy.deepcopy(o) for k, o in objects.items() if k.startswith("PodCliqueSet/")]
    # Owned by a DGD in the golden; none exists here.
    pcs["metadata"].pop("ownerReferences", None)
    pcs["metadata"]["namespace"] = namespace
    return pcs


async def prerequisites(api: Client, pcs: dict[str, Any], namespace: str) -> list[str]:
    """What the pods need from outside the PodCliqueSet: their ServiceAccounts (admission refuses a pod
    without one) and bound claims for the PVCs they mount; returns the PersistentVolumes made."""
    accounts, claims = set(), set()
    for clique in pcs["spec"]["template"]["cliques"]:
        pod = clique["spec"]["podSpec"]
        if pod.get("serviceAccountName"):
            accounts.add(pod["serviceAccountName"])
        claims |= {
            v["persistentVolumeClaim"]["claimName"]
            for v in pod.get("volumes") or ()
            if "persistentVolumeClaim" in v
        }
    for name in sorted(accounts):
        sa = {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": name, "namespace": namespace},
        }
        await api.apply(SERVICE_ACCOUNT, sa, field_manager=FIELD_MANAGER)
    volumes = []
    for claim in sorted(claims):
        pv = await bind_volume(
            api, namespace, claim, access_modes=["ReadWriteMany"], field_manager=FIELD_MANAGER
        )
        volumes.append(pv)
        await api.apply(
            PVC,
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim, "namespace": namespace},
                "spec": {
                    "accessModes": ["ReadWriteMany"],
                    "storageClassName": "",
                    "volumeName": pv,
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
            field_manager=FIELD_MANAGER,
        )
    return volumes


async def grove_reports_ready(api: Client, namespace: str, name: str, replicas: int) -> bool:
    """The PodCliqueSet observed, every PodClique and scaling group ready as Grove counts it, every
    pod of it Running and Ready, placed by kube-scheduler after Grove lifted its gate."""
    pcs = await api.get(PCS, name, namespace=namespace)
    # Not the PodCliqueSet's own `availableReplicas`: Grove (v0.1.0-alpha.6) recomputes it only when a
    # scaling group's MinAvailableBreached condition flips, so when a group's availableReplicas turns 1
    # after the PodCliqueSet last looked, it keeps 0 with every pod ready (1 PodCliqueSet in 8 created
    # at once here; CI hit it once). Our Grove pathway reads PodCliques and scaling groups for that
    # reason; so does this check, below.
    assert (pcs.get("status") or {}).get("observedGeneration") == pcs["metadata"]["generation"], pcs.get(
        "status"
    )
    assert pcs["spec"]["replicas"] == replicas
    cliques = await api.list(PCLQ, namespace=namespace)
    assert cliques
    for clique in cliques:
        status = clique.get("status") or {}
        assert status.get("readyReplicas") == clique["spec"]["replicas"], (clique["metadata"]["name"], status)
        assert condition(clique, "PodCliqueScheduled").get("status") == "True"
    for group in await api.list(PCSG, namespace=namespace):
        assert (group.get("status") or {}).get("availableReplicas") == group["spec"]["replicas"], group.get(
            "status"
        )
    pods = [p for p in await api.list(POD, namespace=namespace) if not p["metadata"].get("deletionTimestamp")]
    assert len(pods) == sum(c["spec"]["replicas"] for c in cliques)
    for pod in pods:
        assert running_ready(pod), pod["metadata"]["name"]
        assert not pod["spec"].get("schedulingGates")
        assert pod["spec"].get("schedulerName", "default-scheduler") == "default-scheduler"
        assert pod["spec"].get("nodeName")
    assert await api.list(PODGANG, namespace=namespace)
    return True


async def wait_grove_ready(
    api: Client, grove: GroveBackend, namespace: str, name: str, replicas: int
) -> None:
    """Until Grove reports the PodCliqueSet ready; a timeout says what Grove had made by then."""
    try:
        await eventually(lambda: grove_reports_ready(api, namespace, name, replicas), timeout=TIMEOUT)
    except AssertionError as e:
        state = await grove_state(api, namespace, grove.log(), grove.diagnostics())
        raise AssertionError(f"[grove: {grove.name}] {e}\n{state}") from e


@pytest.mark.parametrize("backend", sorted(GOLDENS))
async def test_grove_runs_upstreams_multinode_podcliqueset_to_ready(
    api: Client, grove: GroveBackend, short_ns: str, backend: str
) -> None:
    """vLLM, SGLang and TRT-LLM (whose leaders start after their workers: Grove's init container)
    disaggregated multinode PodCliqueSets, as upstream writes them, run to ready under Grove."""
    ns = short_ns
    pcs = podcliqueset(golden(backend, ns), ns)
    volumes = await prerequisites(api, pcs, ns)
    try:
        await api.apply(PCS, pcs, field_manager=FIELD_MANAGER)
        await wait_grove_ready(api, grove, ns, pcs["metadata"]["name"], pcs["spec"]["replicas"])
    finally:
        await delete_volumes(api, volumes)


async def test_grove_scales_a_multinode_scaling_group(
    api: Client, grove: GroveBackend, short_ns: str
) -> None:
    """Scaling a PodCliqueScalingGroup through its scale subresource (how upstream scales a multinode
    service on Grove, and what an autoscaler does) makes Grove add a whole leader + worker set of
    PodCliques and their pods, all ready."""
    ns = short_ns
    pcs = podcliqueset(golden("vllm", ns), ns)
    name = pcs["metadata"]["name"]
    await prerequisites(api, pcs, ns)
    await api.apply(PCS, pcs, field_manager=FIELD_MANAGER)
    await wait_grove_ready(api, grove, ns, name, 1)
    before = len(await api.list(PCLQ, namespace=ns))
    [decode] = [g for g in pcs["spec"]["template"]["podCliqueScalingGroups"] if g["name"] == "decode"]
    group = f"{name}-0-decode"
    await api.patch(PCSG, group, {"spec": {"replicas": 2}}, namespace=ns, subresource="scale")
    await eventually(
        lambda: api.list(PCLQ, namespace=ns),
        until=lambda xs: len(xs) == before + len(decode["cliqueNames"]),
        timeout=TIMEOUT,
    )
    await wait_grove_ready(api, grove, ns, name, 1)
    assert (await api.get(PCSG, group, namespace=ns))["status"]["availableReplicas"] == 2


def _env(pod: dict[str, Any]) -> dict[str, str | None]:
    return {e["name"]: e.get("value") for e in pod["spec"]["containers"][0].get("env") or ()}


async def test_grove_names_addresses_and_labels_each_pod_after_its_clique(
    api: Client, grove: GroveBackend, short_ns: str
) -> None:
    """What our pathway's pods rely on, as Grove (v0.1.0-alpha.6) does it: a pod `<clique>-<random>`
    with hostname `<clique>-<i>` (i = 0..replicas-1, its GROVE_PCLQ_POD_INDEX) in subdomain `<pcs>-0`,
    the headless service address in GROVE_HEADLESS_SERVICE, labelled with its clique, its PodGang
    `<pcs>-0` (which exists) and Grove as its manager; a clique's status counts every pod updated."""
    ns = short_ns
    pcs = podcliqueset(golden("vllm", ns), ns)
    name = pcs["metadata"]["name"]
    await prerequisites(api, pcs, ns)
    await api.apply(PCS, pcs, field_manager=FIELD_MANAGER)
    await wait_grove_ready(api, grove, ns, name, 1)
    for clique in await api.list(PCLQ, namespace=ns):
        clique_name = clique["metadata"]["name"]
        replicas = clique["spec"]["replicas"]
        assert (clique["status"]["replicas"], clique["status"]["updatedReplicas"]) == (replicas, replicas)
        pods = await api.list(POD, namespace=ns, label_selector=f"grove.io/podclique={clique_name}")
        assert sorted(p["spec"]["hostname"] for p in pods) == [f"{clique_name}-{i}" for i in range(replicas)]
        for pod in pods:
            labels, env = pod["metadata"]["labels"], _env(pod)
            assert pod["metadata"]["name"].startswith(f"{clique_name}-")
            assert pod["spec"]["subdomain"] == f"{name}-0"
            assert env["GROVE_PCLQ_POD_INDEX"] == pod["spec"]["hostname"].rsplit("-", 1)[1]
            assert env["GROVE_HEADLESS_SERVICE"] == f"{name}-0.{ns}.svc.cluster.local"
            assert (labels["app.kubernetes.io/managed-by"], labels["app.kubernetes.io/part-of"]) == (
                "grove-operator",
                name,
            )
            assert labels["grove.io/podgang"] == f"{name}-0"
    assert f"{name}-0" in {g["metadata"]["name"] for g in await api.list(PODGANG, namespace=ns)}
