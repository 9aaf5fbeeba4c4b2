"""The manager: one cache, the controllers built on it, leader election, probes and metrics.

Start order:
  1. HTTP servers (probes, metrics): alive at once; `/readyz` fails until step 3.
  2. informers start (plus the event sender);
  3. wait for every informer to sync (bounded by `cache_sync_timeout`) → ready;
  4. runnables that do not need leadership;
  5. the Lease, when election is on (a standby stays here with warm caches, not reconciling);
  6. as leader: controllers and leader-only runnables.

Stop order (bounded by `graceful_shutdown_timeout` in total): controllers stop taking work and finish
in-flight reconciles → leader-only runnables are cancelled → the Lease is released → other runnables
are cancelled → pending events are flushed → informers stop → HTTP servers stop.

With `metrics_secure` the metrics server speaks TLS and asks the API server about every scraper
(`metrics_auth.py`, `tls.py`) through a client of its own, closed after the servers stop; the probes
stay plain HTTP for the kubelet.

A lost Lease is not a stop: the process exits non-zero at once, because a leader that cannot renew
may already have a successor, and two leaders must never write.

Where the manager is, is one `Phase`; `_enter` is the only place that changes it and refuses an arrow
the table does not have:

    NEW --run()--> STARTING --caches synced--> SYNCED --leader (or no election)--> LEADING
    STARTING | SYNCED | LEADING --stop() or a runnable failed--> STOPPING --in order--> STOPPED

Every task `run()` starts lives in one `asyncio.TaskGroup`, so none outlives it. A runnable that fails
does not tear the group down: it is recorded and stops the manager in order, as `stop()` would.
"""

from __future__ import annotations

import asyncio
import enum
import os
import ssl
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from dynamo_operator.internal.cache.cache import Cache
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.controller.builder import Builder
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.events.recorder import EventBroadcaster, EventRecorder
from dynamo_operator.internal.events.sink import ApiEventSink
from dynamo_operator.internal.leaderelection.elector import Ending, LeaderElector
from dynamo_operator.internal.leaderelection.lock import KubeLeaseLock
from dynamo_operator.internal.manager import http, metrics_auth, tls
from dynamo_operator.internal.manager.options import ManagerOptions

log = structlog.get_logger(__name__)

RunnableFactory = Callable[[], Awaitable[None]]


class ManagerError(Exception):
    """The manager could not start or a runnable failed; the process should exit non-zero."""


class Phase(enum.Enum):
    NEW = enum.auto()  # registering controllers and runnables
    STARTING = enum.auto()  # servers up, informers listing; /readyz fails
    SYNCED = enum.auto()  # caches synced (/readyz passes); a standby waits here for the Lease
    LEADING = enum.auto()  # controllers and leader-only runnables run
    STOPPING = enum.auto()  # the ordered stop of the module docstring
    STOPPED = enum.auto()


