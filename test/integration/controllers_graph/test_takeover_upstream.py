"""Taking over graphs that upstream's operator deployed, in place, whichever worker-hash era it was.

Upstream 1.0-1.3 (the df888f68 goldens) named worker DCDs with the v1 hash and recorded it in
`nvidia.com/current-worker-hash`; upstream from 1.4 on (the 2a6da14c goldens) names them with the v2
hash, recorded in `nvidia.com/current-worker-hash-v2`. Each test creates one graph's objects exactly as
upstream left them (the DGD, its DCDs, their Deployments and Services, the discovery RBAC; no status),
lets the Deployment controller bring the pods up, and only then starts this operator, restricted to
that namespace. Counted afterwards: Deployments recreated (deleted, or the same name with another UID),
pod templates changed, and DCDs other than upstream's (a second worker set). All must be 0. The v1
era's pods keep what upstream 1.2 changed in every worker pod (internal/dynamo/pod/era.py).

The 2a6da14c objects are created as their v1alpha1 view (`golden-conversion*`, what that operator's
conversion served): the v1beta1 form would need the conversion webhook on this private control plane.
The v2 hash covers the namespace, so each graph is recreated in the namespace upstream's run used.

The operator runs on a control plane of this module's own (testsupport/private.py): the session's
cluster-wide operator would otherwise reconcile the graph the moment its first object is created.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from dynamo_operator.internal import kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.storage_version import stored_version_codecs
from testsupport.api import eventually
from testsupport.cluster import Kubectl, fresh_namespace
from testsupport.dcd_view import alpha_view
from testsupport.operator import install_crds, running_operator, wait_quiet
from testsupport.private import api, cluster, kubectl  # noqa: F401  (this module's own control plane)

pytestmark = [pytest.mark.cluster, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(420)]

Obj = dict[str, Any]
SHARED = Path(__file__).resolve().parents[3].parent / "shared"
V1_ERA = SHARED / "upstream-examples" / "golden"
V2_ERA = SHARED / "upstream-examples-2a6da14c"
ALPHA = "nvidia.com/v1alpha1"
# Read and written as v1alpha1 through the tests' view of graphs and DCDs (testsupport/dcd_view.py).
DGD = kinds.DGD
DCD = kinds.DCD
# Creation order: owners before what they own.
ORDER = ("DynamoGraphDeployment", "DynamoComponentDeployment", "ServiceAccount", "Role", "RoleBinding")
RESOURCES = {
    "DynamoGraphDeployment": DGD,
    "DynamoComponentDeployment": DCD,
    "ServiceAccount": kinds.SERVICE_ACCOUNT,
    "Role": kinds.ROLE,
    "RoleBinding": kinds.ROLE_BINDING,
    "Deployment": kinds.DEPLOYMENT,
    "Service": kinds.SERVICE,
}
TIMEOUT = 150.0
ANNOTATION_V1 = "nvidia.com/current-worker-hash"
ANNOTATION_V2 = "nvidia.com/current-worker-hash-v2"


def _era_objects(era: str, example: str, namespace: str) -> list[Obj]:
    """The example's objects as upstream left them, in `namespace`."""
    if era == "v1":
        docs = json.loads((V1_ERA / f"{example}.json").read_text())
    else:
        docs = json.loads((V2_ERA / "golden" / f"{example}.json").read_text())
        # The Dynamo objects as their v1alpha1 view (module docstring).
        for folder in ("golden-conversion", "golden-conversion-dcd"):
            docs.update(json.loads((V2_ERA / folder / f"{example}.json").read_text()))
    out = []
    for key, doc in sorted(docs.items()):
        kind = key.split("/", 1)[0]
        if kind not in RESOURCES:
            continue
        obj = json.loads(json.dumps(doc).replace("<ns>", namespace))
        obj.pop("status", None)
        obj["metadata"]["namespace"] = namespace
        out.append(obj)
    return out


