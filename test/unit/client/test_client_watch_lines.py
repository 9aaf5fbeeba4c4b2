"""The watch stream decoder: JSON lines split across arbitrary chunks, typed on the way out."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
import pytest
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.client import _events
from dynamo_operator.internal.client.resource import CONFIG_MAP


class FakeContent:
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def iter_any(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class FakeResponse:
    def __init__(self, chunks: list[bytes]) -> None:
        self.content = FakeContent(chunks)


def line(type_: str, name: str, rv: str) -> bytes:
    return (
        orjson.dumps({"type": type_, "object": {"metadata": {"name": name, "resourceVersion": rv}}}) + b"\n"
    )


async def decode(chunks: list[bytes]) -> list[tuple[str, str]]:
    out = []
    async for event in _events(FakeResponse(chunks), CONFIG_MAP):  # type: ignore[arg-type]
        out.append((event.type, event.object["metadata"].get("name", "")))
    return out


@pytest.mark.parametrize(
    "split",
    [
        pytest.param(lambda b: [b], id="one-chunk"),
        pytest.param(lambda b: [bytes([c]) for c in b], id="byte-by-byte"),
        pytest.param(lambda b: [b[:7], b[7:50], b[50:]], id="uneven"),
    ],
)
async def test_lines_are_reassembled_across_chunks(split: object) -> None:
    """However the body is chunked, each line becomes one event, in order."""
    body = line("ADDED", "a", "1") + line("MODIFIED", "a", "2") + line("DELETED", "b", "3")
    assert await decode(split(body)) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "b")]  # type: ignore[operator]


async def test_objects_get_api_version_and_kind() -> None:
    [event] = [e async for e in _events(FakeResponse([line("ADDED", "a", "1")]), CONFIG_MAP)]  # type: ignore[arg-type]
    assert (event.object["apiVersion"], event.object["kind"]) == ("v1", "ConfigMap")


async def test_a_last_line_without_newline_is_still_decoded() -> None:
    assert await decode([line("ADDED", "a", "1").rstrip()]) == [("ADDED", "a")]


async def test_very_long_lines_are_fine() -> None:
    """No line-length cap (aiohttp's readline would refuse a multi-MiB object)."""
    big = orjson.dumps(
        {"type": "ADDED", "object": {"metadata": {"name": "big"}, "data": {"x": "y" * 5_000_000}}}
    )
    assert await decode([big[:1000], big[1000:] + b"\n"]) == [("ADDED", "big")]


async def test_unknown_event_type_is_a_transport_error() -> None:
    with pytest.raises(errors.TransportError):
        await decode([b'{"type":"WAT","object":{}}\n'])


class StalledContent:
    """A stream that delivers one event and then hits the client read timeout (a dead peer)."""

    async def iter_any(self) -> AsyncIterator[bytes]:
        yield line("ADDED", "a", "1")
        raise TimeoutError


async def test_read_timeout_mid_stream_is_a_transport_error() -> None:
    """A half-open connection is noticed by the read timeout and surfaces as a typed error, after
    the events that did arrive."""
    response = FakeResponse([])
    response.content = StalledContent()  # type: ignore[assignment]
    seen = []
    with pytest.raises(errors.TransportError) as raised:
        async for event in _events(response, CONFIG_MAP):  # type: ignore[arg-type]
            seen.append(event.type)
    assert seen == ["ADDED"]
    assert raised.value.sent is True
