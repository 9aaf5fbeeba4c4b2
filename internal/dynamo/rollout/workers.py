"""Replacing a graph's worker DCDs when the worker hash changes, decided from what the cluster shows. Pure.

A worker spec edit gives every worker service a new DCD name (workerhash.py), so the graph reconciler
creates a new set of worker DCDs. The old ones are no longer desired, but pruning them at once would
stop every worker before its successor serves. So an old worker DCD is kept while it serves (its
controller saw its latest spec and reports it Available) and the new DCD of its service does not yet;
the reconcile that sees the new one Available prunes the old. An old DCD that does not serve is
pruned at once: there is nothing to protect, and it keeps at most one old set beside the new one,
and only until the new one is ready. DCDs named before worker hashes existed (`<dgd>-<svc>`) are
treated the same way, so upgrading the operator keeps workers serving.

This whole-set replacement is what graphs with a multinode service get (LeaderWorkerSets roll their
own groups); single-node graphs are rolled replica by replica in `status.rollingUpdate`
(rollingupdate.py).

Which hash names the worker DCDs (`worker_generation`) follows upstream's two eras, so that a graph
either era deployed is taken over in place. Upstream 1.0-1.3 named workers with the v1 hash
(workerhash.py) and recorded it in `nvidia.com/current-worker-hash`; from 1.4 on it names new
generations with the v2 hash (workerhash_v2.py) in `nvidia.com/current-worker-hash-v2`. The v1 value
is opaque from then on: a graph recording it keeps that name while its spec has not changed, which is
known from the v2 value recorded next to it (recorded at the first settled look, as upstream's
migration does). Any worker change moves it to a v2-named generation, after which only v2 is
recorded. A v1 graph caught in the middle of a rollout (its workers carry more than one hash) is
retargeted to v2 at once instead of finishing a v1 generation nobody records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, component_view, json_object
from dynamo_operator.internal.dynamo.status.readiness import dcd_rolled

ANNOTATION_V1 = c.ANNOTATION_CURRENT_WORKER_HASH
ANNOTATION_V2 = "nvidia.com/current-worker-hash-v2"
LEGACY_HASH = "legacy"
"""Upstream's v1 value for workers that predate worker hashes (`<dgd>-<svc>` DCDs): never a name."""


@dataclass(frozen=True, slots=True)
class WorkerGeneration:
    """The hash naming this round's worker DCDs, and the spec's v2 hash it was chosen against."""

    active: str
    v2: str

    @property
    def v1_era(self) -> bool:
        """The workers keep a v1 name: the spec is still the one the v1 generation was made of."""
        return self.active != self.v2

    def recorded(self) -> dict[str, str | None]:
        """The graph's two hash annotations once this generation serves (None: absent)."""
        return {ANNOTATION_V1: self.active if self.v1_era else None, ANNOTATION_V2: self.v2}


def worker_generation(
    annotations: Mapping[str, Any],
    *,
    v2: str,
    live_hashes: frozenset[str],
    rolling: bool,
    v1_of_spec: Callable[[], str] | None = None,
) -> WorkerGeneration:
    """Which hash names the graph's worker DCDs (module docstring): the recorded v1 hash while the
    spec is unchanged since (the recorded v2 absent or equal to `v2`) and no rollout is under way
    (`rolling`: the graph's rollout status says so; `live_hashes`: the worker-hash labels of its live
    worker DCDs), else `v2`.

    A graph replaced whole (`kubectl replace`, `helm upgrade --force`) has lost both annotations;
    its live workers still say which generation serves. When they all carry one hash that is the
    v1 hash of the current spec (`v1_of_spec`, computed only then), that v1 generation is kept
    instead of rolling every worker for bookkeeping (upstream issue 13495)."""
    v1 = str(annotations.get(ANNOTATION_V1) or "")
    recorded_v2 = str(annotations.get(ANNOTATION_V2) or "")
    if not v1 and not recorded_v2 and len(live_hashes) == 1 and v2 not in live_hashes and v1_of_spec:
        [live] = live_hashes
        if live == v1_of_spec() and not rolling:
            return WorkerGeneration(active=live, v2=v2)
    if not v1 or v1 == LEGACY_HASH or (recorded_v2 and recorded_v2 != v2):
        return WorkerGeneration(active=v2, v2=v2)
    if not recorded_v2 and (rolling or not live_hashes <= {v1}):
        return WorkerGeneration(active=v2, v2=v2)  # retarget a v1 rollout under way
    return WorkerGeneration(active=v1, v2=v2)


def hash_annotations_patch(
    annotations: Mapping[str, str], generation: WorkerGeneration, *, settled: bool
) -> dict[str, str | None]:
    """The merge patch bringing the graph's hash annotations to `generation` (None deletes). Written
    only once the generation serves alone (`settled`): while old workers serve, the annotations keep
    naming them, as upstream's do until its rollout completes."""
    if not settled:
        return {}
    return {
        key: value for key, value in generation.recorded().items() if (annotations.get(key) or None) != value
    }


def worker_hashes_of(live: Sequence[ForeignObject], workers: frozenset[str]) -> frozenset[str]:
    """The worker-hash labels of the live (not deleting) DCDs of the `workers` services."""
    out = set()
    for dcd in live:
        meta = json_object(dcd.get("metadata"))
        if meta.get("deletionTimestamp") or service_of(dcd) not in workers:
            continue
        value = json_object(meta.get("labels")).get(c.LABEL_WORKER_HASH)
        if value:
            out.add(str(value))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class WorkerRollout:
    """Which old worker DCDs to keep this round, and the worker hash of the pods serving now."""

    keep: frozenset[str]  # names of live DCDs kept although no longer desired
    serving_hash: str | None  # the kept set's hash while one is kept (None: unknown), else the new one

    @property
    def in_progress(self) -> bool:
        return bool(self.keep)


def service_of(dcd: ForeignObject) -> str | None:
    """The graph service a DCD was generated for (`spec.serviceName`, or `spec.name` in a DCD's
    v1beta1 form, else its component label). Read without a view: either version may come."""
    spec = json_object(dcd.get("spec"))
    labels = json_object(json_object(dcd.get("metadata")).get("labels"))
    name = spec.get("serviceName") or spec.get("name") or labels.get(c.LABEL_COMPONENT)
    return str(name) if name else None


def plan_worker_rollout(
    *,
    desired: Mapping[str, str],
    workers: frozenset[str],
    new_hash: str,
    live: Sequence[ForeignObject],
    views: Mapping[str, ForeignObject | None],
) -> WorkerRollout:
    """Decide which of the graph's `live` DCDs survive this round although not desired.

    `desired` maps each service to its DCD name, `workers` names the worker services, `views` gives
    the freshest view of each desired DCD by name (None: not created yet).
    """
    wanted = set(desired.values())
    keep: set[str] = set()
    hashes: set[str | None] = set()
    for found in live:
        dcd = component_view(found)
        meta = dcd.get("metadata") or {}
        name = str(meta.get("name"))
        svc = service_of(dcd)
        if name in wanted or svc not in workers or meta.get("deletionTimestamp"):
            continue
        successor = views.get(desired[svc])
        if dcd_rolled(dcd) and not (successor is not None and dcd_rolled(component_view(successor))):
            keep.add(name)
            hashes.add((meta.get("labels") or {}).get(c.LABEL_WORKER_HASH))
    if not keep:
        return WorkerRollout(frozenset(), new_hash)
    serving = sorted(h for h in hashes if h)
    return WorkerRollout(frozenset(keep), serving[0] if len(serving) == 1 and None not in hashes else None)
