"""The seam between the runtime and Dynamo's reconcilers.

`register_controllers` hands the manager and the start-up context to `registration.register_all`,
which builds each reconciler from the manager's client/cache and the context and registers it.
"""

from __future__ import annotations

from dynamo_operator.context import OperatorContext
from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.optional_api_watch import OptionalApiWatch
from dynamo_operator.registration import register_all


def register_controllers(mgr: Manager, ctx: OperatorContext) -> OptionalApiWatch:
    """Register every controller of the operator on `mgr`; returns the watch that keeps the optional
    APIs current (`.current`), seeded with `ctx.capabilities`."""
    return register_all(mgr, ctx)
