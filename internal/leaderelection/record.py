"""The leader-election record and its mapping onto a coordination.k8s.io/v1 Lease spec."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from dynamo_operator.internal.timestamps import parse_rfc3339

# Lease times are MicroTime: RFC 3339 with exactly six fractional digits.
_MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"


def format_micro_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime(_MICRO_TIME)


def parse_micro_time(text: str | None) -> datetime | None:
    """A Lease time (None when unset); ValueError when it is set but is no timestamp."""
    if not text:
        return None
    when = parse_rfc3339(text)
    if when is None:
        raise ValueError(f"not an RFC 3339 time: {text!r}")
    return when


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """Who holds the lock, for how long, and how often it changed hands."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: datetime | None
    renew_time: datetime | None
    lease_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaderElectionRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=parse_micro_time(spec.get("acquireTime")),
            renew_time=parse_micro_time(spec.get("renewTime")),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = format_micro_time(self.renew_time)
        return spec

    def with_(self, **changes: Any) -> LeaderElectionRecord:
        return replace(self, **changes)
