"""`make compat`: the comparison with upstream's goldens as tables, one per set of goldens, then a
summary of both. Exit 1 on anything unexpected or stale, 2 when the goldens are missing."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from compat.diff import render_value
from compat.expectations import ListError, Verdict
from compat.generate import SETTINGS_WITHOUT_FLAG, SHAPES
from compat.goldens import SETS, GoldensMissing
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


def difference_class(j_path: str, change: str) -> str:
    """A difference with the object's name dropped: `Deployment:spec.replicas (changed)`. The same
    field differing in every example's frontend is one class, so the count says how many distinct
    things differ rather than how often."""
    key, _, field = j_path.partition(":")
    kind = key.split("/", 1)[0]
    return f"{kind}:{field} ({change})" if field else f"{kind} ({change})"


def _summary(reports: list[Report]) -> str:
    head = (
        "set",
        "shape",
        "objects",
        "objects differing",
        "classes differing",
        "fields differing",
        "unexpected",
    )
    rows = []
    for report in reports:
        for shape in [s.name for s in SHAPES] + ["all"]:
            judged = [j for j in report.judged if shape in ("all", j.shape)]
            rows.append(
                (
                    report.golden_set.name,
                    shape,
                    str(sum(r.objects for r in report.rows if shape in ("all", r.shape))),
                    str(len({(j.example, j.shape, j.diff.path.split(":", 1)[0]) for j in judged})),
                    str(len({difference_class(j.diff.path, j.diff.change) for j in judged})),
                    str(len(judged)),
                    str(sum(j.verdict is Verdict.UNEXPECTED for j in judged)),
                )
            )
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in (head, *rows)
    )


def _print_report(report: Report, listed: str | None) -> None:
    print(f"== Upstream {report.golden_set.name}: {report.golden_set.root()}")
    print(_table(report))
    print("\nDifferences per list entry:")
    per_entry = Counter((j.verdict.value, j.entry, j.note) for j in report.judged if j.entry)
    for (verdict, label, note), count in sorted(per_entry.items(), key=_entry_order):
        print(f"  {count:5d}  [{verdict}] {label}  {render_value(note, 70)}")
    print("\nWhere this operator refused or failed a graph (offline):")
    for note in report.notes:
        print(f"  - {render_value(note, 200)}")
    if listed:
        wanted = set(_LISTS.values()) if listed == "all" else {_LISTS[listed]}
        print()
        for j in report.judged:
            if j.verdict in wanted:
                values = f"golden={render_value(j.diff.golden, 80)} ours={render_value(j.diff.ours, 80)}"
                print(f"[{j.verdict.value}] {j.line()} {values}" + (f"  ({j.note})" if j.note else ""))
    for j in report.of(Verdict.UNEXPECTED):
        print(
            f"UNEXPECTED {report.golden_set.name} {j.line()}: "
            f"golden={render_value(j.diff.golden, 120)} ours={render_value(j.diff.ours, 120)}"
        )
    for line in report.stale:
        print(f"STALE {report.golden_set.name} {line}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make compat", description=__doc__)
    parser.add_argument(
        "--list", choices=[*_LISTS, "all"], help="also print every difference of this verdict"
    )
    parser.add_argument(
        "--set", choices=[s.name for s in SETS], action="append", help="only this set of goldens (repeatable)"
    )
    args = parser.parse_args(argv)
    reports: list[Report] = []
    try:
        for golden_set in SETS:
            if args.set and golden_set.name not in args.set:
                continue
            reports.append(run(golden_set))
    except GoldensMissing as err:
        print(f"compat: {err}", file=sys.stderr)
        return 2
    except ListError as err:
        print(f"compat: {err}", file=sys.stderr)
        return 1
    for report in reports:
        _print_report(report, args.list)
    if SETTINGS_WITHOUT_FLAG:
        print("Upstream settings this operator has no flag for (their differences are known gaps):")
        for setting, issue in SETTINGS_WITHOUT_FLAG:
            print(f"  - {setting} ({issue})")
    print("Summary (a class is one field of one kind, whichever object or example it differs in):")
    print(_summary(reports))
    failed = any(r.of(Verdict.UNEXPECTED) or r.stale for r in reports)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
