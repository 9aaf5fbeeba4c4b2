"""The Grove pathway against the real API server, with Grove's CRDs installed (no Grove operator runs).

The CRDs are Grove's own, from its API module (the grove add-on's, prepared by `make cluster-bins`;
PodGang's a labelled stand-in), so the API server checks every PodCliqueSet the operator writes here
against Grove's schema. Grove's pathway with something playing Grove is in controllers_multinode.

With Grove served (the test operator runs `--enable-grove=auto`), a new graph becomes one PodCliqueSet
named after it plus per-service Services it owns, and no DCDs; replicas reach the service's PodClique
through its scale subresource; the graph's status is read from the PodCliques Grove would make, and
says it waits for them. Nothing here writes a status in Grove's place: readiness itself is unit-tested
(test/unit/dynamo/test_dynamo_grove_status.py).

A graph records the pathway it took (`nvidia.com/workload-provider`) and its worker hash; removing
Grove afterwards does not move it to DCDs.

The CRDs are installed for this module only and removed after it, so graphs of other modules keep the
DCD pathway; the test that needs them absent at its start runs first, the one that removes them last.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import cluster_addons
import pytest
import pytest_asyncio
import yaml
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, EVENT, Resource, object_key
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.objects import condition
from testsupport.operator import TEST_FIELD_MANAGER, RunningOperator, install_crds

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session")]

TIMEOUT = 60.0


def grove_crds() -> list[Path]:
    """Grove's CRDs as the grove add-on holds them; a failure (never a skip) when not prepared."""
    directory = cluster_addons.addon_dir(cluster_addons.GROVE) / "crds"
    files = sorted(directory.glob("*.yaml"))
    if not files:
        pytest.fail(f"Grove's CRDs are not in {directory}: `make cluster-bins` prepares them", pytrace=False)
    return files


async def remove_grove(api: Client, operator: RunningOperator, names: list[str]) -> None:
    """Delete Grove's instances, then its CRDs, and wait until they are gone and the operator no
    longer serves Grove. A deleted CRD lingers until the API server has removed every instance, and
    an instance with a finalizer (the garbage collector's `foregroundDeletion` on a set whose graph
    went in the foreground) waits for a controller, which on a busy machine once took over 180 s: the
    instances go first, their finalizers cleared, so no CRD waits on anyone (no Grove runs here)."""
    for name in names:
        await clear_instances(api, name)
    for name in names:
        with contextlib.suppress(NotFound):
            await api.delete(CUSTOM_RESOURCE_DEFINITION, name)

    async def gone() -> bool:
        for name in names:
            with contextlib.suppress(NotFound):
                await api.get(CUSTOM_RESOURCE_DEFINITION, name)
                return False
        return True

    # Deleting Grove's CRDs (0.8 MB of schema each) took over 60 s once in CI with three lanes sharing
    # two cores: a bound on the wait, not a figure the test asserts. When it runs out, the failure
    # says what the lingering CRDs report and what instances they still hold.
    try:
        await eventually(gone, timeout=3 * TIMEOUT, interval=0.25)
    except AssertionError as err:
        raise AssertionError(f"{err}; lingering: {await lingering_crds(api, names)}") from err
    await eventually(lambda: not operator.capabilities.grove, timeout=TIMEOUT)


def served_resource(crd: dict[str, Any]) -> Resource | None:
    """The CRD's kind at its first served version."""
    spec = crd["spec"]
    served = next((v["name"] for v in spec["versions"] if v.get("served")), None)
    return (
        None
        if served is None
        else Resource(spec["group"], served, spec["names"]["plural"], spec["names"]["kind"])
    )


async def clear_instances(api: Client, crd_name: str) -> None:
    """Delete every instance of the CRD `crd_name`, their finalizers cleared first."""
    try:
        resource = served_resource(await api.get(CUSTOM_RESOURCE_DEFINITION, crd_name))
    except NotFound:
        return
    if resource is None:
        return
    for instance in await api.list(resource):
        meta = instance["metadata"]
        with contextlib.suppress(NotFound):
            if meta.get("finalizers"):
                clear = {"metadata": {"finalizers": None}}
                await api.patch(resource, meta["name"], clear, namespace=meta.get("namespace"))
            await api.delete(resource, meta["name"], namespace=meta.get("namespace"))


