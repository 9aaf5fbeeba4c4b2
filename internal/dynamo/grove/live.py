"""What the Grove pathway reads of the objects Grove runs (grove.io/v1alpha1), typed. Pure.

Grove's kinds are another project's, so the API has no view of them: these are the fields the
readers here look at, as Grove (v0.1.0-alpha.12) writes them. The reconciler hands the objects as
read from the cache (`ForeignObject`); a reader takes its view once, as generation does its own
kinds' (common/inputs.py), and still treats a value of another type as absent.
"""

from __future__ import annotations

from typing import TypedDict, cast

from dynamo_operator.internal.dynamo.common.inputs import ForeignObject, ObjectMeta
from dynamo_operator.internal.dynamo.status.conditions import StatusCondition


class GroveSpec(TypedDict, total=False):
    replicas: int
    cliqueNames: list[str]  # a scaling group's member cliques


class UpdateProgress(TypedDict, total=False):
    updateEndedAt: str


class GroveStatus(TypedDict, total=False):
    observedGeneration: int
    replicas: int
    updatedReplicas: int
    readyReplicas: int  # a PodClique's
    availableReplicas: int  # a scaling group's
    scheduledReplicas: int
    scheduleGatedReplicas: int  # a PodClique's
    conditions: list[StatusCondition]
    updateProgress: UpdateProgress  # a scaling group's


class GroveObject(TypedDict, total=False):
    """A PodClique or a PodCliqueScalingGroup: the fields readiness reads."""

    metadata: ObjectMeta
    spec: GroveSpec
    status: GroveStatus


class CliqueTemplate(TypedDict, total=False):
    name: str
    labels: dict[str, str]
    annotations: dict[str, str]


class PodCliqueSetTemplate(TypedDict, total=False):
    cliques: list[CliqueTemplate]


class PodCliqueSetSpec(TypedDict, total=False):
    template: PodCliqueSetTemplate


class PodCliqueSetStatus(TypedDict, total=False):
    observedGeneration: int
    conditions: list[StatusCondition]


class PodCliqueSet(TypedDict, total=False):
    """A graph's PodCliqueSet: its cliques' labels and annotations, and what Grove reports on it."""

    metadata: ObjectMeta
    spec: PodCliqueSetSpec
    status: PodCliqueSetStatus


def grove_object_view(obj: ForeignObject) -> GroveObject:
    """A PodClique or scaling group as read from the cache, as its view (no copy, no check)."""
    return cast(GroveObject, obj)


def pod_clique_set_view(obj: ForeignObject) -> PodCliqueSet:
    """A PodCliqueSet as read from the cache, as its view (no copy, no check)."""
    return cast(PodCliqueSet, obj)
