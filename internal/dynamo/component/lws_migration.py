"""Moving a multinode component from one LeaderWorkerSet per replica to the one native-scaled set.

Before issue #39, a component of N replicas ran as N sets `<dcd>-0` … `<dcd>-<N-1>` of one group
each (plus a Volcano PodGroup of the same name per set when Volcano was served). Now it runs as the
one set `<dcd>-0` with `replicas: N` (workload.py). The DCD reconciler takes a component over from
the old shape without taking serving groups down:

1. `<dcd>-0` is kept and rewritten in place: its replicas rise to N. LWS adds the new groups with
   the new pod template first and replaces group 0 only once they are ready (it scales up before it
   rolls), while `<dcd>-1` … and every stale PodGroup are left running (`held`).
2. Once `<dcd>-0` runs the desired template at the desired replicas, every group updated, ready and
   Available (`settled`), and every pod of every group is Running and Ready (`groups_serving`: LWS
   counts a group ready once its leader is, while a worker may still be starting), the leftovers
   are pruned in the same sync.

So the ready groups never number fewer than before: until the new set alone has all N ready, the old
sets keep serving. Pure: the caller passes the live objects its cache holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common import naming
from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, json_object
from dynamo_operator.internal.dynamo.status.pod_diagnosis import Pod, pod_view
from dynamo_operator.internal.dynamo.status.readiness import LWS_KIND, lws_readiness

POD_GROUP_KIND = "PodGroup"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # LWS's label on every pod of a set
LWS_GROUP_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/group-index"  # ... and its group's index


def leftovers(dcd: str, children: Iterable[ForeignObject]) -> list[str]:
    """`Kind/name` of the children (the DCD's own LWSs and PodGroups, as cached) that the one-set shape
    has no place for: every LeaderWorkerSet but `<dcd>-0`, and every PodGroup (none is made any more).
    Objects already being deleted are not counted."""
    keep = naming.lws_name(dcd)
    out = []
    for child in children:
        meta = json_object(child.get("metadata"))
        if meta.get("deletionTimestamp"):
            continue
        kind, name = child.get("kind"), str(meta.get("name", ""))
        if kind == POD_GROUP_KIND or (kind == LWS_KIND and name != keep):
            out.append(f"{kind}/{name}")
    return sorted(out)


def settled(desired: ForeignObject, live: ForeignObject | None) -> bool:
    """Whether the live `<dcd>-0` already is the desired one (same pod template, same replicas) and
    LWS reports every group of it updated, ready and Available: then the old sets may go.

    A set the sync is about to write is never settled: its status still describes the spec before."""
    if live is None:
        return False
    if _template_hash(live) != _template_hash(desired):
        return False
    if json_object(live.get("spec")).get("replicas") != json_object(desired.get("spec")).get("replicas"):
        return False
    return lws_readiness(live).ready


def groups_serving(pods: Iterable[ForeignObject], *, size: int) -> int:
    """How many groups among `pods` (one set's) have all `size` pods Running and Ready, none of them
    being deleted."""
    groups: dict[str, list[Pod]] = {}
    for found in pods:
        pod = pod_view(found)
        index = str(((pod.get("metadata") or {}).get("labels") or {}).get(LWS_GROUP_INDEX_LABEL))
        groups.setdefault(index, []).append(pod)
    return sum(1 for members in groups.values() if len(members) == size and all(map(_serving, members)))


def held(kind: str, name: str, *, dcd: str, migrated: bool) -> bool:
    """Whether a child the sync would prune is kept for now: the old shape's sets and PodGroups stay
    until the migration has `settled`; anything else goes as usual."""
    if migrated or kind not in (LWS_KIND, POD_GROUP_KIND):
        return False
    return kind == POD_GROUP_KIND or name != naming.lws_name(dcd)


def _template_hash(obj: ForeignObject) -> str | None:
    annotations = json_object(json_object(obj.get("metadata")).get("annotations"))
    value = annotations.get(c.ANNOTATION_POD_TEMPLATE_HASH)
    return value if isinstance(value, str) else None


def _serving(pod: Pod) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = pod.get("status") or {}
    ready = any(
        cond.get("type") == "Ready" and cond.get("status") == "True"
        for cond in status.get("conditions") or ()
    )
    return status.get("phase") == "Running" and ready
