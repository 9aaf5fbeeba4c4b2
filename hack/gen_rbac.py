#!/usr/bin/env python3
"""Write the optional APIs' RBAC rules into config/rbac/role.yaml from their table
(internal/optional_api_table.py), between the two marker lines; `--check` only compares.

Part of `make manifests`, before `make chart-sync` copies role.yaml into the Helm chart. The rest of
role.yaml is written by hand: only the marked block is generated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dynamo_operator.internal.optional_api_table import Rule, rbac_rules

# Run as a script under PYTHONSAFEPATH (the Makefile sets it) its own directory is not on sys.path.
if str(Path(__file__).parent) not in sys.path:
    sys.path.append(str(Path(__file__).parent))
import generated_files

REPO = Path(__file__).resolve().parent.parent
ROLE = REPO / "config" / "rbac" / "role.yaml"
BEGIN = "  # BEGIN optional APIs (make manifests writes them from internal/optional_api_table.py)"
END = "  # END optional APIs"
WIDTH = 104  # comment lines wrap here, as the hand-written ones do


def _flow(items: tuple[str, ...]) -> str:
    return "[" + ", ".join(item or '""' for item in items) + "]"


def _comment(text: str) -> list[str]:
    lines, line = [], "  #"
    for word in text.split():
        if len(line) + 1 + len(word) > WIDTH:
            lines.append(line)
            line = "  #"
        line += " " + word
    return [*lines, line]


def render_rule(rule: Rule) -> list[str]:
    """One rule in role.yaml's style: flow sequences, its reason as a comment above it."""
    return [
        *(_comment(rule.why) if rule.why else []),
        f"  - apiGroups: {_flow((rule.group,))}",
        f"    resources: {_flow(rule.resources)}",
        f"    verbs: {_flow(rule.verbs)}",
    ]


def block() -> list[str]:
    """The generated lines, markers included."""
    return [BEGIN, *(line for rule in rbac_rules() for line in render_rule(rule)), END]


def generated(text: str) -> str:
    """`text` (role.yaml) with its marked block rewritten; ValueError when the markers are missing."""
    lines = text.splitlines()
    try:
        start, stop = lines.index(BEGIN), lines.index(END)
    except ValueError:
        raise ValueError(f"{ROLE.relative_to(REPO)} lacks the marker lines of the optional APIs") from None
    return "\n".join([*lines[:start], *block(), *lines[stop + 1 :]]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when role.yaml differs from the table")
    args = parser.parse_args(argv)
    return generated_files.sync({ROLE: generated(ROLE.read_text())}, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
