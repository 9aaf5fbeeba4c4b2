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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.status import dcd_rolled

Obj = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class WorkerRollout:
    """Which old worker DCDs to keep this round, and the worker hash of the pods serving now."""

    keep: frozenset[str]  # names of live DCDs kept although no longer desired
    serving_hash: str | None  # the kept set's hash while one is kept (None: unknown), else the new one

    @property
    def in_progress(self) -> bool:
        return bool(self.keep)


def service_of(dcd: Obj) -> str | None:
    """The graph service a DCD was generated for (`spec.serviceName`, else its component label)."""
    spec = dcd.get("spec") or {}
    labels = (dcd.get("metadata") or {}).get("labels") or {}
    name = spec.get("serviceName") or labels.get(c.LABEL_COMPONENT)
    return str(name) if name else None


def plan_worker_rollout(
    *,
    desired: Mapping[str, str],
    workers: frozenset[str],
    new_hash: str,
    live: Sequence[Obj],
    views: Mapping[str, Obj | None],
) -> WorkerRollout:
    """Decide which of the graph's `live` DCDs survive this round although not desired.

    `desired` maps each service to its DCD name, `workers` names the worker services, `views` gives
    the freshest view of each desired DCD by name (None: not created yet).
    """
    wanted = set(desired.values())
    keep: set[str] = set()
    hashes: set[str | None] = set()
    for dcd in live:
        meta = dcd.get("metadata") or {}
        name = str(meta.get("name"))
        svc = service_of(dcd)
        if name in wanted or svc not in workers or meta.get("deletionTimestamp"):
            continue
        successor = views.get(desired[svc])
        if dcd_rolled(dcd) and not (successor is not None and dcd_rolled(successor)):
            keep.add(name)
            hashes.add((meta.get("labels") or {}).get(c.LABEL_WORKER_HASH))
    if not keep:
        return WorkerRollout(frozenset(), new_hash)
    serving = sorted(h for h in hashes if h)
    return WorkerRollout(frozenset(keep), serving[0] if len(serving) == 1 and None not in hashes else None)
