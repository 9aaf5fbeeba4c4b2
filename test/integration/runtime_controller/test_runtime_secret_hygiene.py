"""Secrets stay secret: the operator caches only image pull Secrets (and of those only their identity
and registry hosts, no data at all), and no Secret value, nor a scraper's token, reaches its log at any level.

The cache is read from an in-process operator (every controller registered, as `dynamo-operator`
does); the log is the real process's, at `--log-level debug`, while it indexes, injects, updates and
forgets pull Secrets, mounts the MPI SSH key Secret by name, and refuses a metrics scrape.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import signal
import socket
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import testsupport
from dynamo_operator.context import detect_capabilities, settings_from
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal import consts, kinds
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import NotFound
from dynamo_operator.internal.client.resource import SECRET
from dynamo_operator.internal.manager import Manager, ManagerOptions
from dynamo_operator.internal.secrets.index import HOSTS_FIELD
from dynamo_operator.wiring import register_controllers
from testsupport.api import eventually
from testsupport.graphs import two_service_graph
from testsupport.operator import install_crds
from testsupport.process import start_operator

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

PULL = consts.DOCKER_CONFIG_JSON_TYPE
REGISTRY = "registry.example"  # the registry of testsupport.graphs.IMAGE


def marker() -> str:
    """A value that can only be in the log if a Secret's content was written there."""
    return f"s3cr3t-{secrets.token_hex(12)}"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Values:
    """Every secret value a test put into the cluster, in every encoding the operator could see."""

    def __init__(self) -> None:
        self.plain: list[str] = []

    def add(self, value: str) -> str:
        self.plain.append(value)
        return value

    def forms(self) -> list[str]:
        out: list[str] = []
        for value in self.plain:
            out += [value, b64(value)]
        return out


def secret(ns: str, name: str, type_: str, string_data: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": ns, "labels": {"team": "a"}, "annotations": {"note": "n"}},
        "type": type_,
        "data": {key: b64(value) for key, value in string_data.items()},
    }


def pull_secret(ns: str, name: str, values: Values, *, host: str = REGISTRY) -> dict[str, Any]:
    password = values.add(marker())
    auth = values.add(f"robot:{password}")
    config = json.dumps({"auths": {host: {"username": "robot", "password": password, "auth": b64(auth)}}})
    values.add(config)
    return secret(ns, name, PULL, {consts.DOCKER_CONFIG_JSON_KEY: config})


def other_secrets(ns: str, values: Values) -> list[dict[str, Any]]:
    """One Secret of each kind the operator must never hold: opaque, TLS, basic-auth, the legacy
    dockercfg pull type it does not read, and the MPI SSH key it mounts only by name."""
    ssh_key = values.add(
        f"-----BEGIN OPENSSH PRIVATE KEY-----\n{marker()}\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    return [
        secret(ns, "opaque", "Opaque", {"password": values.add(marker())}),
        secret(
            ns, "tls", "kubernetes.io/tls", {"tls.crt": values.add(marker()), "tls.key": values.add(marker())}
        ),
        secret(
            ns,
            "basic",
            "kubernetes.io/basic-auth",
            {"username": "u", "password": values.add(marker())},
        ),
        secret(
            ns,
            "legacy-dockercfg",
            "kubernetes.io/dockercfg",
            {".dockercfg": values.add(json.dumps({REGISTRY: {"auth": b64(f"robot:{marker()}")}}))},
        ),
        secret(
            ns,
            consts.DEFAULT_MPI_SSH_SECRET_NAME,
            "Opaque",
            {"private.key": ssh_key, "private.key.pub": values.add(f"ssh-rsa {marker()}")},
        ),
    ]


async def test_only_pull_secrets_reach_the_cache_and_only_their_docker_config(api: Client, ns: str) -> None:
    """Every Secret informer the operator registers filters on the pull-secret type; once the pull
    Secret (created last) is cached, none of the others created before it is, and the cached one
    keeps only its identity and registry hosts (no data, labels, annotations or other keys)."""
    await install_crds(api)
    values = Values()
    for obj in other_secrets(ns, values):
        await api.create(SECRET, obj)
    pull = pull_secret(ns, "regcred", values)
    pull["data"]["extra"] = b64(values.add(marker()))
    capabilities = await detect_capabilities(api)
    mgr = Manager(api, options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
    register_controllers(mgr, settings_from(OperatorOptions(), capabilities))
    secret_informers = [i for i in mgr.cache.informers() if i.scope.resource == SECRET]
    informers = [i for i in secret_informers if not i.scope.metadata_only]
    assert informers, "the operator watches pull Secrets"
    assert {i.scope.field_selector for i in informers} == {f"type={PULL}"}
    # The one other Secret informer (the MPI key's, controllers/dynamographdeployment/mpi_ssh_secret.py)
    # is metadata-only: the API server sends it no data at all.
    [mpi] = [i for i in secret_informers if i.scope.metadata_only]
    assert mpi.scope.field_selector == f"metadata.name={consts.DEFAULT_MPI_SSH_SECRET_NAME}"
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=60)
        await api.create(SECRET, pull)

        def cached() -> list[dict[str, Any]]:
            return [obj for informer in informers for obj in informer.store.list()]

        def ours() -> list[dict[str, Any]]:
            return [o for o in cached() if o["metadata"].get("namespace") == ns]

        [regcred] = await eventually(ours, timeout=30)
        assert {o["type"] for o in cached()} == {PULL}
        assert regcred["metadata"]["name"] == "regcred"
        assert "data" not in regcred
        assert regcred[HOSTS_FIELD] == [REGISTRY]
        assert set(regcred["metadata"]) <= {"name", "namespace", "uid", "resourceVersion"}
        mpi_cached = await eventually(
            lambda: [o for o in mpi.store.list() if o["metadata"].get("namespace") == ns], timeout=30
        )
        assert all("data" not in o and "stringData" not in o for o in mpi_cached)
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 45)


