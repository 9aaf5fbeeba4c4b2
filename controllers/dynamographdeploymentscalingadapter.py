"""DynamoGraphDeploymentScalingAdapter reconciler: the adapter is the one writer of its service's replicas.

Whoever scales (HPA or KEDA through the scale subresource, the planner, a user) writes the adapter's
`spec.replicas`; this reconciler copies it into the `replicas` of the graph's component (v1beta1,
as stored: `spec.components[name=<svc>].replicas`) with
server-side apply under its own field manager, and reverts any other edit of that field (the graph
watch re-triggers on every change of the graph's replica picture). It never copies the graph's value
back into the adapter, and the graph reconciler creates adapters create-only and never writes the
graph's spec: no path can undo an autoscaler's decision (upstream's race, reference §8).

Status: `replicas` mirrors what runs (the graph's per-service status), `selector` selects the pods
HPA should average metrics over, `lastScaleTime` marks the last write into the graph, and the `Ready`
condition says whether the adapter drives its service (internal.dynamo.scalingadapter.readiness):
a missing graph or service, or a component without `scalingAdapter`, is `Ready=False` with one
Warning Event per transition and no requeue: the graph watch brings the adapter back when the graph
changes. An adapter whose owning graph is gone waits quietly for the garbage collector.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildClient, ChildReader, Recorder, StatusWriter
from dynamo_operator.internal.client.resource import object_key
from dynamo_operator.internal.clock import Clock, RealClock
from dynamo_operator.internal.controller.builder import Builder, Built
from dynamo_operator.internal.controller.predicates import Funcs, generation_changed
from dynamo_operator.internal.controller.result import Result
from dynamo_operator.internal.dynamo.common.inputs import (
    ScalingAdapter,
    StoredGraph,
    adapter_status_view,
    adapter_view,
    stored_graph_view,
)
from dynamo_operator.internal.dynamo.pod.template import multinode_node_count
from dynamo_operator.internal.dynamo.scalingadapter import adapter as logic
from dynamo_operator.internal.dynamo.scalingadapter import readiness
from dynamo_operator.internal.dynamo.scalingadapter.status import adapter_status
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.observability.reconcile_metrics import observed
from dynamo_operator.internal.settings import Settings
from dynamo_operator.internal.timestamps import rfc3339

log = structlog.get_logger(__name__)

Obj = dict[str, Any]


def replica_picture(dgd: Mapping[str, Any]) -> dict[str, tuple[int, int, int, bool]]:
    """Per service: (desired replicas, nodes per replica, replicas reported running, adapter enabled)
    — everything an adapter copies into the graph, reports from it, or decides its readiness by."""
    graph = stored_graph_view(dgd)
    reported_by_name = graph.get("status", {}).get("components") or {}
    out = {}
    for component in graph.get("spec", {}).get("components") or ():
        name = component.get("name")
        replicas = component.get("replicas")
        reported = reported_by_name.get(name)
        running = (reported.get("replicas") if reported else None) or 0
        out[name] = (
            logic.DEFAULT_REPLICAS if replicas is None else int(replicas),
            multinode_node_count(component),
            int(running),
            readiness.adapter_enabled(component),
        )
    return out


# A graph update matters to its adapters only when the replica picture moved: spec edits elsewhere
# and status noise (conditions, messages) are not theirs to react to. A deletion matters to adapters
# the graph does not own (they report GraphNotFound); its own ones see their owner gone and stay quiet
# until the garbage collector removes them.
graph_replicas_changed = Funcs(on_update=lambda old, new: replica_picture(old) != replica_picture(new))


def _dgd_ref(adapter: Mapping[str, Any]) -> Any:
    return (adapter.get("spec") or {}).get("dgdRef")


# Which adapter drives a service changes when an adapter of it appears, vanishes or retargets; scale
# requests (spec.replicas) and status writes do not change it.
adapter_target_changed = Funcs(on_update=lambda old, new: _dgd_ref(old) != _dgd_ref(new))


class DynamoGraphDeploymentScalingAdapterReconciler:
    """Pushes an adapter's replicas into its graph and reports the service's scale."""

    def __init__(
        self, *, client: ChildClient, cache: ChildReader, recorder: Recorder, clock: Clock | None = None
    ) -> None:
        self._client, self._cache, self._recorder = client, cache, recorder
        self._clock: Clock = clock or RealClock()
        self._status = StatusWriter(client, kinds.DGDSA)

    def setup(self, b: Builder) -> None:
        """For adapters (spec changes, i.e. scale requests); Watches graphs whose replica picture
        changed, mapped to the adapters that reference them; Watches adapters that appear, vanish or
        change target, mapped to the other adapters of the same service (which one drives may change)."""
        b.for_(kinds.DGDSA, predicates=(generation_changed,))
        b.watches(kinds.DGD, self.adapters_of_graph, predicates=(graph_replicas_changed,))
        b.watches(kinds.DGDSA, self.adapters_sharing_target, predicates=(adapter_target_changed,))

    def adapters_of_graph(self, dgd: Obj) -> list[str]:
        """Keys of the adapters in the graph's namespace whose dgdRef names it (label-independent, so
        hand-made adapters are served too)."""
        meta = dgd.get("metadata") or {}
        namespace, name = meta.get("namespace"), meta.get("name")
        if not namespace:
            return []
        return [
            object_key(a)
            for a in self._cache.by_index(kinds.DGDSA, "namespace", str(namespace))
            if ((a.get("spec") or {}).get("dgdRef") or {}).get("name") == name
        ]

    def adapters_sharing_target(self, adapter: Obj) -> list[str]:
        """Keys of the other adapters naming the same graph and service as `adapter`."""
        return [object_key(a) for a in self._rivals(adapter)]

    def _rivals(self, raw: Mapping[str, Any]) -> list[Obj]:
        adapter = adapter_view(raw)
        meta = adapter.get("metadata", {})
        namespace = meta.get("namespace")
        if not namespace:
            return []
        t = logic.target(adapter)
        return [
            a
            for a in self._cache.by_index(kinds.DGDSA, "namespace", str(namespace))
            if logic.target(adapter_view(a)) == t and a["metadata"].get("name") != meta.get("name")
        ]

    async def reconcile(self, key: str) -> Result:
        raw = self._cache.get(kinds.DGDSA, key)
        if raw is None or raw["metadata"].get("deletionTimestamp"):
            return Result()
        adapter = adapter_view(raw)
        t = logic.target(adapter)
        cached = self._cache.get(kinds.DGD, f"{t.namespace}/{t.dgd}")
        dgd = stored_graph_view(cached) if cached is not None else None
        if readiness.awaiting_collection(adapter, dgd):
            log.debug("owning graph gone; awaiting garbage collection", adapter=key, dgd=t.dgd)
            return Result()
        previous = self._status.current(raw)
        ready = readiness.ready_condition(adapter, dgd, [adapter_view(a) for a in self._rivals(raw)])
        scaled_at: str | None = None
        if ready.status == "True" and dgd is not None:
            dgd, scaled_at = await self._scale(adapter, t, dgd)
        # Not driving: nothing is written into the graph. No requeue: only a change of the graph (its
        # watch) or of the adapter (its spec) can resolve this, and both re-trigger us.
        status = adapter_status(
            adapter_status_view(previous),
            ready,
            dgd=dgd,
            service=t.service,
            scaled_at=scaled_at,
            generation=adapter["metadata"].get("generation"),
            now=self._clock.wall(),
        )
        await self._status.write(raw, status)
        # After the write, so a failed write re-decides on retry.
        if readiness.warrants_warning(previous.get("conditions"), ready):
            self._recorder.event(raw, type="Warning", reason=ready.reason, message=ready.message)
        return Result()

    async def _scale(
        self, adapter: ScalingAdapter, t: logic.Target, dgd: StoredGraph
    ) -> tuple[StoredGraph, str | None]:
        """Write the adapter's replicas into the graph when they differ; the graph as written and the
        time it was (None: nothing to write)."""
        current = logic.graph_replicas(dgd, t.service)
        want = logic.desired_replicas(adapter)
        if current is None or current == want:
            return dgd, None
        # The resourceVersion makes the apply conditional: written from a stale cache (say, a
        # service removed meanwhile) it conflicts and is retried on a fresh view instead of
        # resurrecting a half service.
        body = logic.replicas_apply(t, want, resource_version=dgd["metadata"]["resourceVersion"])
        try:
            written = await self._client.apply(kinds.DGD, body, field_manager=logic.FIELD_MANAGER, force=True)
        except Exception as err:
            self._recorder.event(
                adapter,
                type="Warning",
                reason="UpdateFailed",
                message=f"Failed to update DGD {t.dgd}: {err}",
            )
            raise
        self._recorder.event(
            adapter,
            type="Normal",
            reason="Scaled",
            message=f"Scaled service {t.service} from {current} to {want} replicas",
        )
        return stored_graph_view(written), rfc3339(self._clock.wall())


CONTROLLER_NAME = "dgdscalingadapter"


def build(mgr: Manager, settings: Settings) -> Built[DynamoGraphDeploymentScalingAdapterReconciler]:
    """The reconciler and its controller (nothing in `settings` concerns adapters)."""
    reconciler = DynamoGraphDeploymentScalingAdapterReconciler(
        client=mgr.client, cache=mgr.cache, recorder=mgr.event_recorder(CONTROLLER_NAME)
    )
    b = mgr.builder(CONTROLLER_NAME)
    reconciler.setup(b)
    return Built(b.complete(observed(reconciler, kinds.DGDSA)), reconciler)
