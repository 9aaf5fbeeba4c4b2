"""The whole comparison: every example in every shape, judged against both lists."""

from __future__ import annotations

from dataclasses import dataclass, field

from compat import expectations
from compat.diff import Difference, compare
from compat.expectations import Judge, Verdict
from compat.generate import SHAPE_NAMES, SHAPES, generate
from compat.goldens import SET_DF888F68, GoldenSet, discover, load_golden


@dataclass(frozen=True, slots=True)
class Judged:
    example: str
    shape: str
    diff: Difference
    verdict: Verdict
    entry: str  # the list entry that matched ("" when none did)
    note: str

    def line(self) -> str:
        return f"{self.example} [{self.shape}] {self.diff.path} ({self.diff.change})"


@dataclass(slots=True)
class Row:
    """One example in one shape."""

    example: str
    shape: str
    objects: int = 0
    fields: int = 0
    counts: dict[Verdict, int] = field(default_factory=lambda: dict.fromkeys(Verdict, 0))


@dataclass(slots=True)
class Report:
    golden_set: GoldenSet = SET_DF888F68
    rows: list[Row] = field(default_factory=list)
    judged: list[Judged] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def of(self, verdict: Verdict) -> list[Judged]:
        return [j for j in self.judged if j.verdict is verdict]

    def total(self, verdict: Verdict) -> int:
        return sum(r.counts[verdict] for r in self.rows)


def load_judge(golden_set: GoldenSet = SET_DF888F68) -> Judge:
    return Judge(
        allowed=expectations.load(golden_set.allowed_file, note_keys=("reason",), shapes=SHAPE_NAMES),
        known_gaps=expectations.load(
            golden_set.known_gaps_file, note_keys=("issue", "cause"), shapes=SHAPE_NAMES
        ),
    )


def run(golden_set: GoldenSet = SET_DF888F68) -> Report:
    """One set of goldens. Raises GoldensMissing when they are not there (never a silent skip)."""
    judge = load_judge(golden_set)
    report = Report(golden_set)
    for example in discover(SHAPE_NAMES, golden_set):
        for shape in SHAPES:
            ours = generate(example, shape)
            comparison = compare(load_golden(example, shape.name), ours.objects)
            row = Row(example.name, shape.name, comparison.objects, comparison.fields)
            for diff in comparison.differences:
                verdict, entry = judge.verdict(example.name, shape.name, diff)
                row.counts[verdict] += 1
                report.judged.append(
                    Judged(
                        example.name,
                        shape.name,
                        diff,
                        verdict,
                        entry.label if entry else "",
                        entry.note if entry else "",
                    )
                )
            report.rows.append(row)
            report.notes += [f"{example.name} [{shape.name}] {note}" for note in ours.notes]
    report.stale = judge.stale()
    return report
