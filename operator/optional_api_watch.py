"""Keeps the operator's view of the optional APIs current while it runs, from their CRDs.

A metadata-only informer on CustomResourceDefinitions (trimmed to name, uid, resourceVersion and
deletionTimestamp) says *that* one of the CRDs in the table changed: it appeared, was updated
(becoming Established is a status write, which moves its resourceVersion) or vanished. One loop then
re-reads those CRDs (a GET each: their schemas are too big to cache) and computes what is served.
A change is published in three steps, so that no reconcile uses an API before its informer holds
the objects, nor reads an informer that is gone:

  1. `prepare(new)` on every subscriber: start what the new set needs (informers) and wait for it;
  2. `current = new`: generation contexts built from now on see it;
  3. `changed(old, new)` on every subscriber: drop what is no longer needed, requeue the owners.

A CRD that cannot be read keeps its API's previous answer and the read is retried with backoff: an
error is never taken for "absent" (nor for "present").
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, Protocol

import structlog
from dynamo_operator.internal.cache.backoff import Backoff
from dynamo_operator.internal.cache.interface import Obj, StoreReader
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION, Resource
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.optional_api_table import CRD_APIS, CRD_NAMES
from dynamo_operator.optional_apis import (
    Answer,
    as_fields,
    crd_serves,
    difference,
    with_answers,
)

log = structlog.get_logger(__name__)


class Subscriber(Protocol):
    """Something that depends on which optional APIs are served (see the module docstring)."""

    async def prepare(self, capabilities: Capabilities) -> None: ...
    async def changed(self, old: Capabilities, new: Capabilities) -> None: ...


class CrdReader(Protocol):
    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj: ...


def crd_presence(obj: Obj) -> Obj:
    """Transform for the CRD informer: what tells that a CRD changed, nothing more (the metadata of a
    client-side applied CRD carries its whole schema again in an annotation)."""
    meta = obj.get("metadata") or {}
    kept = {k: meta[k] for k in ("name", "uid", "resourceVersion", "deletionTimestamp") if k in meta}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": kept}


class OptionalApiWatch:
    """The optional APIs served right now (`current`), kept current by `run()`; an informer handler."""

    def __init__(
        self,
        *,
        client: CrdReader,
        crds: StoreReader,
        initial: Capabilities,
        clock: Clock | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.current = initial
        self._client = client
        self._crds = crds  # the trimmed CRD informer's store: which CRDs exist
        self._clock = clock or RealClock()
        self._backoff = Backoff(self._clock, rng or random.Random())
        self._subscribers: list[Subscriber] = []
        # Set: the CRDs may have changed since the last read. Starts set, so the first pass checks the
        # start-up answer (discovery) against the CRDs.
        self._dirty = asyncio.Event()
        self._dirty.set()

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    # -- EventHandler: any change of a CRD in the table means "read again" --------------------------

    def on_add(self, obj: Obj) -> None:
        self._touch(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._touch(new)

    def on_delete(self, obj: Obj) -> None:
        self._touch(obj)

    def _touch(self, obj: Obj) -> None:
        if (obj.get("metadata") or {}).get("name") in CRD_NAMES:
            self._dirty.set()

    # -- the loop ----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Re-read and publish after every relevant CRD change, until cancelled."""
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            if not await self.refresh():
                # Some CRD could not be read: try again later (events may set the flag sooner).
                await self._clock.sleep(self._backoff.next_delay())
                self._dirty.set()

    async def refresh(self) -> bool:
        """Read the CRDs once and publish what changed; False when some answer stayed unknown."""
        answers = await self._read()
        await self._publish(with_answers(self.current, answers))
        return None not in answers.values()

    async def _read(self) -> dict[str, Answer]:
        answers: dict[str, Answer] = {}
        for api in CRD_APIS:  # built-in APIs keep their start-up answer
            meta = (self._crds.get(api.crd_name) or {}).get("metadata")
            if meta is None or meta.get("deletionTimestamp"):
                answers[api.name] = False  # no CRD, or one on its way out: its objects are going
                continue
            try:
                crd: Any = await self._client.get(CUSTOM_RESOURCE_DEFINITION, api.crd_name)
            except errors.NotFound:
                answers[api.name] = False  # deleted since the informer saw it
            except (errors.ApiError, errors.TransportError) as err:
                log.warning(
                    "Cannot read the CRD of an optional API; keeping its previous state",
                    api=api.name,
                    crd=api.crd_name,
                    served=api.capability(self.current),
                    error=str(err),
                )
                answers[api.name] = None
            else:
                answers[api.name] = crd_serves(api, crd)
        return answers

    async def _publish(self, new: Capabilities) -> None:
        old = self.current
        if new == old:
            return
        appeared, vanished = difference(old, new)
        log.info("Optional APIs changed", appeared=appeared, vanished=vanished, **as_fields(new))
        for subscriber in self._subscribers:
            await subscriber.prepare(new)
        self.current = new
        for subscriber in self._subscribers:
            await subscriber.changed(old, new)
