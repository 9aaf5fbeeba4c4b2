"""Typed errors of generation: each names the field of the input that is wrong, and the reason
(a condition reason, CamelCase) a reconciler refuses the object with."""

from __future__ import annotations

from typing import ClassVar


class GenerationError(ValueError):
    """The input cannot be turned into objects; `field` is the JSON path of the offending field."""

    reason: ClassVar[str] = "InvalidSpec"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class MissingAPIError(GenerationError):
    """An optional API the input needs (e.g. LeaderWorkerSet for multinode) is not served. Its
    reason stays `InvalidSpec`: a graph reports the APIs its services lack together (NoOrchestrator-
    Available, graph/children.py MissingAPIs); the DCD reconciler names the API itself (MissingAPI)."""

    def __init__(self, field: str, api: str, message: str) -> None:
        super().__init__(field, message)
        self.api = api


class NameCollisionError(GenerationError):
    """Two inputs (service keys) would generate objects with the same kind and name."""

    reason: ClassVar[str] = "NameCollision"

    def __init__(self, field: str, groups: list[tuple[str, ...]], message: str) -> None:
        super().__init__(field, message)
        self.groups = groups


class FieldNotImplementedError(GenerationError):
    """The input uses a field the API accepts (upstream implements it) that this operator does not:
    refused whole rather than ignored, so nothing half-configured runs (dynamo/not_implemented.py)."""

    reason: ClassVar[str] = "FieldNotImplemented"
