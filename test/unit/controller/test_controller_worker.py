"""The worker loop: results become queue actions, failures are counted and retried, workers survive."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
import structlog
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT
from dynamo_operator.internal.clock import FakeClock
from dynamo_operator.internal.controller import Builder, Controller, Result, TerminalError
from dynamo_operator.internal.controller.builder import group_kind_key
from dynamo_operator.internal.observability.metrics import REGISTRY
from dynamo_operator.internal.workqueue import RateLimitingQueue


def total(controller: str, result: str) -> float:
    value = REGISTRY.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": controller, "result": result}
    )
    return value or 0.0


def sample(metric: str, controller: str) -> float:
    return REGISTRY.get_sample_value(metric, {"controller": controller}) or 0.0


class ScriptedReconciler:
    """Returns/raises the next scripted outcome per key; records concurrency."""

    def __init__(self, script: dict[str, list[Any]] | None = None, delay: float = 0.0) -> None:
        self.script = script or {}
        self.calls: Counter[str] = Counter()
        self.delay = delay
        self.running: set[str] = set()
        self.max_parallel = 0

    async def reconcile(self, key: str) -> Result:
        assert key not in self.running, "a key ran on two workers at once"
        self.running.add(key)
        self.max_parallel = max(self.max_parallel, len(self.running))
        try:
            self.calls[key] += 1
            if self.delay:
                await asyncio.sleep(self.delay)
            steps = self.script.get(key, [])
            step = steps.pop(0) if steps else Result()
            if isinstance(step, BaseException):
                raise step
            assert isinstance(step, Result)
            return step
        finally:
            self.running.discard(key)


async def run_until(controller: Controller, predicate: Any, *, rounds: int = 500) -> None:
    """Run the controller until predicate() holds (bounded), then stop it."""
    task = asyncio.create_task(controller.run())
    try:
        for _ in range(rounds):
            if predicate():
                break
            await asyncio.sleep(0.002)
        assert predicate(), "condition not reached"
    finally:
        controller.stop()
        await asyncio.wait_for(task, 5)


# The queue a test made for each controller (by name): the controller keeps its own queue private.
QUEUES: dict[str, RateLimitingQueue[str]] = {}


def new_queue(name: str, rate_limiter: Any = None, clock: FakeClock | None = None) -> RateLimitingQueue[str]:
    queue: RateLimitingQueue[str] = RateLimitingQueue(name=name, rate_limiter=rate_limiter, clock=clock)
    QUEUES[name] = queue
    return queue


def queue_of(controller: Controller) -> RateLimitingQueue[str]:
    return QUEUES[controller.name]


def make(name: str, reconciler: ScriptedReconciler, workers: int = 1) -> tuple[Controller, FakeClock]:
    clock = FakeClock()
    queue = new_queue(name, clock=clock)
    return Controller(name=name, reconciler=reconciler, queue=queue, max_concurrent_reconciles=workers), clock


def in_flight(controller: Controller) -> int:
    """Keys handed out and not done (the concrete queue's informational counter)."""
    return queue_of(controller).processing_count


async def test_metrics_are_preinitialised_per_result_label() -> None:
    """Every result label exists at 0 before the first reconcile; gauges show the worker budget."""
    make("ctl-preinit", ScriptedReconciler(), workers=3)
    for result in ("success", "error", "requeue", "requeue_after"):
        assert (
            REGISTRY.get_sample_value(
                "controller_runtime_reconcile_total", {"controller": "ctl-preinit", "result": result}
            )
            == 0
        )
    assert sample("controller_runtime_max_concurrent_reconciles", "ctl-preinit") == 3
    assert sample("controller_runtime_active_workers", "ctl-preinit") == 0


async def test_error_is_counted_and_retried_with_backoff() -> None:
    """An exception → error counted, key re-added after the limiter's delay, then success."""
    rec = ScriptedReconciler({"ns/a": [RuntimeError("boom")]})
    ctl, clock = make("ctl-error", rec)
    queue_of(ctl).add("ns/a")

    async def scenario() -> None:
        for _ in range(200):
            if rec.calls["ns/a"] == 1 and in_flight(ctl) == 0:
                break
            await asyncio.sleep(0.002)
        assert len(queue_of(ctl)) == 0, "retry must wait for the backoff"
        clock.advance(0.005)

    task = asyncio.create_task(ctl.run())
    try:
        await scenario()
        for _ in range(200):
            if rec.calls["ns/a"] == 2:
                break
            await asyncio.sleep(0.002)
    finally:
        ctl.stop()
        await asyncio.wait_for(task, 5)
    assert rec.calls["ns/a"] == 2
    assert total("ctl-error", "error") == 1
    assert total("ctl-error", "success") == 1
    assert sample("controller_runtime_reconcile_errors_total", "ctl-error") == 1
    assert queue_of(ctl).num_requeues("ns/a") == 0, "success forgets the backoff"


async def test_terminal_error_is_not_retried() -> None:
    """TerminalError counts as an error and terminal error, without requeue."""
    rec = ScriptedReconciler({"ns/t": [TerminalError("bad")]})
    ctl, clock = make("ctl-terminal", rec)
    queue_of(ctl).add("ns/t")
    await run_until(ctl, lambda: total("ctl-terminal", "error") == 1)
    clock.advance(10_000)
    assert rec.calls["ns/t"] == 1
    assert sample("controller_runtime_terminal_reconcile_errors_total", "ctl-terminal") == 1


async def test_requeue_after_schedules_the_next_run() -> None:
    """Result(requeue_after=d) → the key comes back after d on the clock, not before."""
    rec = ScriptedReconciler({"ns/r": [Result(requeue_after=30)]})
    ctl, clock = make("ctl-requeue-after", rec)
    queue_of(ctl).add("ns/r")
    task = asyncio.create_task(ctl.run())
    try:
        for _ in range(200):
            if total("ctl-requeue-after", "requeue_after") == 1:
                break
            await asyncio.sleep(0.002)
        clock.advance(29)
        await asyncio.sleep(0.01)
        assert rec.calls["ns/r"] == 1
        clock.advance(1)
        for _ in range(200):
            if rec.calls["ns/r"] == 2:
                break
            await asyncio.sleep(0.002)
    finally:
        ctl.stop()
        await asyncio.wait_for(task, 5)
    assert rec.calls["ns/r"] == 2


class Hanging:
    """The first reconcile of `key` waits for something that never comes; the rest succeed."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.calls: Counter[str] = Counter()
        self.cancelled = 0

    async def reconcile(self, key: str) -> Result:
        self.calls[key] += 1
        if key != self.key or self.calls[key] > 1:
            return Result()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        raise AssertionError("unreachable")


async def test_a_hanging_reconcile_is_cancelled_at_the_timeout_and_retried_with_backoff() -> None:
    """Past the timeout the reconcile is cancelled: an error (counted, and as a timeout), the key
    comes back after the limiter's delay, the worker serves other keys meanwhile."""
    name = "ctl-timeout"
    rec = Hanging("ns/h")
    clock = FakeClock()
    queue = new_queue(name, clock=clock)
    ctl = Controller(name=name, reconciler=rec, queue=queue, reconcile_timeout=0.01)
    queue_of(ctl).add("ns/h")
    task = asyncio.create_task(ctl.run())
    try:
        for _ in range(500):
            if total(name, "error") == 1 and in_flight(ctl) == 0:
                break
            await asyncio.sleep(0.002)
        assert rec.cancelled == 1
        assert queue_of(ctl).num_requeues("ns/h") == 1, "retried through the rate limiter"
        assert len(queue_of(ctl)) == 0, "the retry waits for the backoff"
        queue_of(ctl).add("ns/other")
        clock.advance(0.005)
        for _ in range(500):
            if total(name, "success") == 2:
                break
            await asyncio.sleep(0.002)
    finally:
        ctl.stop()
        await asyncio.wait_for(task, 5)
    assert rec.calls == Counter({"ns/h": 2, "ns/other": 1})
    assert sample("controller_reconcile_timeouts_total", name) == 1
    assert sample("controller_runtime_reconcile_errors_total", name) == 1


async def test_cancellation_of_the_controller_propagates_through_a_reconcile_not_a_timeout() -> None:
    """Shutdown cancelling a worker mid-reconcile is not a timeout nor an error: it propagates."""
    name = "ctl-timeout-cancel"
    rec = Hanging("ns/h")
    ctl, _ = make(name, rec)
    queue_of(ctl).add("ns/h")
    task = asyncio.create_task(ctl.run())
    for _ in range(500):
        if rec.calls["ns/h"] == 1:
            break
        await asyncio.sleep(0.002)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert rec.cancelled == 1
    assert in_flight(ctl) == 0, "the key is released"
    assert sample("controller_reconcile_timeouts_total", name) == 0
    assert total(name, "error") == 0


async def test_a_timeout_error_of_the_reconcilers_own_is_an_ordinary_error() -> None:
    """A TimeoutError raised by the reconciler (say, a client's) is not the reconcile timeout."""
    name = "ctl-own-timeout"
    rec = ScriptedReconciler({"ns/a": [TimeoutError("upstream took too long")]})
    ctl, _ = make(name, rec)
    queue_of(ctl).add("ns/a")
    await run_until(ctl, lambda: total(name, "error") == 1)
    assert sample("controller_reconcile_timeouts_total", name) == 0
    assert queue_of(ctl).num_requeues("ns/a") == 1


@pytest.mark.parametrize("timeout", [0.0, -1.0])
def test_a_reconcile_timeout_must_be_positive(timeout: float) -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(name="ctl-bad-timeout", clock=FakeClock())
    with pytest.raises(ValueError, match="reconcile_timeout"):
        Controller(
            name="ctl-bad-timeout", reconciler=ScriptedReconciler(), queue=queue, reconcile_timeout=timeout
        )


def test_no_reconcile_timeout_lets_a_reconcile_run_as_long_as_it_takes() -> None:
    queue: RateLimitingQueue[str] = RateLimitingQueue(name="ctl-no-timeout", clock=FakeClock())
    Controller(name="ctl-no-timeout", reconciler=ScriptedReconciler(), queue=queue, reconcile_timeout=None)


@pytest.mark.parametrize(
    "ending",
    [
        pytest.param(KeyboardInterrupt(), id="keyboard-interrupt"),
        pytest.param(SystemExit(3), id="system-exit"),
    ],
)
def test_a_process_ending_exception_in_a_reconcile_ends_the_controller(ending: BaseException) -> None:
    """Not an error to retry: the process is asked to end. It propagates out of `run()` (in a loop
    of its own: it stops the event loop it reaches), the key released."""
    name = f"ctl-ending-{type(ending).__name__}"
    rec = ScriptedReconciler({"ns/p": [ending]})
    ctl, _ = make(name, rec)
    queue_of(ctl).add("ns/p")
    with pytest.raises(type(ending)):
        asyncio.run(ctl.run())
    assert rec.calls["ns/p"] == 1
    assert in_flight(ctl) == 0
    assert total(name, "error") == 0


async def test_workers_run_distinct_keys_in_parallel_never_the_same_key() -> None:
    """4 workers: keys run concurrently, one key never on two workers, re-adds replay once."""
    rec = ScriptedReconciler(delay=0.01)
    ctl, _ = make("ctl-parallel", rec, workers=4)
    for i in range(8):
        queue_of(ctl).add(f"ns/k{i}")

    async def readd() -> None:
        await asyncio.sleep(0.005)
        for _ in range(5):
            queue_of(ctl).add("ns/k0")  # while k0 is in flight

    adder = asyncio.create_task(readd())
    await run_until(
        ctl,
        lambda: (
            sum(rec.calls.values()) >= 9 and adder.done() and len(queue_of(ctl)) == 0 and in_flight(ctl) == 0
        ),
    )
    assert rec.max_parallel == 4
    assert rec.calls["ns/k0"] == 2


async def test_stop_lets_in_flight_reconcile_finish_and_takes_no_new_work() -> None:
    """stop() during a reconcile: it completes; queued keys are not started."""
    rec = ScriptedReconciler(delay=0.05)
    ctl, _ = make("ctl-stop", rec)
    queue_of(ctl).add("ns/a")
    queue_of(ctl).add("ns/b")
    task = asyncio.create_task(ctl.run())
    for _ in range(100):
        if rec.running:
            break
        await asyncio.sleep(0.001)
    ctl.stop()
    await asyncio.wait_for(task, 5)
    assert rec.calls == Counter({"ns/a": 1})
    assert total("ctl-stop", "success") == 1


class FakeInformer:
    def __init__(self) -> None:
        self.handlers: list[Any] = []

    @property
    def store(self) -> Any:
        raise NotImplementedError

    def add_event_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def add_indexers(self, indexers: Any) -> None:
        pass

    def has_synced(self) -> bool:
        return True


class FakeCache:
    def __init__(self) -> None:
        self.informers: dict[tuple[str, str | None], FakeInformer] = {}

    def informer(self, resource: Any, *, namespace: str | None = None, **scope: Any) -> FakeInformer:
        assert not any(scope.values()), "plain watches ask for the plain informer"
        return self.informers.setdefault((resource.plural, namespace), FakeInformer())


@pytest.mark.parametrize(
    ("per_kind", "explicit", "workers"),
    [
        pytest.param({}, None, 5, id="default"),
        pytest.param({"Deployment.apps": 9}, None, 9, id="per-kind"),
        pytest.param({"Deployment.apps": 9}, 2, 2, id="with-options-wins"),
        pytest.param({"ConfigMap": 9, "Deployment": 7}, None, 5, id="other-kinds-or-wrong-group-ignored"),
    ],
)
def test_builder_worker_count_follows_controller_runtime_precedence(
    per_kind: dict[str, int], explicit: int | None, workers: int
) -> None:
    """with_options, then the manager's count for the For kind ("Kind.group"), then its default."""
    b = Builder(
        "deployment",
        cache=FakeCache(),
        register=lambda _: None,
        max_concurrent_reconciles=5,
        group_kind_concurrency=per_kind,
        new_queue=new_queue,
    ).for_(DEPLOYMENT)
    if explicit is not None:
        b.with_options(max_concurrent_reconciles=explicit)
    assert b.complete(ScriptedReconciler()).max_concurrent_reconciles == workers


def test_group_kind_key_names_core_kinds_without_a_group() -> None:
    """The core API's kinds are bare ("ConfigMap"), the others "Kind.group"."""
    assert (group_kind_key(CONFIG_MAP), group_kind_key(DEPLOYMENT)) == ("ConfigMap", "Deployment.apps")


def test_builder_wires_for_owns_and_watches_and_registers() -> None:
    """complete(): one handler per watch on the shared informer; owns maps children to the owner."""
    cache = FakeCache()
    registered: list[Controller] = []
    ctl = (
        Builder("deployment", cache=cache, register=registered.append, namespace="team", new_queue=new_queue)
        .for_(DEPLOYMENT)
        .owns(CONFIG_MAP)
        .watches(CONFIG_MAP, lambda o: ["team/from-map"])
        .with_options(max_concurrent_reconciles=2)
        .complete(ScriptedReconciler())
    )
    assert registered == [ctl] and ctl.max_concurrent_reconciles == 2
    assert len(cache.informers[("deployments", "team")].handlers) == 1
    assert len(cache.informers[("configmaps", "team")].handlers) == 2
    child = {
        "metadata": {
            "name": "cm",
            "namespace": "team",
            "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
            ],
        }
    }
    for handler in cache.informers[("configmaps", "team")].handlers:
        handler.on_add(child)
    assert len(queue_of(ctl)) == 2  # team/web and team/from-map