def _v2_namespace(example: str) -> str:
    """The namespace upstream's 2a6da14c run deployed `example` in: ux<N>, N its 1-based position
    among the applied files (that README, "Procedure")."""
    files = sorted(p.name for p in (V2_ERA / "examples-applied").glob("*.yaml"))  # by full name
    return f"ux{files.index(f'{example}.yaml') + 1}"


async def _create(client: Client, objects: list[Obj]) -> None:
    """Create `objects` owners first, each ownerReference pointing at the owner's new UID."""
    uids: dict[tuple[str, str], str] = {}

    def rank(obj: Obj) -> int:
        return ORDER.index(obj["kind"]) if obj["kind"] in ORDER else len(ORDER)

    for obj in sorted(objects, key=rank):
        for ref in obj["metadata"].get("ownerReferences") or ():
            ref["uid"] = uids[(ref["kind"], ref["name"])]
            if ref["kind"] in ("DynamoGraphDeployment", "DynamoComponentDeployment"):
                # Both eras through v1alpha1 references, as upstream 1.0 (and this operator before
                # v1beta1 storage) wrote them: adoption goes by UID, and the takeover moves them to
                # v1beta1 (test_owner_references_move_to_the_storage_version).
                ref["apiVersion"] = ALPHA
        created = await client.create(RESOURCES[obj["kind"]], obj)
        uids[(obj["kind"], obj["metadata"]["name"])] = created["metadata"]["uid"]


async def _deployments(client: Client, namespace: str) -> dict[str, tuple[str, Obj]]:
    """Deployment name → (UID, pod template)."""
    return {
        d["metadata"]["name"]: (d["metadata"]["uid"], d["spec"]["template"])
        for d in await client.list(kinds.DEPLOYMENT, namespace=namespace)
    }


async def _all_available(client: Client, namespace: str, names: set[str]) -> bool:
    ready = {
        d["metadata"]["name"]
        for d in await client.list(kinds.DEPLOYMENT, namespace=namespace)
        if (d.get("status") or {}).get("availableReplicas") == d["spec"].get("replicas", 1)
    }
    return names <= ready


def _graph_ready(dgd: Obj) -> bool:
    status = dgd.get("status") or {}
    return status.get("state") == "successful" and status.get("observedGeneration") == dgd["metadata"].get(
        "generation"
    )


def _differences(old: Any, new: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, as paths with both values (what a failed assertion shows)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return [
            d
            for k in sorted(set(old) | set(new))
            for d in _differences(old.get(k), new.get(k), f"{path}.{k}")
        ]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            d
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for d in _differences(a, b, f"{path}[{i}]")
        ]
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


@dataclass(frozen=True)
class Takeover:
    """What one takeover left: per Deployment (UID, pod template) before and after, the DCDs
    upstream made and those there after, and the graph once Ready."""

    era: str
    before: dict[str, tuple[str, Obj]]
    after: dict[str, tuple[str, Obj]]
    upstream_dcds: set[str]
    dcds: set[str]
    graph: Obj
    recorded: Obj  # the graph's annotations as upstream left them
    owner_versions: dict[str, str]  # Deployment name -> apiVersion its controller reference names, after


