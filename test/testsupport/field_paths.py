"""The field paths refusals name (api/conversion/paths.py), taken apart: dots between fields, and
after a field any number of `[...]` selectors (an index, `name=<entry>`, or a map key)."""

from __future__ import annotations

import re

_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[^\]]*\])*)")
_SELECTOR = re.compile(r"\[([^\]]*)\]")


def segments(path: str) -> list[tuple[str, list[str]]]:
    """(field, its selectors) for each field of `path`."""
    return [(key, _SELECTOR.findall(brackets)) for key, brackets in _SEGMENT.findall(path)]
