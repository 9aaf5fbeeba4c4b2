"""The `operator` fixture: the whole operator (manager + every controller) running in-process against
the test cluster, plus helpers to wait for state and to count the API writes the process sent.

Import into a conftest: `from testsupport.operator import operator  # noqa: F401` (it needs the
`cluster` fixture of test/integration/conftest.py). One operator per test session, started after the
CRDs (config/crd/bases, plus a minimal LeaderWorkerSet CRD so the multinode path is exercised, unless
the cluster runs the real LWS add-on with its own CRD) are installed and Established; stopped
gracefully at the end of the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_asyncio
import yaml
from dynamo_operator.context import Capabilities, detect_capabilities, settings_from
from dynamo_operator.flags import OperatorOptions, build_parser, options_from_args
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.metrics import REQUESTS, WRITE_METHODS, requests_count
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.manager.options import ManagerOptions
from dynamo_operator.optional_api_watch import OptionalApiWatch
from dynamo_operator.storage_version import stored_version_codecs
from dynamo_operator.wiring import register_controllers

from testsupport.api import calls_seen, eventually
from testsupport.webhook import SessionWebhook, route_session_webhook

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "config" / "crd" / "bases"
LWS_CRD = REPO / "test" / "integration" / "controllers_graph" / "leaderworkerset-crd.yaml"
# A minimal stand-in for the inference extension's InferencePool CRD (see the file's header).
INFERENCE_POOL_CRD = REPO / "test" / "integration" / "controllers_side" / "inferencepool-crd.yaml"
TEST_FIELD_MANAGER = "integration-test"
START_TIMEOUT = 60.0  # seconds until the caches synced
STOP_TIMEOUT = 45.0

__all__ = [
    "RunningOperator",
    "count_writes",
    "eventually",
    "install_crds",
    "operator",
    "record_writes",
    "writes_by_verb",
]


@dataclass(frozen=True, slots=True)
class RunningOperator:
    """Handles a test may use: the manager (its cache, controllers), a client of its own, and the
    watch that keeps the operator's view of the optional APIs current."""

    manager: Manager
    client: Client
    apis: OptionalApiWatch

    @property
    def capabilities(self) -> Capabilities:
        """The optional APIs the operator sees as served right now."""
        return self.apis.current


@functools.cache
def _parsed_crds(path: Path, mtime_ns: int) -> tuple[dict[str, Any], ...]:
    # The CRD files are over a megabyte together, and pure-Python YAML took seconds of CPU per
    # install (every test of the private-cluster suites installs them): parsed once per file version,
    # with libyaml when PyYAML has it.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return tuple(
        d
        for d in yaml.load_all(path.read_text(), Loader=loader)
        if d and d.get("kind") == "CustomResourceDefinition"
    )


def _crd_documents(paths: list[Path]) -> list[dict[str, Any]]:
    return [copy.deepcopy(d) for path in paths for d in _parsed_crds(path, path.stat().st_mtime_ns)]


