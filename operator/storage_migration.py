"""Dynamo's wiring of the storage-version migrator (internal.crdmigrator): which CRDs it migrates and
when it runs.

The four kinds served at two versions (DynamoGraphDeployment, DynamoComponentDeployment, the scaling
adapter and DynamoGraphDeploymentRequest) are migrated once per leadership, in the background after
the caches synced; a pass that fails is retried with backoff and never stops the operator. While
`storedVersions` already holds only the storage version (every start until the storage version
changes) it costs one GET per CRD and no write.

A namespace-restricted operator leaves migration alone: a CRD's storedVersions speaks for every
namespace, and such an operator may neither list all of them nor know it rewrote them all.
"""

from __future__ import annotations

from typing import Final

import structlog
from dynamo_operator.internal import kinds
from dynamo_operator.internal.crdmigrator.migrator import CrdMigrator
from dynamo_operator.internal.manager.manager import Manager

log = structlog.get_logger(__name__)

NAME: Final = "crd-storage-migration"
MIGRATED_CRDS: Final[tuple[str, ...]] = tuple(
    f"{r.plural}.{r.group}" for r in (kinds.DGD, kinds.DCD, kinds.DGDSA, kinds.DGDR)
)


def register(mgr: Manager) -> CrdMigrator | None:
    """Run the migrator on `mgr` while leading; None (and nothing added) in restricted mode."""
    if mgr.options.namespace:
        log.info(
            "Storage migration is off in a namespace-restricted operator", namespace=mgr.options.namespace
        )
        return None
    migrator = CrdMigrator(mgr.client, MIGRATED_CRDS)

    async def run() -> None:
        await migrator.run()

    mgr.add_runnable(run, needs_leader=True, name=NAME)
    return migrator
