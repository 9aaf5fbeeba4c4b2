"""The samples of config/samples and what their headers state.

Each sample starts with a comment that says what it needs (`# Needs: ...`) and what the project's local
control plane shows when it is applied with the other samples and nothing else
(`# Local control plane: <Condition>=<True|False>, reason <Reason>` or `... state <State>`); a line
starting `#   ` continues the one above.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

SAMPLES = Path(__file__).resolve().parents[2] / "config" / "samples"
STATEMENT = re.compile(
    r"^(?:(?P<type>\w+)=(?P<status>True|False), reason (?P<reason>\w+)|state (?P<state>\w+))"
)


def sample_files() -> list[Path]:
    """The samples in the order config/samples/kustomization.yaml lists them."""
    listed = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())["resources"]
    return [SAMPLES / name for name in listed]


def header(path: Path, key: str) -> str:
    """The text of `# <key>: ...` in the file's leading comment, with its continuation lines."""
    found: list[str] = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(f"# {key}: "):
            found = [line.removeprefix(f"# {key}: ")]
        elif found and line.startswith("#   "):
            found.append(line[1:])
        elif found:
            break
    return " ".join(" ".join(found).split())


def statement(path: Path) -> re.Match[str] | None:
    """The checkable part of the `Local control plane:` line."""
    return STATEMENT.match(header(path, "Local control plane"))


def holds(obj: dict[str, Any] | None, stated: re.Match[str]) -> bool:
    """Whether the object shows what the statement says."""
    if obj is None:
        return False
    status = obj.get("status") or {}
    if stated["state"]:
        return bool(status.get("state") == stated["state"])
    for cond in status.get("conditions") or ():
        if cond.get("type") == stated["type"]:
            return (cond.get("status"), cond.get("reason")) == (stated["status"], stated["reason"])
    return False
