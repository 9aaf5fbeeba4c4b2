"""docs/operating/flags.md names every flag the operator takes, so a new flag cannot go undocumented."""

from __future__ import annotations

import re
from pathlib import Path

from dynamo_operator.flags import build_parser

FLAGS_PAGE = Path(__file__).resolve().parents[3] / "docs" / "operating" / "flags.md"
# Printed by --help and documented elsewhere (getting started), not operator settings.
NOT_SETTINGS = {"--help", "--version"}


def _documented(page: str) -> set[str]:
    """Flags as the page spells them in code spans: `--x`, `--[no-]x` (both forms), and shorthands
    on one line (`--leader-election-lease-duration`, `-renew-deadline`: the first one's prefix)."""
    found: set[str] = set()
    for line in page.splitlines():
        prefix = ""
        for span in re.findall(r"`(-[-\[\]A-Za-z0-9]+)", line):
            if span.startswith("--[no-]"):
                found |= {"--" + span[7:], "--no-" + span[7:]}
            elif span.startswith("--"):
                found.add(span)
                prefix = span.rsplit("-", 2)[0]
            elif prefix:
                found.add(prefix + span)
    return found


def test_every_flag_of_the_operator_is_on_the_flags_page() -> None:
    flags = {
        option
        for action in build_parser()._actions
        for option in action.option_strings
        if option.startswith("--")
    }
    assert flags - NOT_SETTINGS - _documented(FLAGS_PAGE.read_text()) == set()