async def lingering_crds(api: Client, names: list[str]) -> dict[str, Any]:
    """Per CRD still there: its status conditions and its remaining instances with their finalizers."""
    out: dict[str, Any] = {}
    for name in names:
        try:
            crd = await api.get(CUSTOM_RESOURCE_DEFINITION, name)
        except NotFound:
            continue
        resource = served_resource(crd)
        instances: list[Any] = []
        if resource is not None:
            with contextlib.suppress(Exception):  # a diagnosis: whatever the API server still answers
                instances = [
                    (object_key(i), i["metadata"].get("finalizers")) for i in await api.list(resource)
                ]
        conditions = [(c.get("type"), c.get("status"), c.get("message")) for c in crd["status"]["conditions"]]
        out[name] = {"conditions": conditions, "instances": instances}
    return out


@pytest_asyncio.fixture(loop_scope="session", scope="module")
async def grove(api: Client, operator: RunningOperator) -> AsyncIterator[None]:
    """Grove's CRDs, installed until the operator serves them; removed (and unseen) after the module's
    last test. Once for the module: installing Grove's real CRDs (the PodCliqueSet's alone is 0.8 MB
    of schema) and removing them costs the API server about 35 s. The test that installs them itself
    comes first in the file, before this fixture is set up."""
    names = await install_crds(api, grove_crds())
    await eventually(lambda: operator.capabilities.grove, timeout=TIMEOUT)
    try:
        yield
    finally:
        await remove_grove(api, operator, names)


def _controlled_by(obj: dict[str, Any], uid: str) -> bool:
    return any(
        r.get("uid") == uid and r.get("controller") for r in obj["metadata"].get("ownerReferences") or ()
    )


def _multinode_graph(name: str, namespace: str) -> dict[str, Any]:
    graph = two_service_graph(name, namespace)
    worker = graph["spec"]["services"]["Worker"]
    worker["multinode"] = {"nodeCount": 2}
    worker["resources"] = {"limits": {"gpu": "1"}}
    worker["extraPodSpec"]["mainContainer"]["args"] = ["--model", "m", "--tensor-parallel-size", "2"]
    return graph


async def _get(api: Client, resource: Any, name: str, ns: str) -> dict[str, Any] | None:
    try:
        return await api.get(resource, name, namespace=ns)
    except NotFound:
        return None


async def _apply(api: Client, obj: dict[str, Any]) -> dict[str, Any]:
    return await api.apply(kinds.DGD, obj, field_manager=TEST_FIELD_MANAGER, force=True)


async def _annotate(api: Client, ns: str, name: str, value: str) -> None:
    await api.patch(
        kinds.DGD, name, {"metadata": {"annotations": {"nvidia.com/enable-grove": value}}}, namespace=ns
    )


async def test_a_running_dcd_graph_moves_between_pathways_only_when_asked_and_leaves_no_orphans(
    api: Client, operator: RunningOperator, ns: str
) -> None:
    """A graph running on DCDs when Grove appears keeps them; `enable-grove: "true"` moves it (DCDs
    deleted, PodCliqueSet written), `"false"` moves it back (PodCliqueSet and its Services deleted)."""
    assert not operator.capabilities.grove
    dgd = await _apply(api, two_service_graph("p", ns))
    uid = dgd["metadata"]["uid"]
    await eventually(
        lambda: api.list(kinds.DCD, namespace=ns), until=lambda xs: len(xs) == 2, timeout=TIMEOUT
    )
    names = await install_crds(api, grove_crds())
    try:
        await eventually(lambda: operator.capabilities.grove, timeout=TIMEOUT)
        await _annotate(api, ns, "p", "auto")  # any annotation edit reconciles the graph
        for _ in range(10):  # bounded look: the graph stays where it runs
            assert len(await api.list(kinds.DCD, namespace=ns)) == 2
            assert await _get(api, kinds.POD_CLIQUE_SET, "p", ns) is None
        await _annotate(api, ns, "p", "true")
        pcs = await eventually(lambda: _get(api, kinds.POD_CLIQUE_SET, "p", ns), timeout=TIMEOUT)
        assert pcs is not None and _controlled_by(pcs, uid)
        await eventually(
            lambda: api.list(kinds.DCD, namespace=ns), until=lambda xs: xs == [], timeout=TIMEOUT
        )
        await eventually(
            lambda: _get(api, kinds.SERVICE, "p-frontend", ns),
            until=lambda s: s is not None and _controlled_by(s, uid),
            timeout=TIMEOUT,
        )
        await _annotate(api, ns, "p", "false")
        await eventually(
            lambda: _get(api, kinds.POD_CLIQUE_SET, "p", ns), until=lambda o: o is None, timeout=TIMEOUT
        )
        await eventually(
            lambda: api.list(kinds.DCD, namespace=ns), until=lambda xs: len(xs) == 2, timeout=TIMEOUT
        )
        worker_service = await eventually(
            lambda: _get(api, kinds.SERVICE, "p-worker", ns), until=lambda s: s is None, timeout=TIMEOUT
        )
        assert worker_service is None  # the Grove pathway's worker Service; DCD workers carry a hash
    finally:
        await remove_grove(api, operator, names)