async def _take_over(
    plane: Any, client: Client, shell: Kubectl, *, era: str, example: str, namespace: str
) -> Takeover:
    await install_crds(client)
    # Written as v1alpha1, sent in the version the API server stores (no webhook runs here).
    client.speak({**await stored_version_codecs(client), **alpha_view()})
    objects = _era_objects(era, example, namespace)
    [dgd] = [o for o in objects if o["kind"] == "DynamoGraphDeployment"]
    recorded = dict(dgd["metadata"].get("annotations") or {})
    graph = dgd["metadata"]["name"]
    upstream_dcds = {o["metadata"]["name"] for o in objects if o["kind"] == "DynamoComponentDeployment"}
    with fresh_namespace(shell, namespace):
        await _create(client, objects)
        before = await _deployments(client, namespace)
        await eventually(
            lambda: _all_available(client, namespace, set(before)), timeout=TIMEOUT, interval=0.5
        )
        async with running_operator(plane, namespace):
            await eventually(
                lambda: client.get(DGD, graph, namespace=namespace), until=_graph_ready, timeout=TIMEOUT
            )
            await wait_quiet(settle=3.0, timeout=90)  # whatever the takeover writes, it has written
            ready = await client.get(DGD, graph, namespace=namespace)
            after = await _deployments(client, namespace)
            dcds = {d["metadata"]["name"] for d in await client.list(DCD, namespace=namespace)}
            owner_versions = {
                d["metadata"]["name"]: ref["apiVersion"]
                for d in await client.list(kinds.DEPLOYMENT, namespace=namespace)
                for ref in d["metadata"].get("ownerReferences") or ()
                if ref.get("controller")
            }
    return Takeover(era, before, after, upstream_dcds, dcds, ready, recorded, owner_versions)


CASES = [
    pytest.param(("v1", "backends_vllm_disagg"), id="v1-vllm-disagg"),
    pytest.param(("v1", "backends_sglang_agg"), id="v1-sglang-agg"),
    pytest.param(("v2", "backends_vllm_disagg"), id="v2-vllm-disagg"),
    pytest.param(("v2", "backends_sglang_agg"), id="v2-sglang-agg"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="session", params=CASES)
async def takeover(
    request: pytest.FixtureRequest,
    cluster: Any,  # noqa: F811
    api: Client,  # noqa: F811
    kubectl: Kubectl,  # noqa: F811
) -> Takeover:
    """One graph of one era taken over (once per case; the tests below judge what it left)."""
    era, example = request.param
    namespace = _v2_namespace(example) if era == "v2" else f"takeover-v1-{example.rsplit('_', 1)[-1]}"
    return await _take_over(cluster, api, kubectl, era=era, example=example, namespace=namespace)


async def test_no_deployment_is_recreated(takeover: Takeover) -> None:
    recreated = [
        n for n, (uid, _) in takeover.before.items() if n not in takeover.after or takeover.after[n][0] != uid
    ]
    assert (recreated, len(takeover.after)) == ([], len(takeover.before))


async def test_no_second_worker_set_is_created(takeover: Takeover) -> None:
    assert takeover.dcds == takeover.upstream_dcds


async def test_no_pod_template_changes(takeover: Takeover) -> None:
    """v1 era too: a graph upstream 1.0 deployed keeps its pods' shape (pod/era.py)."""
    changed = [
        f"{n}: {_differences(template, takeover.after[n][1])}"
        for n, (_, template) in takeover.before.items()
        if n in takeover.after and takeover.after[n][1] != template
    ]
    assert changed == [], "\n".join(changed)


async def test_owner_references_move_to_the_storage_version(takeover: Takeover) -> None:
    """Created with v1alpha1 references (an older release's), the Deployments are adopted and their
    controller references name nvidia.com/v1beta1 afterwards (with no pod template change, above)."""
    assert takeover.owner_versions == {name: "nvidia.com/v1beta1" for name in takeover.before}


async def test_the_graph_keeps_the_hash_its_workers_are_named_with(takeover: Takeover) -> None:
    """v1 era: the v1 hash stays and the v2 hash of the same spec is recorded beside it (upstream's
    bridge); v2 era: the v2 hash stays and no v1 appears."""
    annotations = takeover.graph["metadata"]["annotations"]
    if takeover.era == "v1":
        assert annotations[ANNOTATION_V1] == takeover.recorded[ANNOTATION_V1]
        assert len(annotations[ANNOTATION_V2]) == len(takeover.recorded[ANNOTATION_V1])
    else:
        assert (annotations[ANNOTATION_V2], annotations.get(ANNOTATION_V1)) == (
            takeover.recorded[ANNOTATION_V2],
            None,
        )
