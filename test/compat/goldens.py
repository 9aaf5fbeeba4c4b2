"""Where upstream's examples and goldens live, and how to read them.

The goldens are facts measured once on upstream's Go operator (see their README); they stay outside
the repository, beside the clone (`../shared/upstream-examples`), and are never copied in.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

ENV_DIR = "DYNAMO_UPSTREAM_EXAMPLES"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DIR = REPO_ROOT.parent / "shared" / "upstream-examples"


class GoldensMissing(Exception):
    """The examples directory is absent or incomplete: the comparison cannot run, and must say so."""


@dataclass(frozen=True, slots=True)
class Example:
    """One upstream example file: its stem names it in every report and list entry."""

    name: str
    yaml_path: Path

    def golden_path(self, shape: str) -> Path:
        return self.yaml_path.parent / shape / f"{self.name}.json"


def examples_dir() -> Path:
    """`$DYNAMO_UPSTREAM_EXAMPLES`, else `../shared/upstream-examples` beside the repository."""
    override = os.environ.get(ENV_DIR)
    return Path(override).resolve() if override else DEFAULT_DIR


def discover(shapes: tuple[str, ...]) -> list[Example]:
    """Every example YAML, each with a golden for every shape; raises GoldensMissing otherwise."""
    root = examples_dir()
    hint = f"set {ENV_DIR} to the folder holding upstream's examples and golden*/ (see README)"
    if not root.is_dir():
        raise GoldensMissing(f"upstream examples not found at {root}: {hint}")
    examples = [Example(p.stem, p) for p in sorted(root.glob("*.yaml"))]
    if not examples:
        raise GoldensMissing(f"no example *.yaml in {root}: {hint}")
    absent = [str(ex.golden_path(s)) for ex in examples for s in shapes if not ex.golden_path(s).is_file()]
    if absent:
        raise GoldensMissing(f"{len(absent)} golden file(s) missing, first {absent[0]}: {hint}")
    return examples


def load_golden(example: Example, shape: str) -> dict[str, Obj]:
    """The golden as written: `Kind/name` → object."""
    data = json.loads(example.golden_path(shape).read_text())
    if not isinstance(data, dict):
        raise GoldensMissing(f"{example.golden_path(shape)}: expected an object keyed by Kind/name")
    return data
