"""Every upstream example, in every cluster shape, generates what upstream's operator generated, except
what each set's lists say: `test/compat/allowed*.yaml` (intended) and `known_gaps*.yaml` (not closed
yet). Both sets of goldens run: df888f68 (April) and 2a6da14c (August, which wins where they differ).

The goldens live beside the clone (`../shared/upstream-examples`, or `$DYNAMO_UPSTREAM_EXAMPLES`);
when they are missing this test fails and says where it looked. `make compat` prints the table.
"""

from __future__ import annotations

import pytest
from compat.diff import render_value
from compat.expectations import Verdict
from compat.generate import SHAPES
from compat.goldens import SETS, GoldenSet, GoldensMissing, discover
from compat.run import Report, run

SHOWN = 40  # differences listed in a failure message; `make compat --list unexpected` has them all


@pytest.fixture(scope="module", params=SETS, ids=[s.name for s in SETS])
def report(request: pytest.FixtureRequest) -> Report:
    golden_set: GoldenSet = request.param
    try:
        return run(golden_set)
    except GoldensMissing as err:
        pytest.fail(str(err), pytrace=False)


def test_every_example_is_compared_in_every_shape(report: Report) -> None:
    """No example or shape is skipped: one row per (example, shape), each comparing something, but
    for an example upstream's API server refused (no golden) that this operator refuses too."""
    examples = discover(tuple(s.name for s in SHAPES), report.golden_set)
    assert [(r.example, r.shape) for r in report.rows] == [(e.name, s.name) for e in examples for s in SHAPES]
    refused_by_both = {
        (e.name, s.name)
        for e in examples
        for s in SHAPES
        if not e.golden_path(s.name).is_file()
        and any(n.startswith(f"{e.name} [{s.name}]") and "refused at admission" in n for n in report.notes)
    }
    assert all(r.objects > 0 for r in report.rows if (r.example, r.shape) not in refused_by_both)


def test_every_difference_is_intended_or_a_known_gap(report: Report) -> None:
    unexpected = report.of(Verdict.UNEXPECTED)
    lines = [
        f"{j.line()}: golden={render_value(j.diff.golden, 100)} ours={render_value(j.diff.ours, 100)}"
        for j in unexpected[:SHOWN]
    ]
    assert not unexpected, (
        f"{len(unexpected)} difference(s) from upstream's goldens on neither list "
        "(fix generation, or add an entry to test/compat/allowed.yaml with its reason or to "
        "known_gaps.yaml with its issue):\n" + "\n".join(lines)
    )


def test_no_list_entry_is_stale(report: Report) -> None:
    """An entry that matches nothing hides nothing: a closed gap's entry must be deleted."""
    assert not report.stale, "stale list entries (delete them):\n" + "\n".join(report.stale)
