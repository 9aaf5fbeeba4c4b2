"""`make compat`: the comparison with upstream's goldens as a table. Exit 1 on anything unexpected
or stale, 2 when the goldens are missing."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from compat.diff import render_value
from compat.expectations import ListError, Verdict
from compat.generate import SETTINGS_WITHOUT_FLAG, SHAPES
from compat.goldens import GoldensMissing, examples_dir
from compat.run import Report, run

_LISTS = {"intended": Verdict.INTENDED, "gaps": Verdict.KNOWN_GAP, "unexpected": Verdict.UNEXPECTED}


def _table(report: Report) -> str:
    head = ("example", "shape", "objects", "fields", "differ", "intended", "known gap", "unexpected")
    rows = [
        (
            r.example,
            r.shape,
            str(r.objects),
            str(r.fields),
            str(sum(r.counts.values())),
            *(str(r.counts[v]) for v in Verdict),
        )
        for r in report.rows
    ]
    for shape in [s.name for s in SHAPES] + ["all"]:
        picked = [r for r in report.rows if shape in ("all", r.shape)]
        rows.append(
            (
                "TOTAL",
                shape,
                str(sum(r.objects for r in picked)),
                str(sum(r.fields for r in picked)),
                str(sum(sum(r.counts.values()) for r in picked)),
                *(str(sum(r.counts[v] for r in picked)) for v in Verdict),
            )
        )
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]

    def fmt(row: tuple[str, ...]) -> str:
        return "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )

    return "\n".join([fmt(head), *(fmt(r) for r in rows)])


def _entry_order(item: tuple[tuple[str, str, str], int]) -> tuple[str, int]:
    """List order: file, then entry number ("allowed.yaml entry 12 (...)")."""
    (_, label, _), _ = item
    source, _, rest = label.partition(" entry ")
    return source, int(rest.split(" ", 1)[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make compat", description=__doc__)
    parser.add_argument(
        "--list", choices=[*_LISTS, "all"], help="also print every difference of this verdict"
    )
    args = parser.parse_args(argv)
    try:
        report = run()
    except GoldensMissing as err:
        print(f"compat: {err}", file=sys.stderr)
        return 2
    except ListError as err:
        print(f"compat: {err}", file=sys.stderr)
        return 1
    print(f"Upstream goldens: {examples_dir()}")
    print(_table(report))
    print("\nDifferences per list entry:")
    per_entry = Counter((j.verdict.value, j.entry, j.note) for j in report.judged if j.entry)
    for (verdict, label, note), count in sorted(per_entry.items(), key=_entry_order):
        print(f"  {count:5d}  [{verdict}] {label}  {render_value(note, 70)}")
    print("\nWhere this operator refused or failed a graph (offline):")
    for note in report.notes:
        print(f"  - {render_value(note, 200)}")
    if SETTINGS_WITHOUT_FLAG:
        print("\nUpstream settings this operator has no flag for (their differences are known gaps):")
        for setting, issue in SETTINGS_WITHOUT_FLAG:
            print(f"  - {setting} ({issue})")
    if args.list:
        wanted = set(_LISTS.values()) if args.list == "all" else {_LISTS[args.list]}
        print()
        for j in report.judged:
            if j.verdict in wanted:
                values = f"golden={render_value(j.diff.golden, 80)} ours={render_value(j.diff.ours, 80)}"
                print(f"[{j.verdict.value}] {j.line()} {values}" + (f"  ({j.note})" if j.note else ""))
    unexpected = report.of(Verdict.UNEXPECTED)
    for j in unexpected:
        print(
            f"UNEXPECTED {j.line()}: "
            f"golden={render_value(j.diff.golden, 120)} ours={render_value(j.diff.ours, 120)}"
        )
    for line in report.stale:
        print(f"STALE {line}")
    return 1 if unexpected or report.stale else 0


if __name__ == "__main__":
    sys.exit(main())
