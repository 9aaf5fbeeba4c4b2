"""The REST client against the real kube-apiserver: CRUD, server-side apply, subresources, typed
errors, pagination and its request metrics."""

from __future__ import annotations

import base64
import ssl
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.client import FIELD_MANAGER, Client
from dynamo_operator.internal.client.config import ClusterConfig, StaticCredentials, load_kubeconfig
from dynamo_operator.internal.client.metrics import WRITE_METHODS, requests_count
from dynamo_operator.internal.client.model import PatchType
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, SECRET, SERVICE_ACCOUNT
from testsupport.api import eventually

pytestmark = pytest.mark.cluster


def configmap(name: str, ns: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns, "labels": {"suite": "client"}}, "data": data}


def deployment(name: str, ns: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": "registry.invalid/app:1"}]},
            },
        },
    }


async def test_create_get_patch_replace_delete(api: Client, ns: str) -> None:
    """The basic verbs round-trip, and each failure comes back as its typed error."""
    created = await api.create(CONFIG_MAP, configmap("one", ns, a="1"))
    assert (created["kind"], created["data"]) == ("ConfigMap", {"a": "1"})

    got = await api.get(CONFIG_MAP, "one", namespace=ns)
    assert got["metadata"]["uid"] == created["metadata"]["uid"]

    with pytest.raises(errors.AlreadyExists):
        await api.create(CONFIG_MAP, configmap("one", ns))

    merged = await api.patch(CONFIG_MAP, "one", {"data": {"b": "2"}}, namespace=ns)
    assert merged["data"] == {"a": "1", "b": "2"}
    json_patched = await api.patch(
        CONFIG_MAP, "one", [{"op": "remove", "path": "/data/a"}], namespace=ns, patch_type=PatchType.JSON
    )
    assert json_patched["data"] == {"b": "2"}

    # PUT is conditional on the resourceVersion it carries.
    stale = {
        **json_patched,
        "metadata": {**json_patched["metadata"], "resourceVersion": created["metadata"]["resourceVersion"]},
    }
    with pytest.raises(errors.Conflict):
        await api.replace(CONFIG_MAP, stale)
    replaced = await api.replace(CONFIG_MAP, {**json_patched, "data": {"c": "3"}})
    assert replaced["data"] == {"c": "3"}

    with pytest.raises(errors.Conflict):  # precondition on a UID that is not this object's
        await api.delete(
            CONFIG_MAP, "one", namespace=ns, preconditions={"uid": "00000000-0000-0000-0000-000000000000"}
        )
    await api.delete(CONFIG_MAP, "one", namespace=ns, preconditions={"uid": created["metadata"]["uid"]})
    with pytest.raises(errors.NotFound):
        await api.get(CONFIG_MAP, "one", namespace=ns)
    with pytest.raises(errors.NotFound):
        await api.delete(CONFIG_MAP, "one", namespace=ns)


async def test_invalid_names_the_field(api: Client, ns: str) -> None:
    with pytest.raises(errors.Invalid) as raised:
        await api.create(CONFIG_MAP, configmap("Not_A_Name", ns))
    assert [c.get("field") for c in raised.value.causes] == ["metadata.name"]
    assert raised.value.code == 422


async def test_strategic_merge_patch_merges_containers_by_name(api: Client, ns: str) -> None:
    await api.create(DEPLOYMENT, deployment("smp", ns))
    patched = await api.patch(
        DEPLOYMENT,
        "smp",
        {
            "spec": {
                "template": {"spec": {"containers": [{"name": "side", "image": "registry.invalid/side:1"}]}}
            }
        },
        namespace=ns,
        patch_type=PatchType.STRATEGIC,
    )
    names = [c["name"] for c in patched["spec"]["template"]["spec"]["containers"]]
    assert sorted(names) == ["main", "side"]


