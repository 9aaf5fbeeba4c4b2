"""bench_scale's run order (alternating rounds, the first variant last of all) and each run's ratios."""

from __future__ import annotations

import argparse
import itertools
import math

import pytest
from bench.bench_scale import (
    ADMIN,
    OPERATOR_SA,
    Variant,
    balanced_groups,
    balanced_median,
    balanced_values,
    floor_label,
    floor_namespace,
    floor_plan,
    floor_ratios,
    floors_first,
    median_interval,
    operator_namespace,
    parse_floor_identities,
    run_order,
)


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


def test_an_operator_run_is_also_held_against_its_rounds_fastest_admin_floor() -> None:
    assert floor_ratios(22.0, [21.0], [], admin=[20.0, 22.0]) == {"to_floor": 1.05, "to_admin_floor": 1.1}


STANDBY = Variant("sb", ())


@pytest.mark.parametrize("round_", [0, 1, 2, 3])
def test_every_round_writes_a_floor_per_writer_count_and_identity(round_: int) -> None:
    plan = floor_plan([16, 32], [OPERATOR_SA, ADMIN], [], round_)
    assert sorted((w, i) for w, _, i in plan) == [
        (16, ADMIN),
        (16, OPERATOR_SA),
        (32, ADMIN),
        (32, OPERATOR_SA),
    ]


def test_floor_identities_alternate_by_round_so_neither_always_runs_first() -> None:
    firsts = [floor_plan([32], [OPERATOR_SA, ADMIN], [], r)[0][2] for r in range(4)]
    assert firsts == [OPERATOR_SA, ADMIN, OPERATOR_SA, ADMIN]


@pytest.mark.parametrize("round_", [0, 1])
def test_standby_floors_are_written_as_the_floors_own_identity(round_: int) -> None:
    plan = floor_plan([32], [OPERATOR_SA, ADMIN], [STANDBY], round_)
    assert [(sb, i) for _, sb, i in plan if sb is not None] == [(STANDBY, OPERATOR_SA)]


@pytest.mark.parametrize(
    ("identity", "standby", "label"),
    [
        pytest.param(OPERATOR_SA, None, "floor", id="the-floor"),
        pytest.param(OPERATOR_SA, STANDBY, "floor+sb", id="with-a-standby"),
        pytest.param(ADMIN, None, "floor-admin", id="another-identity"),
    ],
)
def test_floor_runs_are_labelled_by_what_they_are_held_as(
    identity: str, standby: Variant | None, label: str
) -> None:
    assert floor_label(identity, OPERATOR_SA, standby) == label


def test_an_admin_only_floor_is_labelled_plain_floor() -> None:
    """The growth table's floor is the fastest `floor/W` run, whoever wrote it."""
    assert floor_label(ADMIN, ADMIN, None) == "floor"


@pytest.mark.parametrize("identities", [[OPERATOR_SA], [ADMIN], [OPERATOR_SA, ADMIN]])
@pytest.mark.parametrize("standbys", [0, 2])
def test_no_two_runs_of_a_cluster_write_into_the_same_namespace_name(
    identities: list[str], standbys: int
) -> None:
    """A name deleted under 30 s before makes the API server look the namespace up live on every
    write into it (NamespaceLifecycle admission): a run reusing one would pay reads no other run
    pays."""
    rounds, writer_counts, variants = 6, [16, 32], 3
    sbs = [Variant(f"sb{i}") for i in range(standbys)]
    names = [
        floor_namespace(r, k)
        for r in range(rounds)
        for k, _ in enumerate(floor_plan(writer_counts, identities, sbs, r))
    ]
    names += [operator_namespace(r, i) for r in range(rounds) for i in range(variants)]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        pytest.param("operator", [OPERATOR_SA], id="default"),
        pytest.param("admin", [ADMIN], id="admin-only"),
        pytest.param("operator,admin", [OPERATOR_SA, ADMIN], id="both"),
        pytest.param(" operator , admin ", [OPERATOR_SA, ADMIN], id="spaces"),
    ],
)
def test_floor_as_parses_identities_in_order(text: str, parsed: list[str]) -> None:
    assert parse_floor_identities(text) == parsed


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param(",", id="only-a-comma"),
        pytest.param("root", id="unknown"),
        pytest.param("Operator", id="wrong-case"),
        pytest.param("operator,operator", id="repeated"),
        pytest.param("operator,kubelet", id="unknown-second"),
        pytest.param("admin,operator", id="admin-first-would-mislabel-the-ratios"),
        pytest.param("operator,admin,admin", id="three"),
    ],
)
def test_floor_as_refuses_anything_but_its_three_forms(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="operator, admin, operator,admin"):
        parse_floor_identities(text)


