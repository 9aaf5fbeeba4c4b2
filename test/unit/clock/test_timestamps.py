"""Kubernetes timestamps, written and read in one place (internal/timestamps.py)."""

from __future__ import annotations

import datetime

import pytest
from dynamo_operator.internal.timestamps import MAX_TIMESTAMP_CHARS, epoch_seconds, parse_rfc3339, rfc3339

T0 = datetime.datetime(2026, 11, 22, 8, 0, 5, tzinfo=datetime.UTC)


def test_a_time_is_written_as_the_api_server_writes_it() -> None:
    when = T0.replace(microsecond=999_999).astimezone(datetime.timezone(datetime.timedelta(hours=2)))
    assert rfc3339(when) == "2026-11-22T08:00:05Z"  # UTC, whole seconds, Z


def test_what_is_written_reads_back_as_the_same_time() -> None:
    assert parse_rfc3339(rfc3339(T0)) == T0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-22T08:00:05.250000Z", T0.replace(microsecond=250_000), id="fraction"),
        pytest.param("2026-11-22T10:00:05+02:00", T0, id="offset"),
        pytest.param("2026-11-22T08:00:05", T0, id="no-zone-is-utc"),
    ],
)
def test_other_rfc3339_forms_are_read(text: str, expected: datetime.datetime) -> None:
    assert parse_rfc3339(text) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(None, id="absent"),
        pytest.param("", id="empty"),
        pytest.param("yesterday", id="not-a-time"),
        pytest.param(1_800_000_000, id="a-number"),
        pytest.param("2026-11-22T08:00:05Z" + " " * MAX_TIMESTAMP_CHARS, id="too-long"),
    ],
)
def test_an_unreadable_timestamp_is_none_not_an_error(value: object) -> None:
    assert parse_rfc3339(value) is None
    assert epoch_seconds(value) is None


def test_epoch_seconds_is_posix_time() -> None:
    assert epoch_seconds("1970-01-01T00:00:10Z") == 10.0
