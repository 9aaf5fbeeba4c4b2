"""A workload's replica counts in the two shapes the API holds them. Pure.

A DCD's `status.component` and a graph's `status.components[x]` are stored in v1beta1, which lists the
workload's names (`componentNames`); the readiness verdicts measure counts in the v1alpha1 form, which
names the workload once more (`componentName`, the last of the names). The two functions here move
counts between them as the conversion webhook does (api/conversion/component.py, graph.py), so a graph
reports its components the same whichever version its components are stored in.
"""

from __future__ import annotations

from typing import cast

from dynamo_operator.internal.dynamo.common.inputs import ComponentReplicas, ServiceReplicas


def as_component_replicas(service: ServiceReplicas) -> ComponentReplicas:
    """Counts measured of a workload (named by `componentName`) as a DCD's `status.component`:
    `componentName` goes, and names the workload in `componentNames` when that list is empty."""
    out = {k: v for k, v in service.items() if k != "componentName"}
    name = service.get("componentName")
    if name and not service.get("componentNames"):
        out["componentNames"] = [name]
    return cast(ComponentReplicas, out)


def as_service_replicas(component: ComponentReplicas) -> ServiceReplicas:
    """A DCD's `status.component` as a graph's `status.services[x]`: `componentName` repeats the last
    of `componentNames` (none without names, as the conversion reads it)."""
    out: dict[str, object] = dict(component)
    if names := component.get("componentNames"):
        out["componentName"] = names[-1]
    return cast(ServiceReplicas, out)
