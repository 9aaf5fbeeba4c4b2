"""Upstream's example graphs at 2a6da14c, applied as a user applies them, in each cluster shape of
upstream's goldens (issue #39: "every example upstream brought to Ready in a shape is Ready here in
that shape"; issue #36: "every example is accepted by `kubectl apply --server-side`, and becomes Ready
or says why").

`../shared/upstream-examples-2a6da14c/` holds the examples and, per shape, what upstream's operator
made of them, the graph's status included: that status is the bar. Per shape, a local control plane
of its own (hack/localcluster.py, kwok playing the kubelets) with that shape's add-ons, the operator
in this process (cluster-wide, default flags, as the session operator runs), and every example file
applied with `kubectl apply --server-side` into a namespace of its own (`uxN`, N its place in name
order, as upstream's run named them). Only the DynamoGraphDeployment and DynamoModel documents of a
file are applied, as upstream's run did: the ConfigMaps, PVCs and ResourceClaimTemplates some files
also carry are the user's own objects (and `resource.k8s.io/v1` is not served by Kubernetes 1.33).
The images keep their published tags: this operator does not refuse a non-semver tag.

The shapes, as upstream's README describes them:
- none: no optional API;
- lws-gaie: LeaderWorkerSet (here the real LWS controller, the `lws` add-on) and the inference
  extension's InferencePool CRD (a minimal stand-in of it); upstream also had Volcano's PodGroup CRD,
  left out here (no Volcano scheduler runs, and at 2a6da14c upstream makes no PodGroup);
- grove: Grove's CRDs (the `grove` add-on) and the InferencePool CRD; upstream ran no Grove operator
  (so none of its graphs became Ready); here the Grove stand-in (testsupport/grove_standin.py) plays
  it, so graphs can go further than upstream's did.

Every wait is bounded; the examples of a shape are applied together and waited for together.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from dynamo_operator.context import detect_capabilities, settings_from
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.manager.options import ManagerOptions
from dynamo_operator.storage_version import stored_version_codecs
from dynamo_operator.wiring import register_controllers
from localcluster import AddonNotBuiltError, BinariesMissingError, ClusterError, LocalCluster
from testsupport.cluster import PROJECT_CRDS, Kubectl, KubectlError
from testsupport.dcd_view import alpha_view
from testsupport.grove_standin import GroveStandIn
from testsupport.operator import INFERENCE_POOL_CRD, install_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "upstream-examples-2a6da14c"
EXAMPLES = DATA / "examples"
APPLIED_KINDS = frozenset({"DynamoGraphDeployment", "DynamoModel"})
DGD = Resource("nvidia.com", "v1beta1", "dynamographdeployments", "DynamoGraphDeployment")
MODEL = Resource("nvidia.com", "v1alpha1", "dynamomodels", "DynamoModel")
CLUSTER_UP_TIMEOUT = 300.0
OPERATOR_START_TIMEOUT = 90.0
# Until every graph upstream made Ready is Ready here (and every other one says something).
CONVERGE_TIMEOUT = 300.0
# Then, a bound on the wait for the others to get as far as they will (Ready, or a settled reason).
GRACE = 30.0
STABLE = 8.0  # ... which ends sooner once no verdict has changed for this long
POLL = 2.0
Obj = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Shape:
    """One cluster shape of upstream's goldens and how this test builds it."""

    name: str
    golden: str  # the directory of upstream's objects for this shape
    addons: tuple[str, ...] = ()  # hack/cluster_addons.py
    crds: tuple[Path, ...] = ()  # installed before the operator starts
    grove: bool = False  # run the Grove stand-in


SHAPES = (
    Shape("none", "golden"),
    Shape("lws-gaie", "golden-lws-gaie", addons=("lws",), crds=(INFERENCE_POOL_CRD,)),
    Shape("grove", "golden-grove", addons=("grove",), crds=(INFERENCE_POOL_CRD,), grove=True),
)


def example_files() -> list[Path]:
    return sorted(EXAMPLES.glob("*.yaml"))


def namespace_of(index: int) -> str:
    # Short, as upstream's run had them: Grove holds `<ns>-<graph>` labels to 63 characters.
    return f"ux{index}"


def applied_documents(path: Path) -> list[Obj]:
    """The documents of an example file that upstream's run applied (see the module docstring)."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d and d.get("kind") in APPLIED_KINDS]


def condition(obj: Mapping[str, Any], ctype: str) -> Obj:
    for c in (obj.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return dict(c)
    return {}


def ready_condition(obj: Mapping[str, Any]) -> Obj:
    return condition(obj, "Ready")


def endpoints_condition(model: Mapping[str, Any]) -> Obj:
    """A DynamoModel's verdict: whether the endpoints serving it are ready."""
    return condition(model, "EndpointsReady")


def says_why(cond: Mapping[str, Any]) -> bool:
    return cond.get("status") == "False" and bool(cond.get("reason")) and bool(cond.get("message"))


