"""The reflector: keeps a store equal to the API server's view of one collection, forever.

It is a state machine. `Phase` names where it is; each phase runs one step that ends in an
outcome; `next_phase` (the only place that decides relist versus re-watch versus back off) maps
(phase, outcome) to the next phase:

    LIST    --Listed------------------> WATCH      pages of 500 (each admitted), then replace the store
    WATCH   --WatchClosed-------------> WATCH      server timeout: resume from the last rv
    WATCH   --WatchClosed(too short)--> BACKOFF    closed within 1 s having sent nothing
    any     --Gone (410 / too old)----> LIST       history compacted: relist from scratch
    any     --other error-------------> BACKOFF    429, 5xx, refused, reset, ...
    BACKOFF --Slept-------------------> WATCH      when a resourceVersion is known
    BACKOFF --Slept-------------------> LIST       when not (never listed, or after Gone)

Cancellation is the only way out: every `Exception` becomes an outcome, so a reflector never
dies silently and never stalls without retrying. A failure is a warning in the log, except a 410 or
a 429 (the ones a CRD update brings to every watch of its kind), which are debug until the same
reflector has failed `ROUTINE_FAILURES` times in a row.
"""

from __future__ import annotations

import enum
import random
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

import structlog
from dynamo_operator.internal.cache.backoff import Backoff
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.client.errors import Gone, TooManyRequests, error_from_status
from dynamo_operator.internal.client.model import ListPage, WatchEvent
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.clock import Clock

log = structlog.get_logger(__name__)

PAGE_SIZE = 500
# client-go treats a watch that ends within a second without a single event as a failure: the
# server is refusing or flapping, and re-watching at once would be a hot loop.
MIN_WATCH_SECONDS = 1.0
# How long a watch resumed after a failure runs before its store counts as current again: the server
# sends what happened since the resourceVersion first, so this only has to outlast that replay.
REPLAY_GRACE = 10.0
# Routine failures (410, 429) in a row that are logged at debug; from this many on, a warning.
ROUTINE_FAILURES = 3


class Phase(enum.Enum):
    LIST = enum.auto()  # no usable resourceVersion: LIST everything, replace the store
    WATCH = enum.auto()  # stream changes from self.resource_version
    BACKOFF = enum.auto()  # transient failure: wait, then WATCH (or LIST when no rv is known)


@dataclass(frozen=True, slots=True)
class Listed:
    """A complete LIST was applied to the store."""

    resource_version: str


@dataclass(frozen=True, slots=True)
class WatchClosed:
    """The server ended the watch stream cleanly."""

    events: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Slept:
    """The backoff wait is over."""


Outcome = Listed | WatchClosed | Slept | Exception


def next_phase(phase: Phase, outcome: Outcome, *, has_resource_version: bool) -> Phase:
    """The only place that chooses relist versus re-watch versus back off."""
    match phase, outcome:
        case _, Gone():
            return Phase.LIST
        case Phase.LIST, Listed():
            return Phase.WATCH
        case Phase.WATCH, WatchClosed(events=0, seconds=seconds) if seconds < MIN_WATCH_SECONDS:
            return Phase.BACKOFF
        case Phase.WATCH, WatchClosed():
            return Phase.WATCH
        case Phase.BACKOFF, Slept():
            return Phase.WATCH if has_resource_version else Phase.LIST
        case _, Exception():
            return Phase.BACKOFF
    raise AssertionError(f"no transition from {phase} on {outcome!r}")


