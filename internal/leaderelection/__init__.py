"""Leader election on a coordination.k8s.io/v1 Lease (client-go's algorithm and defaults)."""

from dynamo_operator.internal.leaderelection.config import LeaderElectionConfig, new_identity
from dynamo_operator.internal.leaderelection.elector import Ending, LeaderElector
from dynamo_operator.internal.leaderelection.lock import KubeLeaseLock, LeaseLock
from dynamo_operator.internal.leaderelection.record import LeaderElectionRecord

__all__ = [
    "Ending",
    "KubeLeaseLock",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "new_identity",
]
