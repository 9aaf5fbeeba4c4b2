"""The garbage collector's pauses, by generation, as a counter beside the process metrics."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from dynamo_operator.internal.observability.gc_pauses import GcPauses
from prometheus_client import CollectorRegistry


@pytest.fixture
def pauses() -> Iterator[tuple[GcPauses, CollectorRegistry]]:
    registry = CollectorRegistry()
    timer = GcPauses(registry)
    timer.install()
    try:
        yield timer, registry
    finally:
        timer.uninstall()


def seconds(registry: CollectorRegistry, generation: str) -> float:
    value = registry.get_sample_value("python_gc_pause_seconds_total", {"generation": generation})
    assert value is not None
    return value


def test_a_full_collection_is_timed_under_generation_two(
    pauses: tuple[GcPauses, CollectorRegistry],
) -> None:
    _, registry = pauses
    gc.collect(2)
    assert seconds(registry, "2") > 0


def test_a_young_collection_is_timed_under_its_own_generation(
    pauses: tuple[GcPauses, CollectorRegistry],
) -> None:
    _, registry = pauses
    before = seconds(registry, "2")
    gc.collect(0)
    assert seconds(registry, "0") > 0
    assert seconds(registry, "2") == before


def test_installing_twice_times_each_collection_once(pauses: tuple[GcPauses, CollectorRegistry]) -> None:
    timer, _ = pauses
    timer.install()
    assert gc.callbacks.count(timer._callback) == 1


def test_uninstalled_it_times_nothing_more(pauses: tuple[GcPauses, CollectorRegistry]) -> None:
    timer, registry = pauses
    timer.uninstall()
    gc.collect(2)
    assert seconds(registry, "2") == 0
