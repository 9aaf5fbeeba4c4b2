"""Where a controller's events come from besides informers: a channel of generic events.

An informer is the usual source (`Builder.for_/owns/watches`). A `Channel` carries events nothing in
the cluster announces — "the pull secrets of this namespace changed", "this API is served now" — to
the controllers that declared it with `Builder.watches_channel` (controller-runtime's
`source.Channel`). Sending is synchronous and never blocks: receivers only enqueue keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Channel(Generic[T]):
    """Generic events of type T, fanned out to every receiver subscribed so far."""

    def __init__(self) -> None:
        self._receivers: list[Callable[[T], None]] = []

    def subscribe(self, receiver: Callable[[T], None]) -> None:
        self._receivers.append(receiver)

    def send(self, item: T) -> None:
        for receiver in self._receivers:
            receiver(item)