@pytest.mark.parametrize("rounds", [1, 2, 3, 4, 5, 6])
def test_the_last_round_writes_its_floors_first(rounds: int) -> None:
    """Its last operator run stays up for the memory, quiet and restart figures; a floor written after
    it would be reconciled by that operator."""
    assert floors_first(rounds - 1, rounds)


@pytest.mark.parametrize("rounds", [2, 3, 4, 5, 6])
def test_rounds_alternate_whether_the_floor_or_the_operator_runs_first(rounds: int) -> None:
    order = [floors_first(r, rounds) for r in range(rounds)]
    assert all(a != b for a, b in itertools.pairwise(order))


@pytest.mark.parametrize("rounds", [1, 2, 3, 4, 5, 6, 7])
def test_every_round_counts_once_in_the_balanced_median(rounds: int) -> None:
    groups = balanced_groups(rounds)
    assert sorted(i for group in groups for i in group) == list(range(rounds))


@pytest.mark.parametrize("rounds", [2, 3, 4, 5, 6, 7])
def test_rounds_taken_together_ran_in_opposite_order(rounds: int) -> None:
    for group in balanced_groups(rounds):
        if len(group) == 2:
            assert floors_first(group[0], rounds) != floors_first(group[1], rounds)


@pytest.mark.parametrize("rounds", [2, 4, 6])
def test_an_even_number_of_rounds_is_all_pairs(rounds: int) -> None:
    assert all(len(group) == 2 for group in balanced_groups(rounds))


def test_one_round_is_its_own_ratio() -> None:
    assert balanced_median([1.23]) == 1.23


def test_two_rounds_of_opposite_order_give_their_geometric_mean() -> None:
    assert balanced_median([1.21, 1.0]) == 1.1


def test_an_order_effect_that_alternates_by_round_cancels() -> None:
    """Each round 10 % against whichever side ran first: every pair gives the ratio without it."""
    true = 1.05
    ratios = [true * 1.1, true / 1.1] * 3
    assert balanced_median(ratios) == true


def test_with_an_odd_number_of_rounds_the_first_stands_alone() -> None:
    assert balanced_median([1.0, 1.21, 1.0]) == 1.05  # median of 1.0 and the pair's 1.1


def test_pairs_are_the_geometric_means_of_rounds_of_opposite_order() -> None:
    assert [round(v, 4) for v in balanced_values([1.21, 1.0, 1.0, 1.44])] == [1.1, 1.2]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_too_few_pairs_give_no_interval(n: int) -> None:
    assert median_interval([1.0 + i / 100 for i in range(n)]) is None


def test_five_pairs_give_their_extremes() -> None:
    """[min, max] of 5 holds the median with probability 1 - 2/32 (94 %); the next pair in would
    hold it with 62 %, below 90 %."""
    assert median_interval([1.12, 0.97, 1.03, 1.30, 1.05]) == (0.97, 1.30)


def test_more_pairs_narrow_the_interval() -> None:
    """With 8 pairs the 2nd smallest and 2nd largest hold the median with 93 %."""
    assert median_interval([0.90, 1.00, 1.02, 1.04, 1.06, 1.08, 1.10, 1.40]) == (1.00, 1.10)


@pytest.mark.parametrize("n", range(5, 40))
def test_the_interval_holds_the_median_at_the_confidence_asked(n: int) -> None:
    """Checked against the binomial law the interval is built on: the chance that fewer than k of
    n values fall below the median (or, symmetrically, above it) is at most (1 - 0.9) / 2."""
    values = [float(i) for i in range(n)]
    interval = median_interval(values)
    assert interval is not None
    k = int(interval[0]) + 1  # the k-th smallest
    miss = sum(math.comb(n, i) for i in range(k)) / 2**n
    assert 2 * miss <= 1 - 0.9
    assert interval[1] == n - k  # symmetric: the k-th largest
    wider_miss = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    assert 2 * wider_miss > 1 - 0.9 or k == n // 2  # and k is as large as the confidence allows
