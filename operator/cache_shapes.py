"""What the operator keeps of each child kind it caches: only what a reconciler reads.

Owned children are read for three things: their identity and ownership (metadata), our content hash
stamp (an annotation), and, for workloads, readiness (`spec.replicas`, `spec.paused`, `status`).
Their bodies — pod templates, Service ports, RBAC rules — are written from the desired objects and
never read back, so the cache drops them: at a thousand graphs a Deployment's pod template alone
was most of the operator's memory. An edit to a dropped field still reaches the owner's predicates
through `metadata.generation` (workloads) or not at all (its content is ours to write, not to read).

The wiring registers these on the cache (`Cache.set_shape`); the child syncer asks the cache for the
same shape (`Cache.shape`) for what it remembers of its own writes (`RecentWrites`), which stand in
for the cache until it catches up.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.transform import Transform, metadata_only
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.optional_api_table import CACHE_SHAPES, WORKLOAD_SHAPE

# The optional APIs' kinds take the shape their entry gives (internal/optional_api_table.py).
CHILD_SHAPES: Final[Mapping[Resource, Transform]] = MappingProxyType(
    {
        kinds.DEPLOYMENT: WORKLOAD_SHAPE,
        # ConfigMaps: the graph's own (ours to write, never read back) and the DGDR's references and
        # profiler output, which the request reconciler reads live. Keeping their data would hold
        # every ConfigMap of the cluster in memory, other tenants' included.
        kinds.CONFIG_MAP: metadata_only,
        kinds.SERVICE: metadata_only,
        kinds.SERVICE_ACCOUNT: metadata_only,
        kinds.ROLE: metadata_only,
        kinds.ROLE_BINDING: metadata_only,
        kinds.INGRESS: metadata_only,
        **CACHE_SHAPES,
    }
)
