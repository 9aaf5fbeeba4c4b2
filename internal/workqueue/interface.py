"""What controllers see of a work queue: the client-go contract in one Protocol.

A key is never handed to two workers at once; an add while the key is being processed is replayed
once, after `done()`. Every `get()` must be paired with exactly one `done()`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Protocol, TypeVar

K = TypeVar("K", bound=Hashable)


class WorkQueue(Protocol[K]):
    """A deduplicating, delaying, rate-limited queue of keys (see the module docstring)."""

    def add(self, key: K) -> None: ...
    def add_first(self, key: K) -> None: ...  # like add, handed out before plain adds
    def add_urgent(self, key: K) -> None: ...  # like add_first, handed out before first adds too
    def add_after(self, key: K, delay: float) -> None: ...  # earlier deadline wins
    def add_rate_limited(self, key: K) -> None: ...
    def forget(self, key: K) -> None: ...  # resets backoff; still call done()
    def num_requeues(self, key: K) -> int: ...
    async def get(self) -> K | None: ...  # None: shut down and nothing left queued
    def done(self, key: K) -> None: ...
    def shut_down(self) -> None: ...
    async def shut_down_with_drain(self) -> None: ...
    @property
    def shutting_down(self) -> bool: ...
    def __len__(self) -> int: ...
