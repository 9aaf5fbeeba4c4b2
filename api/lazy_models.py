"""Models loaded on first use: the `__getattr__` of an API version package (PEP 562).

The running operator reads a version's constants and enumerations, never a model, so it never loads
pydantic; the CRD generator, the offline tools and the tests load the models by naming one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def models_on_first_use(package: str) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: a name is looked up in `<package>.models`, imported at
    the first lookup, and kept in the package. Lowercase names are submodules, never models: asking
    for one does not load them."""

    def getattr_(name: str) -> Any:
        if name.startswith("_") or name.islower():
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f"{package}.models")
        try:
            value = getattr(module, name)
        except AttributeError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        setattr(importlib.import_module(package), name, value)
        return value

    return getattr_
