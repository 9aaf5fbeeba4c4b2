"""bench_scale's run order (alternating rounds, the first variant last of all) and each run's ratios."""

from __future__ import annotations

import pytest
from bench.bench_scale import floor_ratios, run_order


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


def test_an_operator_run_is_held_against_its_rounds_fastest_floors() -> None:
    assert floor_ratios(22.0, [20.0, 21.0], [21.0]) == {"to_floor": 1.1, "to_watched_floor": 1.05}


def test_a_skipped_floor_leaves_its_ratio_out_instead_of_nan() -> None:
    """`--skip floor` (how the 5,000-graph run is made): the runs table must say "-", not "nan"."""
    assert floor_ratios(1805.5, [], []) == {}
    assert floor_ratios(22.0, [20.0], []) == {"to_floor": 1.1}
