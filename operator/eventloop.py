"""Which asyncio event loop runs the operator.

uvloop (libuv, its TLS transport in Cython) by default: the operator's own work is mostly the loop's
— reading watch streams and responses through TLS, scheduling thousands of short tasks — and the
standard loop does that in Python. Measured with test/bench/bench_scale.py (issue #13, see the flag's
comment in flags.py). `--event-loop=asyncio` is the standard library's loop, for comparison or a
platform uvloop does not support.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

UVLOOP = "uvloop"
ASYNCIO = "asyncio"
EVENT_LOOPS = (UVLOOP, ASYNCIO)


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop]:
    """A new-loop callable for `name` (one of EVENT_LOOPS)."""
    if name == UVLOOP:
        import uvloop  # imported only when chosen: `--event-loop=asyncio` never loads it

        return uvloop.new_event_loop
    if name == ASYNCIO:
        return asyncio.new_event_loop
    raise ValueError(f"unknown event loop {name!r}, expected one of {', '.join(EVENT_LOOPS)}")


def run(main: Coroutine[Any, Any, T], *, event_loop: str) -> T:
    """`asyncio.run(main)` on a loop of kind `event_loop`."""
    with asyncio.Runner(loop_factory=loop_factory(event_loop)) as runner:
        return runner.run(main)
