"""Bytes per cached object by kind, measured on what the operator would cache of a live cluster.

The operator runs as its own process, so the benchmark cannot look into its heap. It lists the same
objects from the API server instead and passes each through the operator's own cache pipeline
(managedFields stripped, the kind's shape from `operator/cache_shapes.py` or the pod transform,
strings interned), then measures the Python objects the way a store holds them: every distinct
object counted once per kind, so interned strings shared between objects count once.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from dynamo_operator.cache_shapes import CHILD_SHAPES
from dynamo_operator.internal import kinds
from dynamo_operator.internal.cache.transform import intern_strings, strip_managed_fields
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import CONFIG_MAP, Resource

Obj = dict[str, Any]

# What the operator caches, with the transform its informer applies (None: the object whole).
CACHED: tuple[tuple[Resource, Callable[[Obj], Obj] | None], ...] = (
    (kinds.DGD, None),
    (kinds.DCD, None),
    *(
        (r, t)
        for r, t in CHILD_SHAPES.items()
        if r not in (kinds.LWS, kinds.POD_GROUP, kinds.VIRTUAL_SERVICE)
    ),
    (CONFIG_MAP, None),
)


def deep_size(value: Any, seen: set[int]) -> int:
    """Bytes of `value` and everything it references that `seen` does not hold yet."""
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(deep_size(k, seen) + deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, (list, tuple)):
        size += sum(deep_size(v, seen) for v in value)
    return size


@dataclass(frozen=True, slots=True)
class KindMemory:
    kind: str
    objects: int
    bytes_total: int
    bytes_raw: int  # the same objects as decoded, before the pipeline (managedFields included)

    @property
    def per_object(self) -> int:
        return self.bytes_total // max(1, self.objects)


def measure(resource: Resource, items: Iterable[Obj], transform: Callable[[Obj], Obj] | None) -> KindMemory:
    raw = list(items)
    raw_size = deep_size(raw, set())
    cached = []
    for obj in raw:
        bare = strip_managed_fields(obj)
        cached.append(intern_strings(transform(bare) if transform is not None else bare))
    return KindMemory(resource.kind, len(cached), deep_size(cached, set()), raw_size)


async def breakdown(api: Client, namespace: str) -> list[KindMemory]:
    out = []
    for resource, transform in CACHED:
        items = await api.list(resource, namespace=namespace)
        out.append(measure(resource, items, transform))
    return out


def print_breakdown(rows: list[KindMemory], *, graphs: int) -> None:
    total = sum(r.bytes_total for r in rows)
    raw = sum(r.bytes_raw for r in rows)
    print(f"  memory breakdown (what the operator caches of {graphs} graphs; decoded size before trimming):")
    for r in rows:
        print(
            f"    {r.kind:30} {r.objects:6} objects  {r.per_object:7} B/object  "
            f"{r.bytes_total / 2**20:7.1f} MiB  (whole: {r.bytes_raw / 2**20:6.1f} MiB)"
        )
    whole = f"(whole: {raw / 2**20:6.1f} MiB)"
    print(f"    {'total':30} {'':33} {total / 2**20:7.1f} MiB  {whole}")