class ListWatcher(Protocol):
    """The two API calls a reflector makes (the `Client` provides them)."""

    async def list_page(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = PAGE_SIZE,
        continue_token: str | None = None,
        resource_version: str | None = None,
        metadata_only: bool = False,
    ) -> ListPage: ...

    def watch(
        self,
        resource: Resource,
        *,
        namespace: str | None = None,
        resource_version: str,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AbstractAsyncContextManager[AsyncIterator[WatchEvent]]: ...


class Sink(Protocol):
    """Where the reflector writes (the informer: store + handlers)."""

    def admit(self, obj: Obj) -> Obj:
        """What the store keeps of `obj` (trimmed, transformed)."""
        ...

    def replace_admitted(self, objects: Iterable[Obj]) -> None:
        """Replace the whole collection with `objects`, each already passed through `admit`."""
        ...

    def upsert(self, obj: Obj) -> None: ...
    def delete(self, obj: Obj) -> None: ...


@dataclass(frozen=True, slots=True)
class Scope:
    """Which objects of a resource one reflector mirrors."""

    resource: Resource
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False  # the server sends apiVersion, kind and metadata only


class Reflector:
    """Runs LIST/WATCH/BACKOFF for one `Scope` into one `Sink` until cancelled."""

    def __init__(
        self,
        source: ListWatcher,
        scope: Scope,
        sink: Sink,
        *,
        clock: Clock,
        rng: random.Random | None = None,
    ) -> None:
        self._source = source
        self._scope = scope
        self._sink = sink
        self._clock = clock
        self._backoff = Backoff(clock, rng or random.Random())
        self.phase = Phase.LIST
        self.resource_version: str | None = None
        self.last_error: Exception | None = None
        self._failures = 0  # steps failed in a row, until a LIST lands or a watch runs its course
        # Monotonic time from which the sink counts as current (see `is_current`); None: it does not.
        self.current_from: float | None = None

    def is_current(self) -> bool:
        """Whether the sink follows the API server at the watch's delivery lag: a LIST has landed
        and no watch since has failed, or a watch resumed after a failure has run `REPLAY_GRACE`
        seconds (it replays what was missed, deletions included, in its first moments). A watch
        that ends cleanly and resumes from its last resourceVersion keeps it current."""
        return self.current_from is not None and self._clock.now() >= self.current_from

    async def run(self) -> None:
        """Loop forever; returns only by cancellation."""
        while True:
            await self.step()

    async def step(self) -> Outcome:
        """Run the current phase once and move to the next; returns the outcome (for tests)."""
        outcome: Outcome
        try:
            match self.phase:
                case Phase.LIST:
                    outcome = await self._list()
                case Phase.WATCH:
                    outcome = await self._watch()
                case Phase.BACKOFF:
                    outcome = await self._sleep()
        except Exception as err:  # every failure is an outcome; cancellation propagates
            outcome = err
        self._settle(outcome)
        return outcome

    def _settle(self, outcome: Outcome) -> None:
        previous = self.phase
        self.phase = next_phase(previous, outcome, has_resource_version=self.resource_version is not None)
        if self.phase is not Phase.WATCH:
            self.current_from = None  # failed or relisting: a missed event may hide behind it
        if isinstance(outcome, Exception):
            self.last_error = outcome
            self._failures += 1
            # A 410 (history compacted) and a 429 (throttled, or the collection's storage
            # re-initialising after its CRD changed, as the CA bundle written at an install makes
            # it) are routine: relist or back off, and say so at debug, as client-go does (V(4), V(2)).
            # The same reflector failing again and again is not routine, whatever the error.
            routine = isinstance(outcome, Gone | TooManyRequests) and self._failures < ROUTINE_FAILURES
            (log.debug if routine else log.warning)(
                "reflector step failed",
                resource=self._scope.resource.plural,
                namespace=self._scope.namespace,
                phase=previous.name,
                next=self.phase.name,
                error=f"{type(outcome).__name__}: {outcome}",
                failures=self._failures,
            )
        elif isinstance(outcome, Listed) or (self.phase is Phase.WATCH and isinstance(outcome, WatchClosed)):
            self._failures = 0  # a LIST landed, or a watch ran its course
        if self.phase is Phase.LIST:
            self.resource_version = None  # whatever we had is compacted or never existed

    async def _list(self) -> Listed:
        scope = self._scope
        items: list[Obj] = []
        token: str | None = None
        while True:
            # A fresh consistent read (no resourceVersion), paged; a stale watch-cache answer would
            # bring back objects a 410 just told us we had lost track of.
            page = await self._source.list_page(
                scope.resource,
                namespace=scope.namespace,
                label_selector=scope.label_selector,
                field_selector=scope.field_selector,
                limit=PAGE_SIZE,
                continue_token=token,
                metadata_only=scope.metadata_only,
            )
            # Admitted page by page: a LIST never holds more than one page of whole objects (before,
            # a start-up held every collection untrimmed at once: 401 MB at 1,000 graphs, issue #13).
            items.extend(self._sink.admit(obj) for obj in page.items)
            if not (token := page.continue_token):
                break
            del page
        self._sink.replace_admitted(items)
        self.resource_version = page.resource_version
        self.current_from = self._clock.now()
        return Listed(page.resource_version)

    async def _watch(self) -> WatchClosed:
        scope = self._scope
        assert self.resource_version is not None
        started = self._clock.now()
        events = 0
        async with self._source.watch(
            scope.resource,
            namespace=scope.namespace,
            resource_version=self.resource_version,
            label_selector=scope.label_selector,
            field_selector=scope.field_selector,
            metadata_only=scope.metadata_only,
        ) as stream:
            if self.current_from is None:  # resumed after a failure, from an older resourceVersion
                self.current_from = self._clock.now() + REPLAY_GRACE
            async for event in stream:
                events += 1
                obj = event.object
                match event.type:
                    case "ADDED" | "MODIFIED":
                        self._sink.upsert(obj)
                    case "DELETED":
                        self._sink.delete(obj)
                    case "BOOKMARK":
                        pass  # only moves the resourceVersion, below
                    case "ERROR":
                        raise error_from_status(int(obj.get("code") or 500), obj)
                rv = obj.get("metadata", {}).get("resourceVersion")
                if rv:
                    self.resource_version = str(rv)
        return WatchClosed(events=events, seconds=self._clock.now() - started)

    async def _sleep(self) -> Slept:
        await self._clock.sleep(self._backoff.next_delay())
        return Slept()