def owned_config_map() -> dict[str, Any]:
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True}
    return {"metadata": {"name": "cm", "namespace": "team", "ownerReferences": [ref]}}


async def test_builder_with_creates_first_hands_out_a_created_object_before_resyncs() -> None:
    """creates_first: the For kind's add events jump the queue; an owned child's add does not."""
    cache = FakeCache()
    ctl = (
        Builder(
            "creates-first",
            cache=cache,
            register=lambda c: None,
            namespace="team",
            creates_first=True,
            new_queue=new_queue,
        )
        .for_(DEPLOYMENT)
        .owns(CONFIG_MAP)
        .complete(ScriptedReconciler())
    )
    [child_handler] = cache.informers[("configmaps", "team")].handlers
    [own_handler] = cache.informers[("deployments", "team")].handlers
    child_handler.on_add(owned_config_map())  # a re-sync of team/web
    own_handler.on_add({"metadata": {"name": "new", "namespace": "team"}})
    assert [await queue_of(ctl).get(), await queue_of(ctl).get()] == ["team/new", "team/web"]


async def test_builder_without_creates_first_keeps_event_order() -> None:
    cache = FakeCache()
    ctl = (
        Builder("fifo", cache=cache, register=lambda c: None, namespace="team", new_queue=new_queue)
        .for_(DEPLOYMENT)
        .owns(CONFIG_MAP)
        .complete(ScriptedReconciler())
    )
    cache.informers[("configmaps", "team")].handlers[0].on_add(owned_config_map())
    cache.informers[("deployments", "team")].handlers[0].on_add(
        {"metadata": {"name": "new", "namespace": "team"}}
    )
    assert [await queue_of(ctl).get(), await queue_of(ctl).get()] == ["team/web", "team/new"]


