"""Which asyncio event loop runs the operator.

uvloop (libuv, with its own TLS transport) by default. The operator keeps one TLS connection per
watch plus one per request in flight (~110 during a rollout), and the standard loop's TLS transport
gives every connection a zero-filled 256 KiB read buffer: ~28 MB resident for buffers that are
mostly empty. uvloop's takes a sixth of that (100 local TLS connections, both ends in one process:
+9.8 against +56.9 MiB), which made the operator's peak memory 20-29 MB smaller at 100 and 1,000
graphs for the same time (the figures are in flags.py). `--event-loop=asyncio` is the standard
library's loop, for comparison or a platform uvloop does not support.
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