_ARROWS: dict[Phase, frozenset[Phase]] = {
    Phase.NEW: frozenset({Phase.STARTING}),
    Phase.STARTING: frozenset({Phase.SYNCED, Phase.STOPPING}),
    Phase.SYNCED: frozenset({Phase.LEADING, Phase.STOPPING}),
    # A lost Lease with an exit handler that returns (tests) goes back to standby, then stops.
    Phase.LEADING: frozenset({Phase.SYNCED, Phase.STOPPING}),
    Phase.STOPPING: frozenset({Phase.STOPPED}),
    Phase.STOPPED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class _Failed:
    """What a guarded task returns instead of raising (see `Manager._guarded`)."""

    error: Exception


@dataclass(frozen=True, slots=True)
class _Runnable:
    name: str
    factory: RunnableFactory
    needs_leader: bool


def _exit_now() -> None:
    sys.stderr.flush()
    os._exit(1)


class Manager:
    """Owns the shared cache and runs everything registered on it; see the module docstring."""

    def __init__(
        self,
        client: Client,
        *,
        options: ManagerOptions | None = None,
        cache: Cache | None = None,
        on_lost_leadership: Callable[[], None] = _exit_now,
    ) -> None:
        self.client = client
        self.options = options or ManagerOptions()
        self.cache = cache or Cache(client)
        self._on_lost_leadership = on_lost_leadership
        self._controllers: dict[str, Controller] = {}
        self._runnables: list[_Runnable] = []
        self._events = EventBroadcaster(ApiEventSink(client))
        self._healthz: dict[str, http.Check] = {"ping": lambda: True}
        self._readyz: dict[str, http.Check] = {"informers-synced": lambda: self.ready}
        self.phase = Phase.NEW
        self._stop_asked = False  # stop() may come before run(), or while a phase is being entered
        self._stop_requested: asyncio.Event | None = None
        self._tasks: asyncio.TaskGroup | None = None
        self._failure: BaseException | None = None
        self._controller_tasks: list[asyncio.Task[Any]] = []
        self._leader_tasks: list[asyncio.Task[Any]] = []
        self._other_tasks: list[asyncio.Task[Any]] = []
        self._events_task: asyncio.Task[Any] | None = None
        self._elector: LeaderElector | None = None
        self._elector_task: asyncio.Task[Any] | None = None
        self._servers: list[http.Server] = []
        self._cert_watch_task: asyncio.Task[Any] | None = None
        self._review_client: Client | None = None
        # With metrics_secure, once started: the filter deciding every scrape (tests read its limiter).
        self.metrics_authorizer: metrics_auth.RequestAuthorizer | None = None
        self.metrics_port: int | None = None
        self.health_probe_port: int | None = None

    # -- registration ----------------------------------------------------------------------------

    def builder(self, name: str) -> Builder:
        """Start declaring a controller named `name` (unique: it labels metrics and logs)."""
        return Builder(
            name,
            cache=self.cache,
            register=self._add_controller,
            namespace=self.options.namespace,
            max_concurrent_reconciles=self.options.max_concurrent_reconciles,
            group_kind_concurrency=self.options.group_kind_concurrency,
            creates_first=self.options.creates_first,
        )

    def _add_controller(self, controller: Controller) -> None:
        if controller.name in self._controllers:
            raise ValueError(f"controller name {controller.name!r} is already in use")
        self._controllers[controller.name] = controller
        if self.leading and not self._stop_asked:  # added after start: run it now, as controller-runtime does
            self._controller_tasks.append(self._spawn(f"controller:{controller.name}", controller.run()))

    @property
    def controllers(self) -> dict[str, Controller]:
        return dict(self._controllers)

    def event_recorder(self, component: str) -> EventRecorder:
        """A recorder writing core/v1 Events as `component`; never blocks."""
        return self._events.recorder(component)

    def add_runnable(self, factory: RunnableFactory, *, needs_leader: bool = True, name: str = "") -> None:
        """Run `factory()` as a task (only while leading, unless `needs_leader=False`); cancelled at stop."""
        self._runnables.append(
            _Runnable(name or getattr(factory, "__name__", "runnable"), factory, needs_leader)
        )

    def add_healthz_check(self, name: str, check: http.Check) -> None:
        self._healthz[name] = check

    def add_readyz_check(self, name: str, check: http.Check) -> None:
        self._readyz[name] = check

    # -- state -----------------------------------------------------------------------------------

    @property
    def leading(self) -> bool:
        """Whether controllers run here (always true without leader election, once started)."""
        return self.phase is Phase.LEADING

    @property
    def ready(self) -> bool:
        return self.phase in (Phase.SYNCED, Phase.LEADING)

    def _enter(self, phase: Phase) -> None:
        if phase not in _ARROWS[self.phase]:
            raise AssertionError(f"manager: no arrow from {self.phase.name} to {phase.name}")
        log.debug("Manager phase", phase=phase.name, previous=self.phase.name)
        self.phase = phase

    def stop(self) -> None:
        """Ask `run()` to stop gracefully (signal handlers call this); idempotent."""
        self._stop_asked = True
        if self._stop_requested is not None:
            self._stop_requested.set()

    # -- run -------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Start everything, block until `stop()`, then stop in order. Raises ManagerError on failure."""
        if self.phase is not Phase.NEW:
            raise RuntimeError("a manager runs once")
        self._enter(Phase.STARTING)
        self._stop_requested = asyncio.Event()
        if self._stop_asked:
            self._stop_requested.set()
        error: Exception | None = None
        async with asyncio.TaskGroup() as tasks:
            self._tasks = tasks
            try:
                await self._start()
            except Exception as err:  # raised as itself below, not wrapped in the group's ExceptionGroup
                error = err
            finally:
                await self._shutdown()
        if error is not None:
            raise error
        if self._failure is not None:
            raise ManagerError(str(self._failure)) from self._failure

    async def _start(self) -> None:
        assert self._stop_requested is not None
        await self._start_servers()
        self._events_task = self._spawn("event-sender", self._events.run(), watch=False)
        await self.cache.start()
        if not await self._wait_for_sync():
            return
        self._enter(Phase.SYNCED)
        log.info("Caches synced; ready")
        for runnable in self._runnables:
            if not runnable.needs_leader:
                self._other_tasks.append(self._spawn(runnable.name, runnable.factory()))
        if self.options.leader_election is None:
            self._start_leading()
        else:
            self._start_election()
        await self._stop_requested.wait()

    async def _wait_for_sync(self) -> bool:
        assert self._stop_requested is not None
        sync = asyncio.ensure_future(self.cache.wait_for_sync(self.options.cache_sync_timeout))
        stop = asyncio.ensure_future(self._stop_requested.wait())
        await asyncio.wait({sync, stop}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        if not sync.done():
            sync.cancel()
            return False  # stop requested before the caches synced
        if not sync.result():
            self._fail(
                ManagerError(f"timed out after {self.options.cache_sync_timeout}s waiting for caches to sync")
            )
            return False
        return True

    def _start_election(self) -> None:
        config = self.options.leader_election
        assert config is not None
        lock = KubeLeaseLock(self.client, namespace=config.namespace, name=config.name)
        self._elector = LeaderElector(config, lock)
        assert self._tasks is not None
        self._elector_task = self._tasks.create_task(
            self._guarded(
                self._elector.run(
                    on_started_leading=self._start_leading, on_stopped_leading=self._stopped_leading
                )
            ),
            name="leader-election",
        )
        # The elector ends by itself only on a lost Lease (handled by `_stopped_leading`) or a bug.
        self._elector_task.add_done_callback(self._watch_task)

    def _start_leading(self) -> None:
        if self._stop_asked:  # won the Lease while stopping: the shutdown will release it, start nothing
            return
        self._enter(Phase.LEADING)
        log.info("Starting controllers", controllers=sorted(self._controllers))
        for controller in self._controllers.values():
            self._controller_tasks.append(self._spawn(f"controller:{controller.name}", controller.run()))
        for runnable in self._runnables:
            if runnable.needs_leader:
                self._leader_tasks.append(self._spawn(runnable.name, runnable.factory()))

    def _stopped_leading(self, ending: Ending) -> None:
        if self.phase is Phase.LEADING:
            self._enter(Phase.SYNCED)
        if ending is Ending.LOST and not self._stop_asked:
            log.critical("Leader election lost; exiting so that no two leaders write")
            self._on_lost_leadership()
            self.stop()  # reached only when the handler does not exit (tests)

    def _spawn(self, name: str, coro: Awaitable[None], *, watch: bool = True) -> asyncio.Task[Any]:
        """A task of the manager's TaskGroup; with `watch`, its failure stops the manager in order."""
        assert self._tasks is not None
        task = self._tasks.create_task(self._guarded(coro), name=name)
        if watch:
            task.add_done_callback(self._watch_task)
        return task

    @staticmethod
    async def _guarded(coro: Awaitable[Any]) -> Any:
        """Run `coro`, handing a failure to `_watch_task` instead of the TaskGroup (which would cancel
        everything at once and skip the ordered stop)."""
        try:
            return await coro
        except Exception as err:
            return _Failed(err)

    def _watch_task(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or self._stop_asked:
            return
        if isinstance(failed := task.result(), _Failed):
            err = failed.error
            log.error("Runnable failed; stopping the manager", runnable=task.get_name(), exc_info=err)
            self._fail(err)

    def _fail(self, err: BaseException) -> None:
        if self._failure is None:
            self._failure = err
        self.stop()

    # -- stop ------------------------------------------------------------------------------------

    async def _shutdown(self) -> None:
        self._stop_asked = True
        self._enter(Phase.STOPPING)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.options.graceful_shutdown_timeout

        def remaining() -> float:
            return max(deadline - loop.time(), 0.0)

        # 1. Controllers: stop taking work, let in-flight reconciles finish.
        for controller in self._controllers.values():
            controller.stop()
        await self._drain(self._controller_tasks, remaining(), "controllers")
        # 2. Leader-only runnables.
        await self._cancel(self._leader_tasks)
        # 3. The Lease: cancelling the elector releases it (the standby takes over at its next retry).
        if self._elector_task is not None:
            await self._cancel([self._elector_task])
        # 4. Everything else; pending events get what is left of the budget (at most a few seconds).
        await self._cancel(self._other_tasks)
        if self._events_task is not None:
            await self._events.flush(min(remaining(), 5.0))
            await self._cancel([self._events_task])
        await self.cache.stop()
        for server in self._servers:
            await server.stop()
        if self._review_client is not None:
            await self._review_client.close()
        if self._cert_watch_task is not None:
            await self._cancel([self._cert_watch_task])
        self._enter(Phase.STOPPED)
        log.info("Manager stopped")

    async def _drain(self, tasks: list[asyncio.Task[Any]], timeout: float, what: str) -> None:  # noqa: ASYNC109
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        if pending:
            log.warning("Graceful shutdown timed out; cancelling", what=what, pending=len(pending))
            await self._cancel(list(pending))

    async def _cancel(self, tasks: Sequence[asyncio.Task[Any]]) -> None:
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _start_servers(self) -> None:
        probes = http.parse_bind_address(self.options.health_probe_bind_address)
        if probes is not None:
            server = http.Server(
                http.probes_app(healthz=self._healthz, readyz=self._readyz), host=probes[0], port=probes[1]
            )
            await server.start()
            self._servers.append(server)
            self.health_probe_port = server.port
            log.info("Starting health probe server", address=f"{probes[0]}:{server.port}")
        metrics = http.parse_bind_address(self.options.metrics_bind_address)
        if metrics is not None:
            http.register_process_collectors()
            if self.options.metrics_secure:
                bound = self.options.metrics_max_reviews_in_flight
                self._review_client = metrics_auth.review_client(self.client, max_connections=bound)
                authorizer = metrics_auth.new_authorizer(self._review_client, max_in_flight=bound)
                self.metrics_authorizer = authorizer
                app = http.metrics_app(middlewares=[metrics_auth.auth_middleware(authorizer)])
                server = http.Server(
                    app,
                    host=metrics[0],
                    port=metrics[1],
                    ssl_context=self._metrics_tls(),
                    cancel_on_disconnect=True,
                )
            else:
                server = http.Server(http.metrics_app(), host=metrics[0], port=metrics[1])
            await server.start()
            self._servers.append(server)
            self.metrics_port = server.port
            log.info(
                "Serving metrics server",
                address=f"{metrics[0]}:{server.port}",
                secure=self.options.metrics_secure,
            )

    def _metrics_tls(self) -> ssl.SSLContext:
        """The metrics server's TLS context: the mounted pair (watched for rotation) or a self-signed one."""
        context = tls.server_context()
        cert_dir = self.options.metrics_cert_dir
        if cert_dir is None:
            tls.load_pair(context, tls.self_signed_pair("metrics-server"))
            log.info("Serving metrics with a self-signed certificate generated at start-up")
            return context
        watcher = tls.CertWatcher(context, cert_dir)
        try:
            watcher.load()
        except (OSError, ssl.SSLError) as err:
            raise ManagerError(f"cannot load the metrics certificate from {cert_dir}: {err}") from err
        self._cert_watch_task = self._spawn("metrics-cert-watcher", watcher.run())
        return context
