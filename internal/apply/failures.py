"""What a failed child sync raises, and how the owner's reconcile turns each into its outcome."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import structlog
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource
from dynamo_operator.internal.controller.owners import OwnerGone
from dynamo_operator.internal.controller.result import Result, TerminalError

log = structlog.get_logger(__name__)


class ChildWriteError(Exception):
    """Writing one child failed; `cause` is the client error (typed, see internal.client.errors)."""

    def __init__(self, resource: Resource, name: str, verb: str, cause: Exception) -> None:
        super().__init__(f"{verb} {resource.kind} {name}: {cause}")
        self.resource, self.name, self.verb, self.cause = resource, name, verb, cause

    @property
    def terminal(self) -> bool:
        """True when retrying the same write cannot succeed: the server refused its content, or an
        admission webhook or policy did (e.g. Grove's, on a PodCliqueSet it will not run)."""
        refused = isinstance(self.cause, errors.Invalid | errors.BadRequest)
        return refused or errors.admission_denied(self.cause)


class ChildrenOwnedByOthers(Exception):
    """Desired children already exist under another controller; nothing was written."""

    def __init__(self, conflicts: Sequence[str]) -> None:
        super().__init__("; ".join(conflicts))
        self.conflicts = list(conflicts)


class DuplicateChildren(Exception):
    """The desired set names one object more than once (a generation bug); nothing was written."""

    def __init__(self, duplicates: Sequence[str]) -> None:
        super().__init__(f"the desired children name {', '.join(duplicates)} more than once")
        self.duplicates = list(duplicates)


SYNC_ERRORS = (ChildWriteError, ChildrenOwnedByOthers, DuplicateChildren, OwnerGone)
"""What `ChildSyncer.sync` raises; hand each to `report_sync_failure`."""

CONFLICT_RECHECK_SECONDS = 60.0
"""An owner whose children another owner controls is looked at again this often: that owner's
deletion brings no event to us (its children's events go to it), and one look a minute is cheap."""

REASON_APPLY_REJECTED = "ApplyRejected"
REASON_NAME_CONFLICT = "NameConflict"
REASON_DUPLICATE_CHILDREN = "DuplicateChildren"


def conflict_message(err: ChildrenOwnedByOthers) -> str:
    """What a user reads when generated names are taken: who holds them and what to do."""
    return (
        f"{err}; nothing was applied: rename the graph or the service, or delete the other owner"
        f" (checked again every {CONFLICT_RECHECK_SECONDS:.0f} s)"
    )


async def report_sync_failure(err: Exception, fail: Callable[[str, str], Awaitable[None]]) -> Result:
    """Turn a failed `ChildSyncer.sync` into what the owner's reconcile returns, after `fail(reason,
    message)` recorded it (a condition and one Warning Event). A transient write error is raised
    again for the queue's backoff; a conflict is looked at again later (no event tells us when the
    other owner lets go); everything else waits for a change of the owner."""
    if isinstance(err, OwnerGone):
        log.info("Owner gone behind the cache; created nothing", reason=str(err))
        return Result()  # its delete (or replacement) event is on the way
    if isinstance(err, ChildWriteError) and errors.namespace_going(err.cause):
        # The namespace is going (or gone) and takes the owner with it: no retry can create the
        # child, and neither a condition nor a Warning Event would tell anyone anything (the Event
        # itself would be refused). Retrying here made thousands of errors while a namespace of a
        # thousand graphs was deleted (issue #13).
        log.info("Namespace is being deleted; creating nothing more in it", error=str(err))
        return Result()
    if isinstance(err, ChildWriteError) and not err.terminal:
        raise err
    if isinstance(err, ChildrenOwnedByOthers):
        await fail(REASON_NAME_CONFLICT, conflict_message(err))
        return Result(requeue_after=CONFLICT_RECHECK_SECONDS)
    if isinstance(err, DuplicateChildren):
        log.error("Generated children collide: a bug", error=str(err))
        await fail(REASON_DUPLICATE_CHILDREN, f"{err}; nothing was applied")
    else:
        await fail(REASON_APPLY_REJECTED, str(err))
    raise TerminalError(str(err)) from err