@pytest.mark.parametrize("for_calls", [pytest.param(0, id="no-for"), pytest.param(2, id="two-for")])
def test_builder_reports_for_mistakes_at_complete(for_calls: int) -> None:
    """for_() must be called exactly once; complete() says so."""
    builder = Builder(f"bad-{for_calls}", cache=FakeCache(), register=lambda c: None)
    for _ in range(for_calls):
        builder.for_(DEPLOYMENT)
    with pytest.raises(ValueError, match="exactly once"):
        builder.complete(ScriptedReconciler())


class ContextReconciler:
    """Captures the structlog context bound around each reconcile."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def reconcile(self, key: str) -> Result:
        self.seen.append(dict(structlog.contextvars.get_contextvars()))
        return Result()


async def test_each_reconcile_runs_with_its_own_log_context() -> None:
    """controller, namespace, name and a fresh reconcile_id are bound per reconcile, and unbound after."""
    rec = ContextReconciler()
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue(clock=clock)
    ctl = Controller(name="ctl-logctx", reconciler=rec, queue=queue)
    queue.add("team/a")
    queue.add("cluster-scoped")
    await run_until(ctl, lambda: len(rec.seen) == 2)
    first, second = rec.seen
    assert {k: first[k] for k in ("controller", "namespace", "name")} == {
        "controller": "ctl-logctx",
        "namespace": "team",
        "name": "a",
    }
    assert (second["namespace"], second["name"]) == (None, "cluster-scoped")
    assert first["reconcile_id"] != second["reconcile_id"]
    assert "reconcile_id" not in structlog.contextvars.get_contextvars()
