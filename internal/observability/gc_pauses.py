"""How long the cyclic garbage collector stopped the process, by generation.

prometheus_client's GCCollector counts collections and collected objects, not the time they took. In
an operator whose caches hold hundreds of thousands of dicts, a collection of the oldest generation
walks all of them while the event loop waits; `python_gc_pause_seconds_total` makes that cost visible
next to the process's CPU seconds (its callbacks run inside the collector, so they cost two clock reads
per collection).
"""

from __future__ import annotations

import gc
import time
from typing import Any

from prometheus_client import CollectorRegistry, Counter

_GENERATIONS = ("0", "1", "2")


class GcPauses:
    """Times every collection through `gc.callbacks`; `install()`/`uninstall()` add and remove it."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.seconds = Counter(
            "python_gc_pause_seconds",
            "Seconds the cyclic garbage collector ran, by the generation it collected.",
            ["generation"],
            registry=registry,
        )
        # Children resolved once: the callback runs on every collection (hundreds per second).
        self._children = [self.seconds.labels(g) for g in _GENERATIONS]
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started:
            self._children[info["generation"]].inc(time.perf_counter() - self._started)
            self._started = 0.0

    def install(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def uninstall(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)
