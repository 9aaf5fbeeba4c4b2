"""Resource descriptors of every kind the controllers read or write, in one import.

Dynamo's five kinds are built from the API package's constants; built-in kinds are re-exported from
the client so a reconciler names all its kinds as `kinds.X`.
"""

from __future__ import annotations

from typing import Final

from dynamo_operator.api.v1alpha1 import groupversion as gv
from dynamo_operator.api.v1beta1 import groupversion as beta
from dynamo_operator.internal.client.resource import (
    CONFIG_MAP,
    DEPLOYMENT,
    INGRESS,
    LEADER_WORKER_SET,
    PERSISTENT_VOLUME_CLAIM,
    POD,
    ROLE,
    ROLE_BINDING,
    SECRET,
    SERVICE,
    SERVICE_ACCOUNT,
    VIRTUAL_SERVICE,
    Resource,
)
from dynamo_operator.internal.optional_api_table import (
    INFERENCE_POOL,
    OWNED_KINDS,
    POD_CLIQUE,
    POD_CLIQUE_SCALING_GROUP,
    POD_CLIQUE_SET,
    POD_GROUP,
    RESOURCE_CLAIM_TEMPLATE,
)

# Read and written in their storage version, v1beta1: the graph, the component, the scaling adapter
# and the request need no conversion (internal/stored_version.py speaks v1alpha1 on the wire only to
# a CRD an older release installed).
DGD: Final = Resource(
    gv.GROUP, beta.VERSION, gv.DYNAMO_GRAPH_DEPLOYMENT_PLURAL, gv.DYNAMO_GRAPH_DEPLOYMENT_KIND
)
DCD: Final = Resource(
    gv.GROUP, beta.VERSION, gv.DYNAMO_COMPONENT_DEPLOYMENT_PLURAL, gv.DYNAMO_COMPONENT_DEPLOYMENT_KIND
)
DGDSA: Final = Resource(
    gv.GROUP,
    beta.VERSION,
    gv.DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL,
    gv.DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND,
)
DGDR: Final = Resource(
    gv.GROUP, beta.VERSION, gv.DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL, gv.DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND
)
DYNAMO_MODEL: Final = Resource(gv.GROUP, gv.VERSION, gv.DYNAMO_MODEL_PLURAL, gv.DYNAMO_MODEL_KIND)
PVC: Final = PERSISTENT_VOLUME_CLAIM
LWS: Final = LEADER_WORKER_SET
# The optional APIs' kinds (LWS, PodGroup, VirtualService, InferencePool, Grove's, DRA's) are declared
# with their API in internal/optional_api_table.py and re-exported here.

# Kinds a generated object may have, by (apiVersion, kind): maps generation output to where it lives.
_BY_TYPE: Final = {
    (r.api_version, r.kind): r
    for r in (
        DGD,
        DCD,
        DGDSA,
        DGDR,
        DYNAMO_MODEL,
        DEPLOYMENT,
        SERVICE,
        INGRESS,
        PERSISTENT_VOLUME_CLAIM,
        CONFIG_MAP,
        SECRET,
        POD,
        SERVICE_ACCOUNT,
        ROLE,
        ROLE_BINDING,
        *OWNED_KINDS,  # every optional API's kinds that generation emits
    )
}
# A DCD rendered in v1alpha1 (`dynamo-operator render`, upstream's older goldens) lives where one of
# v1beta1 does, and so do a graph and a request written in v1alpha1 (a manifest, a profile's output).
_BY_TYPE[(gv.API_VERSION, DCD.kind)] = DCD
_BY_TYPE[(gv.API_VERSION, DGD.kind)] = DGD
_BY_TYPE[(gv.API_VERSION, DGDR.kind)] = DGDR


def resource_of(obj: dict[str, object]) -> Resource:
    """The descriptor of a generated object's kind; KeyError names kinds nobody registered."""
    return _BY_TYPE[(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))]


__all__ = [
    "CONFIG_MAP",
    "DCD",
    "DEPLOYMENT",
    "DGD",
    "DGDR",
    "DGDSA",
    "DYNAMO_MODEL",
    "INFERENCE_POOL",
    "INGRESS",
    "LWS",
    "POD",
    "POD_CLIQUE",
    "POD_CLIQUE_SCALING_GROUP",
    "POD_CLIQUE_SET",
    "POD_GROUP",
    "PVC",
    "RESOURCE_CLAIM_TEMPLATE",
    "ROLE",
    "ROLE_BINDING",
    "SECRET",
    "SERVICE",
    "SERVICE_ACCOUNT",
    "VIRTUAL_SERVICE",
    "Resource",
    "resource_of",
]