async def install_crds(
    client: Client,
    paths: list[Path] | None = None,
    *,
    timeout: float = 60.0,  # noqa: ASYNC109 - a polling bound
) -> list[str]:
    """Server-side apply every CRD in `paths` (default: config/crd/bases + the LWS CRD); wait until
    each is Established. Returns their names."""
    if paths is None:
        paths = [*sorted(CRD_DIR.glob("*.yaml")), LWS_CRD]
    docs = _crd_documents(paths)
    for doc in docs:
        await client.apply(CUSTOM_RESOURCE_DEFINITION, doc, field_manager=TEST_FIELD_MANAGER, force=True)
    names = [d["metadata"]["name"] for d in docs]

    async def established() -> bool:
        for name in names:
            crd = await client.get(CUSTOM_RESOURCE_DEFINITION, name)
            conds = (crd.get("status") or {}).get("conditions") or []
            if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conds):
                return False
        return True

    await eventually(established, timeout=timeout, interval=0.2)
    return names


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def operator(cluster: Any) -> AsyncIterator[RunningOperator]:
    """The operator, running in this process for the whole session (see the module docstring)."""
    client = await Client.from_kubeconfig(str(cluster.kubeconfig))
    own = await Client.from_kubeconfig(str(cluster.kubeconfig))
    # The lws add-on installed the real CRD (schema and defaults); the minimal one must not replace it.
    real_lws = "lws" in getattr(cluster, "addons", ())
    await install_crds(own, sorted(CRD_DIR.glob("*.yaml")) if real_lws else None)
    capabilities = await detect_capabilities(own)
    client.speak(await stored_version_codecs(own))  # as `dynamo-operator` does at start
    settings = settings_from(
        # A short LoRA unload grace: the test of a model that cannot unload waits it out.
        OperatorOptions(max_concurrent_reconciles=8, enable_grove="auto", lora_unload_grace=15.0),
        capabilities,
    )
    mgr = Manager(
        client,
        options=ManagerOptions(
            metrics_bind_address="0", health_probe_bind_address="0", max_concurrent_reconciles=8
        ),
    )
    apis = register_controllers(mgr, settings)  # exactly what `dynamo-operator` registers
    # The conversion webhook, as `dynamo-operator` runs it in the namespace the CRDs name, on a loopback
    # address of this session's that an ExternalName Service sends the API server to; on a thread of
    # its own (testsupport/webhook.py says why).
    await asyncio.to_thread(route_session_webhook, str(cluster.kubeconfig))
    hook = SessionWebhook(str(cluster.kubeconfig))
    await asyncio.to_thread(hook.start)
    task = asyncio.create_task(mgr.run(), name="operator-under-test")
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=START_TIMEOUT, interval=0.1)
        if task.done():
            task.result()  # surfaces the start-up failure
        yield RunningOperator(manager=mgr, client=own, apis=apis)
    finally:
        mgr.stop()
        try:
            await asyncio.wait_for(task, STOP_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        await asyncio.to_thread(hook.stop)
        await client.close()
        await own.close()


def count_writes() -> float:
    """API writes (POST/PUT/PATCH/DELETE) this process has sent so far, from the client's metrics."""
    return requests_count(methods=WRITE_METHODS)


def writes_by_verb() -> dict[str, float]:
    """Every request this process has sent so far, by HTTP method (and `resource`)."""
    out: dict[str, float] = {}
    for metric in REQUESTS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total"):
                key = f"{sample.labels['method']} {sample.labels['resource']}"
                out[key] = out.get(key, 0.0) + sample.value
    return out


@contextlib.contextmanager
def record_writes() -> Iterator[list[tuple[str, str]]]:
    """Record every write (method, path) any Client in this process sends while the block runs.

    Unlike the metrics, the path says which namespace and object a write touched, so a test can
    judge its own objects while other tests' namespaces are still being torn down.
    """
    writes: list[tuple[str, str]] = []

    def see(_client: Client, verb: str, path: str) -> None:
        if verb in WRITE_METHODS:
            writes.append((verb, path))

    with calls_seen("_send", see):
        yield writes


def delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    """Per-key difference of two `writes_by_verb()` snapshots, zero entries dropped."""
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0)}


async def wait_quiet(*, settle: float = 2.0, timeout: float = 60.0) -> None:  # noqa: ASYNC109
    """Wait until `count_writes()` has not moved for `settle` seconds (bounded by `timeout`)."""
    deadline = time.monotonic() + timeout
    last, since = count_writes(), time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        now = count_writes()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= settle:
            return
    raise AssertionError(f"writes did not settle within {timeout} s")


@contextlib.asynccontextmanager
async def running_operator(cluster: Any, ns: str, *flags: str) -> AsyncIterator[Manager]:
    """The operator with `flags`, restricted to `ns`, until the block ends (then stopped gracefully).
    Beside the session `operator` it would race it: use it on a `private_cluster`."""
    client = await Client.from_kubeconfig(str(cluster.kubeconfig))
    options = options_from_args(build_parser().parse_args(["--namespace", ns, *flags]), environ={})
    mgr = Manager(
        client,
        options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", namespace=ns),
    )
    client.speak(await stored_version_codecs(client))
    register_controllers(mgr, settings_from(options, await detect_capabilities(client)))
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=60)
        if task.done():
            task.result()
        yield mgr
    finally:
        mgr.stop()
        try:
            await asyncio.wait_for(task, 45)
        finally:
            await client.close()