async def test_server_side_apply_owns_fields_and_force_takes_them_over(api: Client, ns: str) -> None:
    """Apply creates, re-applies idempotently, conflicts for another manager unless forced."""
    first = await api.apply(DEPLOYMENT, deployment("ssa", ns, replicas=2))
    managers = {m["manager"] for m in first["metadata"]["managedFields"]}
    assert FIELD_MANAGER in managers

    again = await api.apply(DEPLOYMENT, deployment("ssa", ns, replicas=2))
    assert again["metadata"]["generation"] == first["metadata"]["generation"]  # no-op: spec untouched

    with pytest.raises(errors.Conflict):
        await api.apply(DEPLOYMENT, deployment("ssa", ns, replicas=5), field_manager="intruder", force=False)
    taken = await api.apply(
        DEPLOYMENT, deployment("ssa", ns, replicas=5), field_manager="intruder", force=True
    )
    assert taken["spec"]["replicas"] == 5

    # managedFields echoed back into an apply body are dropped rather than rejected.
    echo_meta = {"name": "ssa", "namespace": ns, "managedFields": taken["metadata"]["managedFields"]}
    echoed = await api.apply(DEPLOYMENT, {**deployment("ssa", ns, replicas=5), "metadata": echo_meta})
    assert echoed["spec"]["replicas"] == 5


async def test_status_and_scale_subresources(api: Client, ns: str) -> None:
    """Status writes touch only status; the scale subresource reads and writes spec.replicas."""
    await api.create(DEPLOYMENT, deployment("sub", ns, replicas=1))

    status = await api.patch(
        DEPLOYMENT, "sub", {"status": {"observedGeneration": 42}}, namespace=ns, subresource="status"
    )
    assert status["status"]["observedGeneration"] == 42
    assert status["spec"]["replicas"] == 1

    applied_status = await api.apply(
        DEPLOYMENT,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sub", "namespace": ns},
         "status": {"observedGeneration": 43}},
        subresource="status",
    )  # fmt: skip
    assert applied_status["status"]["observedGeneration"] in (42, 43)  # the deployment controller may race us

    scale = await api.get(DEPLOYMENT, "sub", namespace=ns, subresource="scale")
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 1)
    await api.patch(DEPLOYMENT, "sub", {"spec": {"replicas": 3}}, namespace=ns, subresource="scale")
    assert (await api.get(DEPLOYMENT, "sub", namespace=ns))["spec"]["replicas"] == 3
    scale = await api.get(DEPLOYMENT, "sub", namespace=ns, subresource="scale")
    scale["spec"]["replicas"] = 4
    # Unconditional: the deployment controller keeps bumping the resourceVersion via status.
    del scale["metadata"]["resourceVersion"]
    await api.replace(DEPLOYMENT, scale, subresource="scale")
    assert (await api.get(DEPLOYMENT, "sub", namespace=ns))["spec"]["replicas"] == 4


async def test_list_follows_continue_tokens(api: Client, ns: str) -> None:
    for i in range(7):
        await api.create(CONFIG_MAP, configmap(f"page-{i}", ns))
    first = await api.list_page(CONFIG_MAP, namespace=ns, label_selector="suite=client", limit=3)
    assert len(first.items) == 3 and first.continue_token
    assert all(item["kind"] == "ConfigMap" for item in first.items)
    everything = await api.list(CONFIG_MAP, namespace=ns, label_selector="suite=client")
    assert sorted(o["metadata"]["name"] for o in everything) == [f"page-{i}" for i in range(7)]
    assert await api.list(CONFIG_MAP, namespace=ns, field_selector="metadata.name=page-3") != []


async def test_discovery_reports_served_group_versions(api: Client) -> None:
    apps = await api.api_resources("apps/v1")
    assert apps is not None and "deployments" in {r["name"] for r in apps}
    # A group no test ever installs (other tests in the session may add the LWS CRD).
    assert await api.api_resources("never-served.example.com/v1") is None
    assert await api.api_resources("v1") is not None


