"""Writing an owner's children and its status, quietly: only what differs, never half a set.

Generic runtime, like internal.controller: nothing here knows a Dynamo kind. What is specific to an
operator comes in as parameters: the field manager its writes carry, the `HashStamp` recording what
each child was written from, and the per-kind shapes of the cache the write memory stands in for.

- `syncer`: `ChildSyncer` brings an owner's children to the desired set and prunes the rest;
- `waves`: the order in which one sync's writes go out;
- `mutation_cache`: `RecentWrites`, what this process wrote that the cache may not show yet;
- `status`: `StatusWriter`, the one status subresource writer of every kind;
- `failures`: what a failed sync raises and how the owner's reconcile reports it;
- `refusal`: `RefusalReporter`, the failure status and Warning Event of a refused or failed owner;
- `terminating`: `TerminatingNamespaces`, namespaces a refused create showed are being deleted.
"""

from dynamo_operator.internal.apply.failures import (
    CONFLICT_RECHECK_SECONDS,
    SYNC_ERRORS,
    ChildrenOwnedByOthers,
    ChildWriteError,
    DuplicateChildren,
    conflict_message,
    report_sync_failure,
)
from dynamo_operator.internal.apply.interface import (
    ChildClient,
    ChildReader,
    HashStamp,
    StatusClient,
)
from dynamo_operator.internal.apply.mutation_cache import RecentWrites
from dynamo_operator.internal.apply.refusal import FailedStatus, RefusalReporter
from dynamo_operator.internal.apply.status import StatusWriter
from dynamo_operator.internal.apply.syncer import ChildSyncer, Desired, SyncReport, prepare
from dynamo_operator.internal.apply.terminating import TerminatingNamespaces
from dynamo_operator.internal.events.interface import Recorder

__all__ = [
    "CONFLICT_RECHECK_SECONDS",
    "SYNC_ERRORS",
    "ChildClient",
    "ChildReader",
    "ChildSyncer",
    "ChildWriteError",
    "ChildrenOwnedByOthers",
    "Desired",
    "DuplicateChildren",
    "FailedStatus",
    "HashStamp",
    "RecentWrites",
    "Recorder",
    "RefusalReporter",
    "StatusClient",
    "StatusWriter",
    "SyncReport",
    "TerminatingNamespaces",
    "conflict_message",
    "prepare",
    "report_sync_failure",
]
