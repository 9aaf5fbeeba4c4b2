"""Settings shared by every test session (unit, integration, e2e).

PyYAML's `safe_load`/`safe_load_all` use its pure-Python parser, which reads about half a megabyte a second:
the tests read the CRDs, kustomize's and helm's renders (over a megabyte each) dozens of times, and that
parsing was a tenth of the unit session's time. libyaml's `CSafeLoader` (shipped in PyYAML's wheels)
resolves the same tags the same way and is about six times faster, so the tests parse with it. Only the
loaders change: the dumpers, whose output the staleness tests compare byte for byte, stay as they are.
"""

from __future__ import annotations

import functools

import yaml

if hasattr(yaml, "CSafeLoader"):  # a PyYAML built without libyaml keeps its own parser
    yaml.safe_load = functools.partial(yaml.load, Loader=yaml.CSafeLoader)  # type: ignore[assignment]
    yaml.safe_load_all = functools.partial(yaml.load_all, Loader=yaml.CSafeLoader)  # type: ignore[assignment]