async def test_new_graph_becomes_one_pod_clique_set_and_owned_services(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """A two-service graph: PodCliqueSet `<dgd>` and Services `<dgd>-<svc>`, all controlled by the
    graph, and no DynamoComponentDeployment."""
    dgd = await _apply(api, two_service_graph("g", ns))
    uid = dgd["metadata"]["uid"]
    pcs = await eventually(
        lambda: _get(api, kinds.POD_CLIQUE_SET, "g", ns), until=lambda o: o is not None, timeout=TIMEOUT
    )
    assert pcs is not None
    assert _controlled_by(pcs, uid)
    cliques = {c["name"]: c["spec"]["replicas"] for c in pcs["spec"]["template"]["cliques"]}
    assert cliques == {"frontend": 1, "worker": 1}
    services = await eventually(
        lambda: api.list(kinds.SERVICE, namespace=ns),
        until=lambda xs: {"g-frontend", "g-worker"} <= {s["metadata"]["name"] for s in xs},
        timeout=TIMEOUT,
    )
    for service in services:
        if service["metadata"]["name"] in ("g-frontend", "g-worker"):
            assert _controlled_by(service, uid)
    assert await api.list(kinds.DCD, namespace=ns) == []


async def test_graph_waits_for_grove_and_names_the_missing_pod_cliques(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """Before Grove made anything, the graph is not Ready and its message names each PodClique."""
    await _apply(api, two_service_graph("w", ns))

    async def ready_condition() -> dict[str, Any] | None:
        status = (await api.get(kinds.DGD, "w", namespace=ns)).get("status") or {}
        return next((c for c in status.get("conditions") or () if c["type"] == "Ready"), None)

    cond = await eventually(ready_condition, until=lambda c: c is not None, timeout=TIMEOUT)
    assert cond is not None
    assert cond["status"] == "False"
    assert "podclique/w-0-frontend: resource not found" in cond["message"]
    assert "podclique/w-0-worker: resource not found" in cond["message"]


async def test_multinode_service_becomes_a_scaling_group_of_leader_and_worker_cliques(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """A multinode worker is a PodCliqueScalingGroup of `<svc>-ldr` (1 pod) and `<svc>-wkr` (the rest),
    whose pods address the leader by Grove's pod name."""
    await _apply(api, _multinode_graph("m", ns))
    pcs = await eventually(
        lambda: _get(api, kinds.POD_CLIQUE_SET, "m", ns), until=lambda o: o is not None, timeout=TIMEOUT
    )
    assert pcs is not None
    template = pcs["spec"]["template"]
    assert template["podCliqueScalingGroups"] == [
        {"name": "worker", "cliqueNames": ["worker-ldr", "worker-wkr"], "replicas": 1, "minAvailable": 1}
    ]
    cliques = {c["name"]: c for c in template["cliques"]}
    assert cliques["worker-ldr"]["spec"]["replicas"] == 1
    assert cliques["worker-wkr"]["spec"]["replicas"] == 1
    # Multiprocessing (a new graph is stamped with an origin version >= 1.0.0): workers reach the
    # leader pod's master port.
    worker_args = " ".join(cliques["worker-wkr"]["spec"]["podSpec"]["containers"][0]["args"])
    leader = "$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-worker-ldr-0.$(GROVE_HEADLESS_SERVICE)"
    assert f"--distributed-executor-backend mp --nnodes 2 --master-addr {leader} --master-port" in worker_args


async def test_replicas_reach_the_pod_clique_through_its_scale_subresource(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """Scaling the service in the graph resizes the PodClique Grove made for it."""
    await _apply(api, two_service_graph("s", ns))
    await eventually(
        lambda: _get(api, kinds.POD_CLIQUE_SET, "s", ns), until=lambda o: o is not None, timeout=TIMEOUT
    )
    # The PodClique Grove would make from the set (only the object; no status is written for Grove).
    clique = yaml.safe_load(
        f"""
        apiVersion: grove.io/v1alpha1
        kind: PodClique
        metadata:
          name: s-0-worker
          namespace: {ns}
          labels: {{nvidia.com/dynamo-graph-deployment-name: s}}
        spec:
          roleName: worker
          replicas: 1
          podSpec: {{containers: [{{name: main, image: registry.invalid/worker}}]}}
        """
    )
    await api.apply(kinds.POD_CLIQUE, clique, field_manager=TEST_FIELD_MANAGER, force=True)
    await _apply(api, two_service_graph("s", ns, worker_replicas=3))
    scaled = await eventually(
        lambda: _get(api, kinds.POD_CLIQUE, "s-0-worker", ns),
        until=lambda o: o is not None and (o.get("spec") or {}).get("replicas") == 3,
        timeout=TIMEOUT,
    )
    assert scaled is not None
    assert scaled["spec"]["replicas"] == 3


async def test_a_new_graphs_worker_clique_and_service_carry_the_worker_hash_it_records(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """The worker clique is labelled with the graph's v2 worker hash and its main container gets
    DYN_NAMESPACE_WORKER_SUFFIX; the worker Service carries the label; the graph records the same
    hash in `nvidia.com/current-worker-hash-v2`. The frontend carries none of it."""
    await _apply(api, two_service_graph("h", ns))
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "h", namespace=ns),
        until=lambda d: V2 in (d["metadata"].get("annotations") or {}),
        timeout=TIMEOUT,
    )
    recorded = dgd["metadata"]["annotations"][V2]
    pcs = await _get(api, kinds.POD_CLIQUE_SET, "h", ns)
    assert pcs is not None
    cliques = {c["name"]: c for c in pcs["spec"]["template"]["cliques"]}
    marks = {
        name: (clique["labels"].get(HASH_LABEL), _env(clique).get("DYN_NAMESPACE_WORKER_SUFFIX"))
        for name, clique in cliques.items()
    }
    assert marks == {"frontend": (None, None), "worker": (recorded, recorded)}
    service = await eventually(
        lambda: _get(api, kinds.SERVICE, "h-worker", ns), until=lambda s: s is not None, timeout=TIMEOUT
    )
    assert service is not None
    assert service["metadata"]["labels"][HASH_LABEL] == recorded


async def test_a_graph_on_grove_stays_on_grove_when_grove_goes_away(
    api: Client, operator: RunningOperator, grove: None, ns: str
) -> None:
    """The pathway a graph took is recorded on it (`nvidia.com/workload-provider: grove`) and read
    back: when Grove's CRDs are removed the graph is not moved to DCDs (which would replace every
    pod) but refused with SelectedWorkloadProviderUnavailable and one Warning Event, its record kept.

    Last in the module: it removes Grove's CRDs itself (the module fixture's removal then finds
    them gone)."""
    await _apply(api, two_service_graph("v", ns))
    dgd = await eventually(
        lambda: api.get(kinds.DGD, "v", namespace=ns),
        until=lambda d: PROVIDER in (d["metadata"].get("annotations") or {}),
        timeout=TIMEOUT,
    )
    assert dgd["metadata"]["annotations"][PROVIDER] == "grove"
    assert await _get(api, kinds.POD_CLIQUE_SET, "v", ns) is not None
    await remove_grove(api, operator, _grove_crd_names())
    refused = await eventually(
        lambda: api.get(kinds.DGD, "v", namespace=ns),
        until=lambda d: condition(d, "Ready").get("reason") == "SelectedWorkloadProviderUnavailable",
        timeout=TIMEOUT,
    )
    assert refused["metadata"]["annotations"][PROVIDER] == "grove"
    assert "it is not moved to DynamoComponentDeployments" in condition(refused, "Ready")["message"]
    for _ in range(10):  # bounded look: nothing of the DCD pathway appears
        assert await api.list(kinds.DCD, namespace=ns) == []

    async def refusals() -> list[dict[str, Any]]:
        events = await api.list(EVENT, namespace=ns, field_selector="involvedObject.name=v")
        return [e for e in events if e.get("reason") == "SelectedWorkloadProviderUnavailable"]

    # Events are sent in the background, after the condition.
    [event] = await eventually(refusals, until=lambda es: len(es) >= 1, timeout=TIMEOUT)
    assert (event["type"], event.get("count", 1)) == ("Warning", 1)


V2 = "nvidia.com/current-worker-hash-v2"
PROVIDER = "nvidia.com/workload-provider"
HASH_LABEL = "nvidia.com/dynamo-worker-hash"


def _env(clique: dict[str, Any]) -> dict[str, Any]:
    [main] = [k for k in clique["spec"]["podSpec"]["containers"] if k["name"] == "main"]
    return {e["name"]: e.get("value") for e in main.get("env") or ()}


def _grove_crd_names() -> list[str]:
    names = []
    for path in grove_crds():
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                names.append(doc["metadata"]["name"])
    return names
