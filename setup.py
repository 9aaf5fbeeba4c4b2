"""Package discovery for the folder → import-root mapping declared in pyproject.toml.

setuptools' own `packages.find` cannot prefix discovered names, so every package below each mapped
folder is listed here as `dynamo_operator.<folder>.<sub>`; new subpackages need no edit.
"""

from pathlib import Path

from setuptools import setup

ROOTS = {
    "dynamo_operator": "operator",
    "dynamo_operator.api": "api",
    "dynamo_operator.controllers": "controllers",
    "dynamo_operator.internal": "internal",
}


def discover() -> list[str]:
    found = []
    for name, folder in ROOTS.items():
        for init in sorted(Path(folder).rglob("__init__.py")):
            rel = init.parent.relative_to(folder).parts
            found.append(".".join((name, *rel)))
    return found


setup(packages=discover())
