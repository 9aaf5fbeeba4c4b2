"""Kubernetes timestamps (`metav1.Time`: RFC 3339 in UTC, second precision, `Z`), written and read.

Pure and dependency-free, so generation (internal/dynamo), the runtime and the reconcilers share one
form: a timestamp written by one of them compares equal when another writes it again, which keeps
status writes of an unchanged condition empty.
"""

from __future__ import annotations

from datetime import UTC, datetime

MAX_TIMESTAMP_CHARS = 64  # an API timestamp is 20 characters; anything far longer is not one


def rfc3339(when: datetime) -> str:
    """`when` as the API server writes a `metav1.Time` (seconds, `Z`)."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(value: object) -> datetime | None:
    """An API timestamp as an aware datetime (fractions and offsets accepted); None when absent or
    unreadable: a timestamp in an object is data, and a bad one must not fail its reader."""
    if not isinstance(value, str) or not value or len(value) > MAX_TIMESTAMP_CHARS:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def epoch_seconds(value: object) -> float | None:
    """`parse_rfc3339` as seconds since the epoch (POSIX time), for comparing with a clock's reading."""
    when = parse_rfc3339(value)
    return None if when is None else when.timestamp()