def upstream_ready(shape: Shape) -> dict[str, list[str]]:
    """example -> names of its graphs that upstream's operator brought to Ready in this shape."""
    out: dict[str, list[str]] = {}
    for path in sorted((DATA / shape.golden).glob("*.json")):
        objects: Mapping[str, Obj] = json.loads(path.read_text())
        ready = [
            key.split("/", 1)[1]
            for key, obj in objects.items()
            if key.startswith("DynamoGraphDeployment/") and ready_condition(obj).get("status") == "True"
        ]
        if ready:
            out[path.stem] = ready
    return out


@dataclass(slots=True)
class Run:
    """What one shape's run left: per example, its namespace, the apply's error (if any), the names of
    the graphs it declares and their last state read."""

    shape: Shape
    namespaces: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    graphs: dict[str, list[str]] = field(default_factory=dict)
    models: dict[str, list[str]] = field(default_factory=dict)
    seen: dict[tuple[str, str], Obj] = field(default_factory=dict)  # (ns, name) -> DGD
    seen_models: dict[tuple[str, str], Obj] = field(default_factory=dict)  # (ns, name) -> DynamoModel
    upstream: dict[str, list[str]] = field(default_factory=dict)
    converged: bool = False

    def graph(self, example: str, name: str) -> Obj | None:
        return self.seen.get((self.namespaces[example], name))

    def model(self, example: str, name: str) -> Obj | None:
        return self.seen_models.get((self.namespaces[example], name))

    def table(self) -> str:
        """One line per graph: example, graph, upstream's verdict, ours (reason: message)."""
        ended = "" if self.converged else " (the wait ended at its bound)"
        lines = [f"shape {self.shape.name}{ended}: example / graph / upstream Ready / here"]
        for example, names in self.graphs.items():
            for name in names:
                cond = ready_condition(self.graph(example, name) or {})
                up = "Ready" if name in self.upstream.get(example, ()) else "-"
                here = (
                    "Ready"
                    if cond.get("status") == "True"
                    else f"{cond.get('status', 'no condition')} {cond.get('reason', '')}: "
                    f"{(cond.get('message') or '')[:160]}"
                )
                lines.append(f"  {example} / {name} / {up} / {here}")
            for name in self.models.get(example, ()):
                cond = endpoints_condition(self.model(example, name) or {})
                here = f"EndpointsReady={cond.get('status', 'none')} {cond.get('reason', '')}: "
                lines.append(f"  {example} / DynamoModel {name} / - / {here}{cond.get('message', '')}")
        return "\n".join(lines)


def start_cluster(shape: Shape) -> LocalCluster:
    local = LocalCluster(
        f"e2e-ready-{shape.name}-{os.getpid()}",
        owner_pid=os.getpid(),
        addons=shape.addons,
        crds=[PROJECT_CRDS],
    )
    try:
        local.up(timeout=CLUSTER_UP_TIMEOUT)
    except (AddonNotBuiltError, BinariesMissingError, ClusterError) as e:
        local.down()
        pytest.fail(
            f"shape {shape.name}: {e}\n(`make cluster-bins` builds the binaries and add-ons)", pytrace=False
        )
    except BaseException:
        local.down()
        raise
    return local


