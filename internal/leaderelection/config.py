"""Leader-election settings, validated when built: bad durations fail at start-up, not at failover."""

from __future__ import annotations

import socket
import uuid
from dataclasses import dataclass

# Retries are spread over [retry_period, retry_period * JITTER_FACTOR] so candidates do not stampede.
JITTER_FACTOR = 1.2


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """Which Lease, who we are, and the client-go timing defaults (15 s / 10 s / 2 s).

    A leader renews every `retry_period`; if it cannot renew within `renew_deadline` it stops leading.
    A standby takes over `lease_duration` after it last saw the Lease change, so
    `lease_duration > renew_deadline` leaves a margin in which the old leader has already stopped.
    """

    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    # Clear the Lease on a graceful stop so the standby takes over at its next retry, not 15 s later.
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.name or not self.namespace:
            raise ValueError("leader election needs a Lease name and namespace")
        if not self.identity:
            raise ValueError("leader election needs a non-empty identity")
        if self.retry_period <= 0:
            raise ValueError(f"retry_period must be positive, got {self.retry_period}")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                f"lease_duration ({self.lease_duration}s) must be greater than "
                f"renew_deadline ({self.renew_deadline}s)"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"renew_deadline ({self.renew_deadline}s) must be greater than "
                f"{JITTER_FACTOR} * retry_period ({self.retry_period}s)"
            )

    @property
    def request_timeout(self) -> float:
        """Bound on one Lease request: half the renew deadline (at least 1 s), as controller-runtime."""
        return max(self.renew_deadline / 2, 1.0)


def new_identity(hostname: str | None = None) -> str:
    """`<hostname>_<uuid4>`: unique even for two processes on one host (or a restarted pod)."""
    return f"{hostname or socket.gethostname()}_{uuid.uuid4()}"
