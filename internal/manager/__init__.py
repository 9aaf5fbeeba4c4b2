"""The manager: starts caches, waits for sync, elects a leader, runs controllers, serves probes/metrics."""

from dynamo_operator.internal.manager.manager import Manager, ManagerError
from dynamo_operator.internal.manager.options import ManagerOptions

__all__ = ["Manager", "ManagerError", "ManagerOptions"]