@contextlib.asynccontextmanager
async def running_operator(kubeconfig: str) -> AsyncIterator[Manager]:
    """The operator as `dynamo-operator` runs it by default (cluster-wide), in this process."""
    client = await Client.from_kubeconfig(kubeconfig)
    probe = await Client.from_kubeconfig(kubeconfig)
    try:
        client.speak(await stored_version_codecs(probe))
        settings = settings_from(OperatorOptions(enable_grove="auto"), await detect_capabilities(probe))
        mgr = Manager(client, options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
        register_controllers(mgr, settings)
        task = asyncio.create_task(mgr.run(), name="operator-under-test")
        try:
            deadline = time.monotonic() + OPERATOR_START_TIMEOUT
            while not (mgr.ready or task.done()):
                assert time.monotonic() < deadline, "the operator did not become ready"
                await asyncio.sleep(0.2)
            if task.done():
                task.result()
            yield mgr
        finally:
            mgr.stop()
            try:
                await asyncio.wait_for(task, 45)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
    finally:
        await client.close()
        await probe.close()


def apply_examples(kubectl: Kubectl, run: Run) -> None:
    """Each example file's documents, `kubectl apply --server-side` into its own namespace."""
    for index, path in enumerate(example_files()):
        example, ns = path.stem, namespace_of(index)
        run.namespaces[example] = ns
        docs = applied_documents(path)
        run.graphs[example] = [d["metadata"]["name"] for d in docs if d["kind"] == "DynamoGraphDeployment"]
        run.models[example] = [d["metadata"]["name"] for d in docs if d["kind"] == "DynamoModel"]
        kubectl("create", "namespace", ns)
        try:
            kubectl("apply", "--server-side", "-n", ns, "-f", "-", stdin=yaml.safe_dump_all(docs), timeout=60)
        except KubectlError as e:
            run.refused[example] = str(e)


def bar_met(run: Run) -> bool:
    """Every graph upstream made Ready is Ready here; every other graph shows a Ready condition, and
    every DynamoModel its EndpointsReady."""
    for example, names in run.graphs.items():
        if example in run.refused:
            continue
        for name in names:
            cond = ready_condition(run.graph(example, name) or {})
            if cond.get("status") == "True":
                continue
            if name in run.upstream.get(example, ()) or not cond:
                return False
        for name in run.models[example]:
            if not endpoints_condition(run.model(example, name) or {}):
                return False
    return True


def verdicts(run: Run) -> tuple[tuple[str, str, str, str], ...]:
    """Every graph's and model's (name, condition type, status, reason), in a stable order."""
    graphs = [(n, "Ready", ready_condition(g)) for (_, n), g in sorted(run.seen.items())]
    models = [(n, "EndpointsReady", endpoints_condition(m)) for (_, n), m in sorted(run.seen_models.items())]
    return tuple((n, t, str(c.get("status")), str(c.get("reason"))) for n, t, c in graphs + models)


async def converge(api: Client, run: Run) -> None:
    """Poll every graph of the cluster until all are Ready, or, once `bar_met`, until no verdict
    has changed for STABLE seconds (the others get that long to go further, or to settle on their
    reason), at most GRACE. Bounded by CONVERGE_TIMEOUT (+ GRACE once the bar is met)."""
    start = time.monotonic()
    bar_met_at: float | None = None
    last: tuple[tuple[str, str, str, str], ...] = ()
    last_change = start
    while True:
        run.seen = {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in await api.list(DGD)}
        run.seen_models = {
            (d["metadata"]["namespace"], d["metadata"]["name"]): d for d in await api.list(MODEL)
        }
        now = time.monotonic()
        if (current := verdicts(run)) != last:
            last, last_change = current, now
        if bar_met_at is None and bar_met(run):
            bar_met_at = now
        everything_ready = all(
            ready_condition(run.graph(e, n) or {}).get("status") == "True"
            for e, names in run.graphs.items()
            if e not in run.refused
            for n in names
        )
        if everything_ready or (
            bar_met_at is not None and (now - last_change >= STABLE or now - bar_met_at >= GRACE)
        ):
            run.converged = True
            return
        if now - start >= CONVERGE_TIMEOUT + (GRACE if bar_met_at is not None else 0.0):
            return
        await asyncio.sleep(POLL)


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=SHAPES, ids=lambda s: s.name)
async def shape_run(request: pytest.FixtureRequest) -> AsyncIterator[Run]:
    shape: Shape = request.param
    if not EXAMPLES.is_dir():
        pytest.fail(f"{EXAMPLES} is missing (the shared reference data)", pytrace=False)
    local = await asyncio.to_thread(start_cluster, shape)
    try:
        api = await Client.from_kubeconfig(local.kubeconfig, codecs=alpha_view())
        try:
            if shape.crds:
                await install_crds(api, list(shape.crds))
            run = Run(shape, upstream=upstream_ready(shape))
            async with running_operator(local.kubeconfig), contextlib.AsyncExitStack() as stack:
                if shape.grove:
                    await stack.enter_async_context(GroveStandIn(api))
                await asyncio.to_thread(apply_examples, Kubectl(local.kubeconfig), run)
                await converge(api, run)
            print("\n" + run.table())  # shown with -s / -rA: the whole verdict, per graph
            yield run
        finally:
            await api.close()
    finally:
        await asyncio.to_thread(local.down)


def test_every_example_is_accepted_by_server_side_apply(shape_run: Run) -> None:
    assert shape_run.refused == {}, shape_run.table()
    assert len(shape_run.namespaces) == len(example_files())


def test_every_example_upstream_made_ready_is_ready_here(shape_run: Run) -> None:
    not_ready = {
        f"{example}/{name}": ready_condition(shape_run.graph(example, name) or {})
        for example, names in shape_run.upstream.items()
        for name in names
        if ready_condition(shape_run.graph(example, name) or {}).get("status") != "True"
    }
    assert not_ready == {}, shape_run.table()


def test_every_other_example_is_ready_or_says_why(shape_run: Run) -> None:
    silent = {
        f"{example}/{name}": ready_condition(shape_run.graph(example, name) or {})
        for example, names in shape_run.graphs.items()
        for name in names
        if example not in shape_run.refused
        and (cond := ready_condition(shape_run.graph(example, name) or {})).get("status") != "True"
        and not says_why(cond)
    }
    assert silent == {}, shape_run.table()


def test_every_dynamo_model_reports_its_endpoints_or_says_why(shape_run: Run) -> None:
    unreported = {
        f"{example}/{name}": cond
        for example, names in shape_run.models.items()
        for name in names
        if example not in shape_run.refused
        and (cond := endpoints_condition(shape_run.model(example, name) or {})).get("status") != "True"
        and not says_why(cond)
    }
    assert sum(len(names) for names in shape_run.models.values()) == 3
    assert unreported == {}, shape_run.table()
