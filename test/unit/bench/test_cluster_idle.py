"""The bench's wait for an idle control plane before a run's clock starts (bench_graph.ClusterCPU)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator

import pytest
from bench.bench_graph import ClusterCPU, is_idle


@pytest.mark.parametrize(
    ("spent", "window", "idle"),
    [
        pytest.param({"kube-apiserver": 0.02, "etcd": 0.01}, 1.0, True, id="a-few-hundredths"),
        pytest.param({"kube-apiserver": 0.07, "etcd": 0.05}, 1.0, False, id="summed-over-processes"),
        pytest.param({"kube-apiserver": 0.1}, 1.0, False, id="at-the-threshold"),
        pytest.param({"kube-apiserver": 0.15}, 2.0, True, id="per-second-of-the-window"),
        pytest.param({}, 1.0, True, id="no-process-sampled"),
    ],
)
def test_idle_means_under_a_tenth_of_a_core_summed_over_the_control_plane(
    spent: dict[str, float], window: float, idle: bool
) -> None:
    assert is_idle(spent, window, 0.1) is idle


class ScriptedCPU(ClusterCPU):
    """Cumulative CPU seconds that grow by the given steps, one step per sample."""

    def __init__(self, steps: list[float]) -> None:
        self.samples = 0
        steps_forever = itertools.chain([0.0], steps, itertools.repeat(0.0))
        self._totals: Iterator[float] = itertools.accumulate(steps_forever)

    def sample(self) -> dict[str, float]:
        self.samples += 1
        return {"kube-apiserver": next(self._totals)}


def test_the_wait_ends_at_the_first_idle_window() -> None:
    cpu = ScriptedCPU([0.05, 0.03, 0.0001])  # busy, busy, idle (per 0.01 s window)
    asyncio.run(cpu.wait_idle(idle_cores=0.1, window=0.01, bound=60))
    assert cpu.samples == 4  # the first sample, then one per window until the idle one


def test_a_control_plane_that_never_goes_idle_is_waited_for_no_longer_than_the_bound() -> None:
    cpu = ScriptedCPU([1.0] * 10_000)
    waited = asyncio.run(cpu.wait_idle(idle_cores=0.1, window=0.01, bound=0.05))
    assert waited >= 0.05
    assert cpu.samples < 100
