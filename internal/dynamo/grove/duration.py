"""Durations as Grove's API writes them (Kubernetes' metav1.Duration: Go's duration text). Pure.

`--grove-termination-delay` takes what upstream's chart takes (`4h`, `15m`, `1h30m`) and the
PodCliqueSet gets it in the form Go prints it back (`4h0m0s`, `15m0s`, `1h30m0s`), the form the
API server returns and upstream writes, so an unchanged set compares equal. Whole seconds only:
a termination delay is minutes to hours.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(?:(\d{1,6})h)?(?:(\d{1,8})m)?(?:(\d{1,10})s)?")
MAX_SECONDS = 365 * 24 * 3600  # a year: anything longer is a typo


def parse_seconds(text: str) -> int:
    """`text` (`<n>h<n>m<n>s`, each part optional, at least one; or `0`) in seconds. Raises
    ValueError for anything else, or for more than a year."""
    value = text.strip()
    match = _DURATION.fullmatch(value)
    if value != "0" and (not value or match is None or not any(match.groups())):
        raise ValueError(f"{text!r} is not a duration like 4h, 15m or 1h30m")
    if value == "0" or match is None:
        return 0
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total > MAX_SECONDS:
        raise ValueError(f"{text!r} is longer than a year")
    return total


def go_duration(seconds: int) -> str:
    """Whole seconds as Go prints a duration: `4h0m0s`, `15m0s`, `30s`, `0s`."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def canonical(text: str) -> str:
    """`text` in Go's form (`parse_seconds` then `go_duration`); raises ValueError like it."""
    return go_duration(parse_seconds(text))
