"""The seam between the runtime and Dynamo's reconcilers.

`register_controllers` hands the manager and the settings (`context.settings_from`: flags and the
optional APIs found at start-up) to `registration.register_all`, which builds every controller.
"""

from __future__ import annotations

from dynamo_operator.internal.manager.manager import Manager
from dynamo_operator.internal.settings import Settings
from dynamo_operator.optional_api_watch import OptionalApiWatch
from dynamo_operator.registration import register_all


def register_controllers(mgr: Manager, settings: Settings) -> OptionalApiWatch:
    """Register every controller of the operator on `mgr`; returns the watch that keeps the optional
    APIs current (`.current`), seeded with `settings.capabilities`."""
    return register_all(mgr, settings)
