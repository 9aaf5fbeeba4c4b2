"""Where the examples and goldens live, and how to read them.

Two sets of goldens, each measured once on upstream's Go operator (see their README), stay outside
the repository, beside the clone, and are never copied in:

* `df888f68` (`../shared/upstream-examples`): upstream in April, v1alpha1 examples;
* `2a6da14c` (`../shared/upstream-examples-2a6da14c`): upstream in August, v1beta1 examples. Where
  the two disagree, this one is what the operator generates (issue #39).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Obj = dict[str, Any]

REPO_ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
V1ALPHA1 = "nvidia.com/v1alpha1"
V1BETA1 = "nvidia.com/v1beta1"


class GoldensMissing(Exception):
    """The examples directory is absent or incomplete: the comparison cannot run, and must say so."""


@dataclass(frozen=True, slots=True)
class GoldenSet:
    """One measurement of upstream: which commit, where its files are, and how it was run."""

    name: str  # upstream's commit, as reports name the set
    env: str  # environment variable that overrides `default_dir`
    default_dir: Path
    examples_subdir: str  # where the applied example YAMLs are, relative to the set's folder
    api_version: str  # what the examples are written in, and what the goldens' DGDs/DCDs are read as
    operator_version: str  # `--operator-version` upstream ran with
    allowed_file: Path
    known_gaps_file: Path
    # True when a missing golden file means upstream's API server refused the example (admission):
    # the example is then compared with an empty golden, so whatever this operator keeps shows.
    missing_is_refused: bool
    # Settings of upstream's run in this set only, as this operator's flags (the set's README).
    operator_flags: tuple[str, ...] = ()

    def root(self) -> Path:
        override = os.environ.get(self.env)
        return Path(override).resolve() if override else self.default_dir

    def examples_dir(self) -> Path:
        return self.root() / self.examples_subdir if self.examples_subdir else self.root()


SET_DF888F68 = GoldenSet(
    name="df888f68",
    env="DYNAMO_UPSTREAM_EXAMPLES",
    default_dir=REPO_ROOT.parent / "shared" / "upstream-examples",
    examples_subdir="",
    api_version=V1ALPHA1,
    operator_version="1.0.0",
    allowed_file=HERE / "allowed.yaml",
    known_gaps_file=HERE / "known_gaps.yaml",
    missing_is_refused=False,
)
SET_2A6DA14C = GoldenSet(
    name="2a6da14c",
    env="DYNAMO_UPSTREAM_EXAMPLES_2A6DA14C",
    default_dir=REPO_ROOT.parent / "shared" / "upstream-examples-2a6da14c",
    # The examples as applied (image tags `my-tag`/`latest` made `1.5.0`, or upstream's admission
    # refuses every graph); the published ones under examples/ differ only in those tags.
    examples_subdir="examples-applied",
    api_version=V1BETA1,
    operator_version="1.5.0",
    allowed_file=HERE / "allowed-2a6da14c.yaml",
    known_gaps_file=HERE / "known_gaps-2a6da14c.yaml",
    missing_is_refused=True,
    # The platform chart's grove.terminationDelay "4h" (README, "Procedure"); df888f68 ran with 15m.
    operator_flags=("--grove-termination-delay=4h",),
)
SETS: tuple[GoldenSet, ...] = (SET_DF888F68, SET_2A6DA14C)

# Kept for callers that know one set only (the df888f68 one, compared first).
ENV_DIR = SET_DF888F68.env
DEFAULT_DIR = SET_DF888F68.default_dir


@dataclass(frozen=True, slots=True)
class Example:
    """One upstream example file: its stem names it in every report and list entry."""

    name: str
    yaml_path: Path
    golden_set: GoldenSet = SET_DF888F68

    def golden_path(self, shape: str) -> Path:
        return self.golden_set.root() / shape / f"{self.name}.json"


def examples_dir(golden_set: GoldenSet = SET_DF888F68) -> Path:
    """The set's folder (`$<env>` when set)."""
    return golden_set.root()


def discover(shapes: tuple[str, ...], golden_set: GoldenSet = SET_DF888F68) -> list[Example]:
    """Every example YAML, each with a golden for every shape (unless a missing one means refused);
    raises GoldensMissing otherwise."""
    root = golden_set.examples_dir()
    hint = f"set {golden_set.env} to the folder holding upstream's examples and golden*/ (see README)"
    if not root.is_dir():
        raise GoldensMissing(f"upstream examples ({golden_set.name}) not found at {root}: {hint}")
    examples = [Example(p.stem, p, golden_set) for p in sorted(root.glob("*.yaml"))]
    if not examples:
        raise GoldensMissing(f"no example *.yaml in {root}: {hint}")
    if golden_set.missing_is_refused:
        absent = [str(golden_set.root() / s) for s in shapes if not (golden_set.root() / s).is_dir()]
    else:
        absent = [
            str(ex.golden_path(s)) for ex in examples for s in shapes if not ex.golden_path(s).is_file()
        ]
    if absent:
        raise GoldensMissing(f"{len(absent)} golden file(s) missing, first {absent[0]}: {hint}")
    return examples


def load_golden(example: Example, shape: str) -> dict[str, Obj]:
    """The golden as written: `Kind/name` → object; empty for an example upstream refused."""
    path = example.golden_path(shape)
    if example.golden_set.missing_is_refused and not path.is_file():
        return {}
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise GoldensMissing(f"{path}: expected an object keyed by Kind/name")
    return data
