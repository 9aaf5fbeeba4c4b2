"""The seam between the runtime and Dynamo's reconcilers.

The controllers helper fills `register_controllers`: for each reconciler, build it from the manager's
client/cache and the context, and call its `setup(mgr.builder(<name>))`. Until then it registers
nothing and the operator runs with no controllers (caches, probes, metrics and election still work).
"""

from __future__ import annotations

from dynamo_operator.context import OperatorContext
from dynamo_operator.internal.manager.manager import Manager


def register_controllers(mgr: Manager, ctx: OperatorContext) -> None:
    """Register every controller of the operator on `mgr` (filled by the controllers helper)."""
    del mgr, ctx
