"""operator/eventloop.py and the run command's use of it: the operator runs on the loop
`--event-loop` names (the flag's parsing is in test_cli_flags.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import uvloop
from dynamo_operator import app, eventloop
from dynamo_operator.__main__ import main
from dynamo_operator.flags import OperatorOptions


async def running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def test_uvloop_runs_the_coroutine_on_a_uvloop_loop() -> None:
    assert isinstance(eventloop.run(running_loop(), event_loop="uvloop"), uvloop.Loop)


def test_asyncio_runs_the_coroutine_on_the_standard_loop() -> None:
    loop = eventloop.run(running_loop(), event_loop="asyncio")
    assert isinstance(loop, asyncio.BaseEventLoop)
    assert not isinstance(loop, uvloop.Loop)


def test_run_returns_what_the_coroutine_returns_and_closes_its_loop() -> None:
    async def answer() -> tuple[int, asyncio.AbstractEventLoop]:
        return 42, asyncio.get_running_loop()

    value, loop = eventloop.run(answer(), event_loop="uvloop")
    assert value == 42
    assert loop.is_closed()


def test_run_raises_what_the_coroutine_raises() -> None:
    async def fail() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        eventloop.run(fail(), event_loop="uvloop")


def test_an_unknown_loop_name_is_refused_by_the_factory() -> None:
    with pytest.raises(ValueError, match="unknown event loop 'trio'"):
        eventloop.loop_factory("trio")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        pytest.param([], uvloop.Loop, id="default-uvloop"),
        pytest.param(["--event-loop=uvloop"], uvloop.Loop, id="uvloop"),
        pytest.param(["--event-loop=asyncio"], asyncio.BaseEventLoop, id="asyncio"),
    ],
)
def test_the_run_command_runs_the_operator_on_the_chosen_loop(
    argv: list[str], expected: type, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`dynamo-operator` hands the operator to the loop its flag names (run_operator replaced by a
    probe, so no cluster is needed)."""
    seen: list[asyncio.AbstractEventLoop] = []

    async def probe(options: OperatorOptions) -> int:
        seen.append(asyncio.get_running_loop())
        return 7

    monkeypatch.setattr(app, "run_operator", probe)
    assert main([*argv, "--kubeconfig", str(tmp_path / "absent")]) == 7
    assert len(seen) == 1 and isinstance(seen[0], expected)
    if expected is not uvloop.Loop:
        assert not isinstance(seen[0], uvloop.Loop)