# -- the real process's log ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def multinode_graph(name: str, ns: str) -> dict[str, Any]:
    """A TensorRT-LLM graph whose worker spans two nodes: it needs the MPI SSH key Secret."""
    graph = two_service_graph(name, ns)
    worker = graph["spec"]["services"]["Worker"]
    worker["multinode"] = {"nodeCount": 2}
    worker["extraPodSpec"]["mainContainer"] |= {"command": ["python3", "-m", "dynamo.trtllm"]}
    graph["spec"]["backendFramework"] = "trtllm"
    return graph


async def pull_secrets_of(api: Client, ns: str, deployment: str) -> list[str]:
    try:
        obj = await api.get(kinds.DEPLOYMENT, deployment, namespace=ns)
    except Exception:
        return []
    return [ref["name"] for ref in obj["spec"]["template"]["spec"].get("imagePullSecrets") or []]


async def test_no_secret_value_reaches_the_log_at_debug_level(
    cluster: Any, api: Client, ns: str, tmp_path: Path
) -> None:
    """At debug level, while the operator indexes a pull Secret (listed at start, then watched),
    injects it, sees it updated, a second one added and the first deleted, skips unreadable ones, and
    refuses a scrape: not one Secret value or token, in any encoding, is in its output."""
    await install_crds(api)
    values = Values()
    for obj in [*other_secrets(ns, values), pull_secret(ns, "regcred", values)]:
        await api.create(SECRET, obj)
    # Pull Secrets the index cannot use: one with no `auths`, one whose only key names no registry.
    no_auths = json.dumps({"credsStore": "desktop", "token": values.add(marker())})
    await api.create(
        SECRET, secret(ns, "no-auths", PULL, {consts.DOCKER_CONFIG_JSON_KEY: values.add(no_auths)})
    )
    await api.create(SECRET, pull_secret(ns, "bad-host", values, host="https://"))
    metrics, probes = free_port(), free_port()
    log = tmp_path / "operator.log"
    proc = start_operator(
        "--kubeconfig", str(cluster.kubeconfig), "--namespace", ns, "--log-level", "debug",
        "--mpi-run-ssh-secret-name", consts.DEFAULT_MPI_SSH_SECRET_NAME,
        "--metrics-secure", f"--metrics-bind-address=127.0.0.1:{metrics}",
        f"--health-probe-bind-address=127.0.0.1:{probes}",
        log=log,
    )  # fmt: skip
    try:
        await api.create(kinds.DGD, two_service_graph("g", ns))
        await eventually(
            lambda: pull_secrets_of(api, ns, "g-frontend"), until=lambda r: r == ["regcred"], timeout=90
        )
        # Updated, joined by a second one, then deleted: every event path of the index.
        updated = pull_secret(ns, "regcred", values)
        await api.patch(SECRET, "regcred", {"data": updated["data"]}, namespace=ns)
        await api.create(SECRET, pull_secret(ns, "regcred-2", values))
        await eventually(
            lambda: pull_secrets_of(api, ns, "g-frontend"),
            until=lambda r: r == ["regcred", "regcred-2"],
            timeout=60,
        )
        await api.delete(SECRET, "regcred", namespace=ns)
        await eventually(
            lambda: pull_secrets_of(api, ns, "g-frontend"), until=lambda r: r == ["regcred-2"], timeout=60
        )
        # A scraper's token is a credential too: one the operator refuses (403) is logged at debug.
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        answer = await api.request(
            "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/default/token", body=request
        )
        token = values.add(answer["status"]["token"])

        async def scrape_status() -> int:
            async with (
                aiohttp.ClientSession() as session,
                session.get(
                    f"https://127.0.0.1:{metrics}/metrics",
                    headers={"Authorization": f"Bearer {token}"},
                    ssl=False,
                ) as resp,
            ):
                return resp.status

        # On a loaded machine the listener may still be coming up: retry a refused connection only.
        status = await testsupport.eventually(
            scrape_status, timeout=30, retry_on=(aiohttp.ClientConnectorError,), what="metrics listener"
        )
        assert status == 403
        # The MPI key the operator draws itself: deleted, it is made anew for a multinode graph.
        await api.delete(SECRET, consts.DEFAULT_MPI_SSH_SECRET_NAME, namespace=ns)
        await api.create(kinds.DGD, multinode_graph("mn", ns))
        generated = await testsupport.eventually(
            lambda: api.get(SECRET, consts.DEFAULT_MPI_SSH_SECRET_NAME, namespace=ns),
            timeout=90,
            retry_on=(NotFound,),
            what="generated MPI SSH key Secret",
        )
        for value in generated["data"].values():
            values.add(base64.b64decode(value).decode())
        key_lines = base64.b64decode(generated["data"]["private.key"]).decode().splitlines()
        values.plain += [line for line in key_lines if not line.startswith("-----")]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(proc.wait, 45)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
    text = log.read_text(errors="replace")
    lines = [orjson.loads(line) for line in text.splitlines() if line.startswith("{")]
    assert code == 0, text[-3000:]
    assert any(line["level"] == "debug" for line in lines), "debug lines were written"
    assert any(line["event"] == "skipping unreadable docker secret" for line in lines), (
        "the bad ones were seen"
    )
    leaked = [value[:24] for value in values.forms() if value in text]
    assert not leaked
