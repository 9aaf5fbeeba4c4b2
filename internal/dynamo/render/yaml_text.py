"""YAML text that kubectl reads back as the same JSON.

PyYAML quotes the YAML 1.1 booleans it knows (yes/no/on/off/true/false), but not the one-letter
forms `y`, `Y`, `n` and `N`, which the YAML parser behind kubectl (sigs.k8s.io/yaml) also reads as
booleans. An env value "n" written plain would come back as `false` and be refused as a string
field. This dumper quotes those four, and otherwise writes what `yaml.safe_dump_all` writes.
"""

from __future__ import annotations

from collections.abc import Iterable

import yaml

# Plain scalars that YAML 1.1 readers (kubectl's) take for booleans and PyYAML leaves unquoted.
_ONE_LETTER_BOOLEANS = frozenset({"y", "Y", "n", "N"})


class _KubectlSafeDumper(yaml.SafeDumper):
    """SafeDumper that never writes a string kubectl would read as a boolean."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if value in _ONE_LETTER_BOOLEANS:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_KubectlSafeDumper.add_representer(str, _represent_str)


def dump_all(documents: Iterable[object], *, sort_keys: bool = False) -> str:
    """Multi-document YAML, block style, long lines kept whole (as `render` has always written it)."""
    return yaml.dump_all(
        documents,
        Dumper=_KubectlSafeDumper,
        sort_keys=sort_keys,
        default_flow_style=False,
        width=1000,
        allow_unicode=False,
    )