async def test_writes_are_counted_by_method(api: Client, ns: str) -> None:
    """rest_client_requests_total labels let tests count writes (a steady state costs zero)."""
    before = requests_count(methods=WRITE_METHODS, resource="configmaps")
    reads_before = requests_count(methods=frozenset({"GET"}), resource="configmaps")
    await api.create(CONFIG_MAP, configmap("counted", ns))
    await api.get(CONFIG_MAP, "counted", namespace=ns)
    await api.delete(CONFIG_MAP, "counted", namespace=ns)
    assert requests_count(methods=WRITE_METHODS, resource="configmaps") - before == 2
    assert requests_count(methods=frozenset({"GET"}), resource="configmaps") - reads_before == 1


def _ca_file(kubeconfig: str) -> str:
    with open(kubeconfig) as f:
        cfg = yaml.safe_load(f)
    ca = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"])
    handle = tempfile.NamedTemporaryFile("wb", suffix=".crt", delete=False)  # noqa: SIM115
    with handle:
        handle.write(ca)
    return handle.name


async def test_bad_token_is_unauthorized(api: Client, cluster: Any) -> None:
    admin = await load_kubeconfig(str(cluster.kubeconfig))
    ctx = ssl.create_default_context(cafile=_ca_file(str(cluster.kubeconfig)))
    config = ClusterConfig(server=admin.server, ssl_context=ctx, credentials=StaticCredentials("Bearer nope"))
    async with Client(config) as anonymous:
        with pytest.raises(errors.Unauthorized):
            await anonymous.list(SECRET, namespace="default")


async def test_service_account_without_rbac_is_forbidden(
    api: Client, local_cluster: Any, ns: str, tmp_path: Any
) -> None:
    """A real bearer token (the namespace's default ServiceAccount) without any Role gets 403."""
    await eventually(lambda: api.list(SERVICE_ACCOUNT, namespace=ns, field_selector="metadata.name=default"))
    path = local_cluster.token_kubeconfig("default", ns, tmp_path / "sa.kubeconfig")
    async with await Client.from_kubeconfig(path) as sa:
        with pytest.raises(errors.Forbidden):
            await sa.list(SECRET, namespace=ns)


async def test_rotated_token_file_is_picked_up_after_a_401(
    api: Client, local_cluster: Any, ns: str, tmp_path: Path
) -> None:
    """The client holds a stale token; the file now has a valid one: the 401 triggers a re-read and
    the retried request authenticates (and is then refused by RBAC, which proves who we are)."""
    token_file = tmp_path / "token"
    kubeconfig = token_file_kubeconfig(local_cluster, ns, tmp_path, token_file)
    async with await Client.from_kubeconfig(kubeconfig) as rotating:
        with pytest.raises(errors.Unauthorized):
            await rotating.list(SECRET, namespace=ns)  # the refresh re-reads the same stale token
        token_file.write_text(issued_token(local_cluster, ns, tmp_path))
        with pytest.raises(errors.Forbidden):
            await rotating.list(SECRET, namespace=ns)


def token_file_kubeconfig(local_cluster: Any, ns: str, tmp_path: Path, token_file: Path) -> str:
    """A kubeconfig for the cluster whose user reads its bearer token from `token_file` (stale now)."""
    doc = yaml.safe_load(
        Path(local_cluster.token_kubeconfig("default", ns, tmp_path / "sa.kubeconfig")).read_text()
    )
    token_file.write_text("stale-token")
    doc["users"][0]["user"] = {"tokenFile": str(token_file)}
    path = tmp_path / "rotating.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def issued_token(local_cluster: Any, ns: str, tmp_path: Path) -> str:
    path = local_cluster.token_kubeconfig("default", ns, tmp_path / "fresh.kubeconfig")
    return str(yaml.safe_load(Path(path).read_text())["users"][0]["user"]["token"])
