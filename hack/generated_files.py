"""Write generated files, or with `--check` only report the ones that differ from what is committed.

Every hack/ generator ends the same way: it has computed the text each file should hold, and either
writes it (`make manifests`) or fails when a committed copy is stale (`make lint`, unit tests). That
ending lives here so that the generators agree on what "stale" means and how it is reported.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def stale(files: Mapping[Path, str]) -> list[Path]:
    """The files whose committed text differs from the generated one (missing files count as stale)."""
    return [path for path, text in files.items() if not path.exists() or path.read_text() != text]


def sync(files: Mapping[Path, str], *, check: bool, fix: str = "make manifests") -> int:
    """Write `files`; with `check`, print the stale ones and return 1 (`fix`: the command to update them)."""
    if check:
        old = stale(files)
        if old:
            print(f"stale (run {fix}): " + ", ".join(_shown(p) for p in old), file=sys.stderr)
            return 1
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {_shown(path)} ({len(text)} bytes)")
    return 0
