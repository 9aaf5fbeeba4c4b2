"""The migrator's progress as Prometheus series on the operator REGISTRY.

`objects_total{crd,result}` counts each object the migrator wrote, by what the API server made of it:
`migrated` (stored anew: it got a new resourceVersion), `unchanged` (already stored at the storage
version, so the server skipped the write; a resumed run sees these for what an earlier run did),
`gone` (deleted before it could be written). `pending_crds` is how many of the CRDs handed to the
migrator are not yet known to hold only the storage version; 0 once a run has finished.
"""

from __future__ import annotations

from typing import Final

from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Gauge

MIGRATED: Final = "migrated"
UNCHANGED: Final = "unchanged"
GONE: Final = "gone"
RESULTS: Final = (MIGRATED, UNCHANGED, GONE)

OBJECTS = Counter(
    "dynamo_operator_crd_migration_objects",
    "Objects rewritten by the storage-version migrator, by CRD and by what the API server did",
    ("crd", "result"),
    registry=REGISTRY,
)
FAILED_PASSES = Counter(
    "dynamo_operator_crd_migration_failures",
    "Migration passes over a CRD that failed and will be retried",
    ("crd",),
    registry=REGISTRY,
)
PENDING_CRDS = Gauge(
    "dynamo_operator_crd_migration_pending_crds",
    "CRDs whose status.storedVersions may still hold a version other than the storage version",
    registry=REGISTRY,
)


def init(crd_names: list[str]) -> None:
    """Zero every series of these CRDs, so a dashboard sees 0 rather than no data."""
    for name in crd_names:
        for result in RESULTS:
            OBJECTS.labels(name, result)
        FAILED_PASSES.labels(name)
