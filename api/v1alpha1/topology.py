"""Placement fields upstream's v1alpha1 gained after v1beta1 appeared: topology packing, provider
fragments and the graph's preview block (KV-transfer routing).

They are here so a v1alpha1 client keeps them (the CRD would prune them otherwise); the operator
implements none of them (internal/dynamo/common/not_implemented.py refuses a graph that uses one).
"""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import Field

from .base import ApiModel, RawObject
from .markers import Cel, Schema

# One topology level ("zone", "rack", "host"...): a DNS-label-like name.
TopologyDomain = Annotated[str, Schema({"pattern": "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"})]

# A Kubernetes label key: an optional DNS-subdomain prefix and '/', then a name of at most 63.
_LABEL_KEY_PATTERN = (
    r"^(([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?"
    r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$"
)


class SpecTopologyConstraint(ApiModel):
    """Graph-wide topology placement: the cluster topology to use and a default packing domain."""

    topology_profile: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Name of the cluster topology resource whose levels the domains refer to."
    )
    pack_domain: TopologyDomain | None = Field(
        None, description="Domain services without their own constraint are packed in; may be left out."
    )


class TopologyConstraint(ApiModel):
    """Topology placement of one service (the topology itself is the graph's)."""

    pack_domain: TopologyDomain = Field(
        description="Domain the service's pods are packed in; no wider than the graph's packDomain."
    )


class ProviderOverride(ApiModel):
    """A sparse fragment in a workload provider's own schema (Grove), laid over what it is generated
    from. It cannot choose or change the provider."""

    api_version: Annotated[str, Schema({"minLength": 1})] = Field(
        description="Group/version of the provider's schema (grove.io/v1alpha1 for Grove)."
    )
    target: str | None = Field(
        None, description="Provider kind or embedded type the fragment is for; filled in when unambiguous."
    )
    value: RawObject = Field(description="The fragment, spelled in the provider's own field names.")


class KvTransferEnforcement(enum.StrEnum):
    """Whether decode workers must, or should preferably, share the prefill worker's domain."""

    REQUIRED = "required"
    PREFERRED = "preferred"


class KvTransferPolicy(ApiModel):
    """Routes KV-cache transfers between prefill and decode workers by topology."""

    __cel__ = (
        Cel(
            rule="(has(self.labelKey) && !has(self.clusterTopologyName))"
            " || (!has(self.labelKey) && has(self.clusterTopologyName))",
            message="exactly one of labelKey or clusterTopologyName is required",
        ),
        Cel(
            rule="!has(self.enforcement) || self.enforcement != 'preferred' || has(self.preferredWeight)",
            message="preferredWeight is required when enforcement is preferred",
        ),
        Cel(
            rule="!has(self.preferredWeight) || (has(self.enforcement) && self.enforcement == 'preferred')",
            message="preferredWeight may only be set when enforcement is preferred",
        ),
    )

    cluster_topology_name: Annotated[str, Schema({"minLength": 1})] | None = Field(
        None, description="Cluster topology resource whose levels give each worker its domain."
    )
    label_key: (
        Annotated[
            str,
            Schema({"minLength": 1, "maxLength": 317, "pattern": _LABEL_KEY_PATTERN}),
            Cel(
                rule="!self.contains('/') || self.split('/')[0].size() <= 253",
                message="labelKey prefix must be 253 characters or less",
            ),
        ]
        | None
    ) = Field(
        None, description="Node label whose value is a worker's domain, e.g. topology.kubernetes.io/zone."
    )
    domain: TopologyDomain = Field(description='The topology level routing matches on, e.g. "zone".')
    enforcement: KvTransferEnforcement = Field(
        KvTransferEnforcement.REQUIRED,
        description="required: only decode workers of the prefill worker's domain; "
        "preferred: any decode worker, those of that domain favoured.",
    )
    preferred_weight: Annotated[float, Schema({"minimum": 0, "maximum": 1})] | None = Field(
        None, description="Strength of the preference, 0 (none) to 1 (strongest); only with preferred."
    )


class DynamoGraphDeploymentExperimentalSpec(ApiModel):
    """Graph-level preview features; their shape may change between releases."""

    kv_transfer_policy: KvTransferPolicy | None = Field(
        None, description="Topology-aware routing of KV-cache transfers."
    )
