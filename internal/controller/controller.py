"""A controller: one rate-limited queue and N workers that each loop over `_process_next`.

Lifecycle (written down because the manager relies on it):
  `run()` starts `max_concurrent_reconciles` workers and returns when they have all exited.
  `stop()` stops taking work: the queue is shut down, each worker finishes the reconcile it is in and
  exits before taking another key. The manager bounds that wait and cancels `run()` past it.

The queue is the controller's own: keys reach it only through the handlers the builder attaches and
through `watch()` (a source attached later, controller-runtime's `Controller.Watch`).
One reconcile: an `Exception` is an error (retried with backoff unless terminal); a reconcile that
outlives `reconcile_timeout` is cancelled and is such an error. Anything else that is not an
`Exception` (cancellation from shutdown, KeyboardInterrupt, SystemExit) propagates: it ends the
worker, with the key released.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

import structlog
from dynamo_operator.internal.cache.interface import Informer
from dynamo_operator.internal.client.gate import Priority, request_priority
from dynamo_operator.internal.client.resource import split_key
from dynamo_operator.internal.controller import metrics
from dynamo_operator.internal.controller.handlers import EnqueueMapped, Mapper
from dynamo_operator.internal.controller.hotloop import HotLoopDetector
from dynamo_operator.internal.controller.predicates import Predicate
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.controller.result import ReconcileTimeout, Result, TerminalError
from dynamo_operator.internal.controller.settle import Outcome, settle
from dynamo_operator.internal.controller.source import Channel
from dynamo_operator.internal.workqueue.interface import WorkQueue
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

log = structlog.get_logger(__name__)
T = TypeVar("T")
_tracer = trace.get_tracer(__name__)

DEFAULT_RECONCILE_TIMEOUT = 300.0
"""Seconds one reconcile may take before it is cancelled and retried: five times the histogram's
last bucket (60 s), so only a reconcile stuck on something (a call that never answers) reaches it
and its worker is freed for the other keys."""


class Controller:
    """Runs `reconciler` for keys from `queue`, with metrics, spans and log context per reconcile."""

    def __init__(
        self,
        *,
        name: str,
        reconciler: Reconciler,
        queue: WorkQueue[str],
        max_concurrent_reconciles: int = 1,
        hot_loops: HotLoopDetector | None = None,
        reconcile_timeout: float | None = DEFAULT_RECONCILE_TIMEOUT,
        request_priority: Priority = Priority.NORMAL,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError(f"max_concurrent_reconciles must be >= 1, got {max_concurrent_reconciles}")
        if reconcile_timeout is not None and reconcile_timeout <= 0:
            raise ValueError(f"reconcile_timeout must be > 0 or None (no limit), got {reconcile_timeout}")
        self._reconcile_timeout = reconcile_timeout
        self._request_priority = request_priority
        self.name = name
        self._queue = queue
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self._reconciler = reconciler
        self._stopping = False
        self._started = False
        metrics.init_metrics(name, max_concurrent_reconciles=max_concurrent_reconciles)
        self._active = metrics.ACTIVE_WORKERS.labels(name)
        self._time = metrics.RECONCILE_TIME.labels(name)
        self._totals = {o: metrics.RECONCILE_TOTAL.labels(name, o.value) for o in Outcome}
        self._errors = metrics.RECONCILE_ERRORS.labels(name)
        self._terminal = metrics.TERMINAL_RECONCILE_ERRORS.labels(name)
        self._timeouts = metrics.RECONCILE_TIMEOUTS.labels(name)
        self._hot_loops = HotLoopDetector() if hot_loops is None else hot_loops
        self._hot_keys = metrics.HOT_LOOP_KEYS.labels(name)
        # The last terminal error logged per key: a refused object is reconciled again by its own
        # status and stamp writes, and the same refusal is not news (its condition and Event are
        # written once too). Cleared by the key's next other outcome; one entry per refused object.
        self._told: dict[str, str] = {}

    def watch(self, source: Informer, mapper: Mapper, predicates: Sequence[Predicate] = ()) -> None:
        """Reconcile the keys `mapper` returns for events of `source` that pass `predicates`, from now on
        (for informers that start while the operator runs, e.g. of an API installed later)."""
        source.add_event_handler(EnqueueMapped(self._queue, mapper, predicates))

    def watch_channel(self, channel: Channel[T], mapper: Callable[[T], Iterable[str]]) -> None:
        """Reconcile the keys `mapper(item)` returns for every item sent on `channel` from now on."""

        def receive(item: T) -> None:
            for key in dict.fromkeys(mapper(item)):
                self._queue.add(key)

        channel.subscribe(receive)

    async def run(self) -> None:
        """Run the workers until `stop()`; a controller runs once."""
        if self._started:
            raise RuntimeError(f"controller {self.name!r} was already started")
        self._started = True
        log.info("Starting workers", controller=self.name, worker_count=self.max_concurrent_reconciles)
        try:
            # Every request a reconcile makes (and the tasks it starts) queues at this priority in
            # the client's gate; a status write raises its own.
            with request_priority(self._request_priority):
                async with asyncio.TaskGroup() as group:
                    for i in range(self.max_concurrent_reconciles):
                        group.create_task(self._worker(), name=f"{self.name}-worker-{i}")
        finally:
            self._queue.shut_down()
        log.info("All workers finished", controller=self.name)

    def stop(self) -> None:
        """Stop handing out keys; in-flight reconciles finish, then `run()` returns."""
        self._stopping = True
        self._queue.shut_down()

    async def _worker(self) -> None:
        while not self._stopping:
            key = await self._queue.get()
            if key is None:
                return
            try:
                if not self._stopping:
                    await self._process(key)
            finally:
                # done() releases the key (a parked add is replayed now); it is not forget().
                self._queue.done(key)

    async def _process(self, key: str) -> None:
        if self._hot_loops.observe(key):
            self._hot_keys.inc()
            log.warning(
                "Key reconciled again and again: a hot loop?",
                controller=self.name,
                key=key,
                reconciles=self._hot_loops.count(key),
                window_seconds=self._hot_loops.window,
            )
        namespace, name = split_key(key)
        reconcile_id = str(uuid.uuid4())
        context = {
            "controller": self.name,
            "namespace": namespace,
            "name": name,
            "reconcile_id": reconcile_id,
        }
        outcome: Result | Exception
        with (
            structlog.contextvars.bound_contextvars(**context),
            _tracer.start_as_current_span(
                "reconcile", attributes={f"k8s.{k}": str(v) for k, v in context.items() if v}
            ) as span,
        ):
            self._active.inc()
            started = time.perf_counter()
            try:
                outcome = await self._reconcile(key)
            except TerminalError as err:
                outcome = err
                self._terminal.inc()
                # The object is wrong, not the code: one line, no traceback (a condition and an Event
                # carry the details to the user); multi-line messages (validation errors) are joined.
                message = "; ".join(line.strip() for line in str(err).splitlines() if line.strip())
                if self._told.get(key) == message:
                    log.debug("Reconciler error (terminal, not retried, as before)", error=message)
                else:
                    self._told[key] = message
                    log.error("Reconciler error (terminal, not retried)", error=message)
            except ReconcileTimeout as err:
                outcome = err
                self._timeouts.inc()
                log.error("Reconcile timed out", error=str(err))
            except Exception as err:
                outcome = err
                log.error("Reconciler error", exc_info=err)
            finally:
                self._time.observe(time.perf_counter() - started)
                self._active.dec()
            if not isinstance(outcome, TerminalError):
                self._told.pop(key, None)
            if isinstance(outcome, Exception):
                span.record_exception(outcome)
                span.set_status(Status(StatusCode.ERROR, str(outcome)))
            elif outcome is None:  # a reconciler that forgot to return: treat as success
                outcome = Result()
            label = settle(self._queue, key, outcome)
            span.set_attribute("reconcile.result", label.value)
        self._totals[label].inc()
        if label is Outcome.ERROR:
            self._errors.inc()

    async def _reconcile(self, key: str) -> Result:
        """One call of the reconciler, cancelled past the reconcile timeout (ReconcileTimeout).

        `asyncio.timeout` tells its own expiry from a cancellation of the worker (shutdown): only
        the first becomes ReconcileTimeout, the second propagates as CancelledError. A TimeoutError
        the reconciler raises itself (a client's) stays an ordinary error.
        """
        deadline = asyncio.timeout(self._reconcile_timeout)
        try:
            async with deadline:
                return await self._reconciler.reconcile(key)
        except TimeoutError as err:
            if deadline.expired() and self._reconcile_timeout is not None:
                raise ReconcileTimeout(key, self._reconcile_timeout) from err
            raise
