"""The graph reconciler's worker rollout step: reads what the decision needs from the cache, scales the
old worker DCDs down, and records the rollout's Events. The decision itself is pure
(internal/dynamo/rollingupdate.py for single-node graphs, rollout.py for the rest).
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildClient, ChildReader, RecentWrites, Recorder
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.dynamo import rollingupdate
from dynamo_operator.internal.dynamo.graph import services_of
from dynamo_operator.internal.dynamo.rollingupdate import Event, RollingPlan
from dynamo_operator.internal.dynamo.rollout import plan_worker_rollout
from dynamo_operator.internal.dynamo.workerhash import is_worker

Obj = dict[str, Any]


def rfc3339(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Rollout:
    """One round's plan plus whether the graph is rolled the managed way."""

    plan: RollingPlan
    managed: bool
    old_left: bool  # some worker DCD of an older spec is still live


# A graph that is not rolled by this module at all (the Grove pathway: Grove rolls its own pods).
NO_ROLLOUT: Final = Rollout(plan=RollingPlan(status=None), managed=False, old_left=False)


class WorkerRoller:
    """Plans each round of a graph's worker rollout and carries out the parts that are not children
    of the desired set (old DCDs' replicas, Events)."""

    def __init__(
        self,
        *,
        client: ChildClient,
        cache: ChildReader,
        recorder: Recorder,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client, self._cache, self._recorder, self._clock = client, cache, recorder, clock
        self._scaled = RecentWrites()  # replicas we patched that the cache may not show yet

    def plan(
        self,
        graph: Obj,
        *,
        names: Mapping[str, str],
        new_hash: str,
        children: Sequence[Obj],
        previous: Mapping[str, Any] | None,
    ) -> Rollout:
        """This round's rollout of `graph`, whose services map to DCD `names` (worker hash `new_hash`)."""
        namespace = graph["metadata"].get("namespace") or ""
        services = services_of(graph)
        workers = {svc: spec for svc, spec in services.items() if is_worker(spec)}
        views = {names[svc]: self._cache.get(kinds.DCD, f"{namespace}/{names[svc]}") for svc in workers}
        managed = rollingupdate.supports_managed_rollout(services)
        plan = rollingupdate.plan_rolling_update(
            previous=previous,
            desired=names,
            workers=workers,
            new_hash=new_hash,
            live=children,
            views=views,
            managed=managed,
            now=rfc3339(self._clock()),
        )
        old_left = bool(rollingupdate.old_worker_dcds(desired=names, workers=workers, live=children))
        if not managed:
            # Replaced as a whole: old workers kept while they serve and their successors do not yet.
            whole = plan_worker_rollout(
                desired=names, workers=frozenset(workers), new_hash=new_hash, live=children, views=views
            )
            plan = replace(plan, keep=whole.keep, serving_hash=whole.serving_hash)
        return Rollout(plan=plan, managed=managed, old_left=old_left)

    async def scale_old(self, namespace: str, replicas: Mapping[str, int]) -> None:
        """Merge-patch `spec.replicas` of old worker DCDs (a DCD gone meanwhile needs nothing)."""
        for name, count in sorted(replicas.items()):
            key = ("replicas", namespace, name)
            live = self._cache.get(kinds.DCD, f"{namespace}/{name}")
            if self._scaled.in_flight(key, live) == count:
                continue  # sent already; the cache has not caught up
            try:
                await self._client.patch(kinds.DCD, name, {"spec": {"replicas": count}}, namespace=namespace)
            except errors.NotFound:
                continue
            self._scaled.remember(key, live, count)

    def record(self, graph: Obj, events: Sequence[Event]) -> None:
        for event in events:
            self._recorder.event(
                graph,
                type="Warning" if event.type == "Warning" else "Normal",
                reason=event.reason,
                message=event.message,
            )

    def not_supported(self, graph: Obj, rollout: Rollout, created: Sequence[str], new_hash: str) -> None:
        """One Warning when a multinode graph's new workers are created beside old ones."""
        if rollout.managed or not rollout.old_left:
            return
        if any(name.endswith(f"-{new_hash}") for name in created):
            self.record(graph, [rollingupdate.not_supported_event(new_hash)])
