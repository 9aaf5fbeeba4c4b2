"""Placement fields upstream's v1alpha1 gained after v1beta1 appeared: topology packing, provider
fragments and the graph's preview block (KV-transfer routing).

They are here so a v1alpha1 client keeps them (the CRD would prune them otherwise). Topology packing
and provider fragments are implemented on the Grove pathway (internal/dynamo/grove/topology.py) and
refused on the component pathway (internal/dynamo/graph/grove_only.py); KV-transfer routing is not
implemented (internal/dynamo/common/not_implemented.py).

Every shape but the graph-wide constraint is v1beta1's, field for field, so it is that model: one
declaration per shape. The graph-wide constraint differs (v1alpha1 names the topology
`topologyProfile`, v1beta1 `clusterTopologyName`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..v1beta1.graph import DynamoGraphDeploymentExperimentalSpec, KvTransferEnforcement, KvTransferPolicy
from ..v1beta1.shared import ProviderOverride, TopologyConstraint
from ..v1beta1.types import TopologyDomain
from .base import ApiModel
from .markers import Schema


class SpecTopologyConstraint(ApiModel):
    """Graph-wide topology placement: the cluster topology to use and a default packing domain."""

    topology_profile: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Name of the cluster topology resource whose levels the domains refer to."
    )
    pack_domain: TopologyDomain | None = Field(
        None, description="Domain services without their own constraint are packed in; may be left out."
    )


__all__ = [
    "DynamoGraphDeploymentExperimentalSpec",
    "KvTransferEnforcement",
    "KvTransferPolicy",
    "ProviderOverride",
    "SpecTopologyConstraint",
    "TopologyConstraint",
    "TopologyDomain",
]
