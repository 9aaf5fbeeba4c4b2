"""The Recreate strategy of the managed worker rollout: the old worker generation of a service is stopped
before its new one starts, for clusters without room (GPUs) for both at once. Pure.

A worker service chooses it with `nvidia.com/deployment-strategy: Recreate` in its annotations, or in
the graph's `spec.annotations` when the service sets none (the DCD gets the same merge, and its
Deployment the same strategy: component/workload.py). Only that exact spelling counts; anything else,
`recreate` included, is the default RollingUpdate, as upstream reads the annotation.

Per Recreate service, each round of the rollout (rollingupdate.py):
- every old DCD of the service is asked for 0 replicas at once;
- its new DCD is held at 0 replicas until the old generation has drained, then given the service's
  replicas;
- the old DCDs are deleted, and so the rollout completes and the graph records the new worker hash,
  only once the old generation has drained and the new DCD serves (the completion barrier). A graph
  whose last rollout completed while old DCDs still run starts a new one and waits again, so a
  recorded hash never lets new pods start beside old ones.

Drained means: every old DCD of the service has been seen at zero by its controller (`spec.replicas`
0, `status.observedGeneration` caught up, `status.component.replicas` 0), and no pod of those DCDs is
left unfinished. The second half is needed because a Deployment's status does not count pods being
deleted: such a pod still holds its GPU until it is gone, so only a pod that is gone or finished
(`Succeeded`/`Failed`) does not block. Pods are looked at only once the DCDs are at zero (the reader
of this module lists them only then: `needs_pods`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from dynamo_operator.internal import consts as c
from dynamo_operator.internal.dynamo.common.inputs import (
    ComponentDeployment,
    ForeignObject,
    ServiceSpec,
    component_view,
)
from dynamo_operator.internal.dynamo.status.pod_diagnosis import Pod, pod_view

RECREATE: Final = "Recreate"
ROLLING_UPDATE: Final = "RollingUpdate"
FINISHED_POD_PHASES: Final = frozenset({"Succeeded", "Failed"})
POLL_SECONDS: Final = 2.0
"""How soon a round waiting for old pods to finish looks again: the graph does not watch pods, and a
Deployment already at zero reports nothing more as its pods go."""


def service_annotations(service: ServiceSpec, graph_annotations: Mapping[str, str]) -> dict[str, str]:
    """A service's annotations over the graph's `spec.annotations` (the service's win)."""
    out = {str(k): str(v) for k, v in graph_annotations.items()}
    out.update({str(k): str(v) for k, v in (service.get("annotations") or {}).items()})
    return out


def strategy_of(annotations: Mapping[str, str]) -> str:
    """`Recreate` for the exact annotation value, else `RollingUpdate`."""
    return RECREATE if annotations.get(c.ANNOTATION_DEPLOYMENT_STRATEGY) == RECREATE else ROLLING_UPDATE


def recreate_services(
    workers: Mapping[str, ServiceSpec], graph_annotations: Mapping[str, str]
) -> frozenset[str]:
    """The worker services rolled the Recreate way."""
    return frozenset(
        svc
        for svc, spec in workers.items()
        if strategy_of(service_annotations(spec, graph_annotations)) == RECREATE
    )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def at_zero(dcd: ComponentDeployment) -> bool:
    """The DCD asks for 0 replicas, its controller has seen that, and it reports no replica. A DCD
    that says nothing of its replicas (no `status.component`, no `spec.replicas`: the default is 1) is
    not at zero."""
    meta, spec, status = dcd.get("metadata") or {}, dcd.get("spec") or {}, dcd.get("status") or {}
    observed = _int(status.get("observedGeneration"))
    counts = status.get("component")
    return (
        _int(spec.get("replicas")) == 0
        and observed is not None
        and observed >= (_int(meta.get("generation")) or 0)
        and isinstance(counts, Mapping)
        and _int(counts.get("replicas")) == 0
    )


def pod_finished(pod: Pod) -> bool:
    """A pod that no longer runs anything: Succeeded or Failed. A deletion timestamp alone is not it."""
    return (pod.get("status") or {}).get("phase") in FINISHED_POD_PHASES


@dataclass(frozen=True, slots=True)
class Drain:
    """How far the old generation of one Recreate service has stopped."""

    scaling: tuple[str, ...] = ()  # old DCDs not yet seen at zero
    replicas_left: int = 0  # replicas those DCDs still report
    pods_left: int | None = 0  # unfinished pods of the old DCDs; None: not looked at (yet)

    @property
    def drained(self) -> bool:
        return not self.scaling and self.pods_left == 0

    @property
    def waits_on_pods(self) -> bool:
        """The DCDs are at zero and pods are still going: nothing but time brings the next change."""
        return not self.scaling and self.pods_left != 0

    def describe(self, service: str) -> str:
        if self.scaling:
            return f"old workers of {service} scaling to zero ({self.replicas_left} left)"
        if self.pods_left is None:
            return f"old workers of {service} at zero, their pods not yet checked"
        return f"waiting for {self.pods_left} old {service} pod(s) to terminate"


DRAINED: Final = Drain()
NOT_LOOKED: Final = Drain(pods_left=None)
"""A Recreate service with old DCDs whose drain the caller did not report: never taken as drained."""


def needs_pods(old_dcds: Sequence[ForeignObject]) -> bool:
    """Whether the old DCDs' pods must be looked at: only once every one is at zero."""
    return bool(old_dcds) and all(at_zero(component_view(d)) for d in old_dcds)


def drain_of(old_dcds: Sequence[ForeignObject], pods: Sequence[ForeignObject] | None) -> Drain:
    """The drain of one service's old generation, from its old DCDs and, once they are all at zero,
    the pods listed for them (`pods`; None: not listed). A pod counts when its selector label names
    one of `old_dcds` and it has not finished."""
    dcds = [component_view(d) for d in old_dcds]
    scaling = tuple(sorted(str(d["metadata"]["name"]) for d in dcds if not at_zero(d)))
    if scaling:
        left = sum(_replicas_reported(d) for d in dcds if str(d["metadata"]["name"]) in scaling)
        return Drain(scaling=scaling, replicas_left=left, pods_left=None)
    if not dcds:
        return DRAINED
    if pods is None:
        return NOT_LOOKED
    names = {str(d["metadata"]["name"]) for d in dcds}
    left = sum(
        1
        for p in map(pod_view, pods)
        if ((p.get("metadata") or {}).get("labels") or {}).get(c.LABEL_SELECTOR) in names
        and not pod_finished(p)
    )
    return Drain(pods_left=left)


def _replicas_reported(dcd: ComponentDeployment) -> int:
    counts = (dcd.get("status") or {}).get("component")
    return (_int(counts.get("replicas")) if counts else None) or 0


def waiting_note(drains: Mapping[str, Drain], new_hash: str) -> str | None:
    """The sentence the graph's Ready condition carries while Recreate services wait for their old
    workers (None: none waits)."""
    waiting = [drains[svc].describe(svc) for svc in sorted(drains) if not drains[svc].drained]
    if not waiting:
        return None
    return f"Recreate: {'; '.join(waiting)}; workers {new_hash} start once the old ones are gone"
