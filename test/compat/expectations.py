"""The two lists every difference is judged against, and the verdicts.

`allowed.yaml` holds intended differences (each with its reason); `known_gaps.yaml` holds unintended
ones not closed yet (each with the issue that will close it and a short cause). A difference matched
by neither is unexpected; an entry that matches nothing is stale. Both fail the test: the lists must
describe today's output exactly, so closing a gap means deleting its entry.

Entry fields (`path` is required, the rest narrow it down):
  path      one pattern or a list; `Kind/name:field.path` as reported. `**` matches anything, `*`
            one step (not `.`, `:`, `[` or `]`; inside brackets anything but `]`).
  change    only-golden | only-ours | changed
  examples  fnmatch pattern(s) over example names (the YAML file stems), `!pattern` excludes;
            default all
  shapes    golden | golden-lws-gaie | golden-grove (or a list); default all
  golden, ours   regexes the rendered value must fully match
  reason    (allowed.yaml) why the difference is intended
  issue, cause   (known_gaps.yaml) which issue closes it, and why it differs today
"""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compat.diff import Difference, render_value
from compat.paths import glob_regex

HERE = Path(__file__).resolve().parent
ALLOWED_FILE = HERE / "allowed.yaml"
KNOWN_GAPS_FILE = HERE / "known_gaps.yaml"
_CHANGES = ("only-golden", "only-ours", "changed")


class Verdict(enum.Enum):
    INTENDED = "intended"
    KNOWN_GAP = "known gap"
    UNEXPECTED = "unexpected"


@dataclass(frozen=True, slots=True)
class Entry:
    """One list entry; `label` says where it came from in error messages."""

    label: str
    paths: tuple[str, ...]
    regexes: tuple[re.Pattern[str], ...]
    change: str | None
    examples: tuple[str, ...]
    shapes: tuple[str, ...] | None
    golden: re.Pattern[str] | None
    ours: re.Pattern[str] | None
    note: str

    def match(self, example: str, shape: str, diff: Difference) -> int | None:
        """Index of the path pattern that matches `diff`, or None."""
        if self.change is not None and diff.change != self.change:
            return None
        if self.shapes is not None and shape not in self.shapes:
            return None
        if not _example_matches(example, self.examples):
            return None
        for regex, value in ((self.golden, diff.golden), (self.ours, diff.ours)):
            if regex is not None and not regex.fullmatch(render_value(value)):
                return None
        return next((i for i, rx in enumerate(self.regexes) if rx.fullmatch(diff.path)), None)


def _example_matches(example: str, patterns: tuple[str, ...]) -> bool:
    """fnmatch patterns; a leading `!` excludes (`["*", "!*_planner"]`: every example but planners)."""
    includes = [p for p in patterns if not p.startswith("!")] or ["*"]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    return any(fnmatch.fnmatchcase(example, p) for p in includes) and not any(
        fnmatch.fnmatchcase(example, p) for p in excludes
    )


class ListError(ValueError):
    """A list file that does not say what it must."""


def _strings(value: Any, where: str, name: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) and v for v in items):
        raise ListError(f"{where}: `{name}` must be a non-empty string or list of strings")
    return tuple(items)


def parse_entries(raw: Any, *, source: str, note_keys: tuple[str, ...], shapes: Iterable[str]) -> list[Entry]:
    """Entries of one list file; every entry must carry each of `note_keys`."""
    known_shapes = set(shapes)
    if not isinstance(raw, list):
        raise ListError(f"{source}: expected a list of entries")
    out: list[Entry] = []
    allowed_keys = {"path", "change", "examples", "shapes", "golden", "ours", *note_keys}
    for i, item in enumerate(raw):
        where = f"{source} entry {i + 1}"
        if not isinstance(item, dict):
            raise ListError(f"{where}: expected a mapping")
        unknown = set(item) - allowed_keys
        if unknown:
            raise ListError(f"{where}: unknown key(s) {sorted(unknown)}")
        missing = [k for k in ("path", *note_keys) if not item.get(k)]
        if missing:
            raise ListError(f"{where}: missing {missing}")
        paths = _strings(item["path"], where, "path")
        change = item.get("change")
        if change is not None and change not in _CHANGES:
            raise ListError(f"{where}: change must be one of {_CHANGES}")
        entry_shapes = _strings(item["shapes"], where, "shapes") if "shapes" in item else None
        if entry_shapes and not set(entry_shapes) <= known_shapes:
            raise ListError(f"{where}: unknown shape(s) {sorted(set(entry_shapes) - known_shapes)}")
        note = " / ".join(f"{k}: {item[k]}" for k in note_keys)
        out.append(
            Entry(
                label=f"{where} ({paths[0]})",
                paths=paths,
                regexes=tuple(glob_regex(p) for p in paths),
                change=change,
                examples=_strings(item.get("examples", "*"), where, "examples"),
                shapes=entry_shapes,
                golden=re.compile(item["golden"], re.S) if "golden" in item else None,
                ours=re.compile(item["ours"], re.S) if "ours" in item else None,
                note=note,
            )
        )
    return out


def load(path: Path, *, note_keys: tuple[str, ...], shapes: Iterable[str]) -> list[Entry]:
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ListError(f"{path.name}: not valid YAML: {err}") from err
    return parse_entries(raw, source=path.name, note_keys=note_keys, shapes=shapes)


@dataclass(slots=True)
class Judge:
    """Classifies differences and remembers which entry path matched anything (for staleness)."""

    allowed: list[Entry]
    known_gaps: list[Entry]
    used: set[tuple[str, int]] = field(default_factory=set)

    def verdict(self, example: str, shape: str, diff: Difference) -> tuple[Verdict, Entry | None]:
        found: tuple[Verdict, Entry] | None = None
        for verdict, entries in ((Verdict.INTENDED, self.allowed), (Verdict.KNOWN_GAP, self.known_gaps)):
            for entry in entries:
                index = entry.match(example, shape, diff)
                if index is not None:
                    self.used.add((entry.label, index))
                    found = found or (verdict, entry)
        return found if found else (Verdict.UNEXPECTED, None)

    def stale(self) -> list[str]:
        """Entry paths that matched no difference at all."""
        return [
            f"{entry.label}: path {path!r} matches nothing"
            for entry in (*self.allowed, *self.known_gaps)
            for i, path in enumerate(entry.paths)
            if (entry.label, i) not in self.used
        ]
