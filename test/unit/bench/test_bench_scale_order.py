"""bench_scale's run order: alternating rounds, and the first variant last of all."""

from __future__ import annotations

import pytest
from bench.bench_scale import run_order


@pytest.mark.parametrize("rounds", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("variants", [1, 2, 3])
def test_the_last_run_of_a_size_is_the_first_variants(variants: int, rounds: int) -> None:
    """The last run carries the size's memory, quiet and restart figures, shown in the growth row
    beside the first variant's time: they must come from the same variant."""
    assert run_order(variants, rounds - 1, rounds)[-1] == 0


@pytest.mark.parametrize("rounds", [1, 2, 3, 4])
@pytest.mark.parametrize("variants", [1, 2, 3])
def test_every_round_runs_every_variant_once(variants: int, rounds: int) -> None:
    for r in range(rounds):
        assert sorted(run_order(variants, r, rounds)) == list(range(variants))


def test_rounds_alternate_so_no_variant_always_runs_on_the_fresher_cluster() -> None:
    assert [run_order(3, r, 4) for r in range(4)] == [[0, 1, 2], [2, 1, 0], [0, 1, 2], [2, 1, 0]]
