"""Typed errors of generation: each names the field of the input that is wrong, and the reason
(a condition reason, CamelCase) a reconciler refuses the object with."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import ClassVar


class GenerationError(ValueError):
    """The input cannot be turned into objects; `field` is the JSON path of the offending field."""

    reason: ClassVar[str] = "InvalidSpec"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def under_service(self, service: str) -> GenerationError:
        """This error, raised for a component of the graph's service `service` (its field relative
        to the component's spec, or rooted at a DCD's `spec`), naming its field from the graph's
        root: a copy of the same type and reason."""
        base = f"spec.services.{service}"
        if self.field.startswith(("spec.services", "metadata")):
            return self  # rooted at the graph already
        if self.field == "spec":
            field = base
        elif self.field.startswith("spec."):
            field = f"{base}.{self.field[len('spec.') :]}"
        else:
            field = f"{base}.{self.field}"
        # Not copy.copy: an exception copies by calling its class with `args`, not this signature.
        out = type(self).__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.field = field
        out.args = (f"{field}: {self.message}",)
        return out


@contextlib.contextmanager
def for_service(service: str) -> Iterator[None]:
    """Generation of one service's component: an error it raises names its field under the service
    (`GenerationError.under_service`), so a graph's refusal says which component to fix."""
    try:
        yield
    except GenerationError as err:
        raise err.under_service(service) from err


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
