"""controller-runtime's leader-election series."""

from __future__ import annotations

from dynamo_operator.internal.observability.metrics import REGISTRY
from prometheus_client import Counter, Gauge

MASTER_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, "
    "0 indicates backup, 1 indicates master.",
    ("name",),
    registry=REGISTRY,
)
SLOWPATH = Counter(
    "leader_election_slowpath",
    "Total number of slow path exercised in renewing leader leases.",
    ("name",),
    registry=REGISTRY,
)
