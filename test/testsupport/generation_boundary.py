"""The generation boundary read from the source: the functions of internal/dynamo that the layers
calling into it (controllers, operator, the rest of internal) import, and which of them are still
annotated with `Any`.

Read statically (ast), so a name is judged by what it is spelt as and what it is an alias of: `Any`
itself, or a module-level alias whose value mentions it (`Obj = dict[str, Any]`, `ReadObj as Obj`),
followed through imports inside the package. A function is imported either by name
(`from ...status.readiness import graph_status`) or through its module
(`from ...status import readiness`, then `readiness.graph_status`); a name a module only re-exports
is followed to where it is defined.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "dynamo_operator"
GENERATION = f"{PACKAGE}.internal.dynamo"
# Where the callers live, relative to the repository root; internal/dynamo itself is not one.
CALLER_DIRS = ("controllers", "operator", "internal")


@dataclass(frozen=True, slots=True)
class Boundary:
    """What `scan` found: every boundary function by its name under internal/dynamo
    (`status.readiness.graph_status`), and those whose annotations mention Any."""

    functions: frozenset[str]
    with_any: frozenset[str]


class _Source:
    """The package's modules as parsed from a checkout at `root` (the directory holding
    controllers/, internal/, ...: the package's own root, as installed in editable mode)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, ast.Module | None] = {}

    def path(self, module: str) -> Path | None:
        if module != PACKAGE and not module.startswith(f"{PACKAGE}."):
            return None
        rel = Path(*module.split(".")[1:])
        for candidate in (self.root / rel.with_suffix(".py"), self.root / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def is_module(self, module: str) -> bool:
        return self.path(module) is not None

    def tree(self, module: str) -> ast.Module | None:
        if module not in self._trees:
            path = self.path(module)
            self._trees[module] = ast.parse(path.read_text(), str(path)) if path is not None else None
        return self._trees[module]

    def definition(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.stmt] | None:
        """The top-level statement defining `name` in `module` (a def, a class or an alias),
        following `from X import name` into the package; None for anything else."""
        tree = self.tree(module)
        if tree is None or depth > 20:
            return None
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
                return module, node
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets
            ):
                return module, node
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id == name
            ):
                return module, node
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return self.definition(node.module, alias.name, depth + 1)
        return None

    def imported_from(self, module: str, name: str) -> str | None:
        """The module `name` comes from when `module` imports it (`from typing import Any`)."""
        tree = self.tree(module)
        for node in tree.body if tree is not None else ():
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        return f"{node.module}.{alias.name}"
        return None


def _names(annotation: ast.expr) -> Iterator[str]:
    """Every name an annotation spells, string annotations included (`"dict[str, Any] | None"`)."""
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                yield from _names(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                continue


def _is_any(source: _Source, module: str, name: str, seen: frozenset[tuple[str, str]] = frozenset()) -> bool:
    """`name`, as `module` spells it, is typing's Any or an alias of something mentioning it."""
    if (module, name) in seen:
        return False
    origin = source.imported_from(module, name)
    if origin in ("typing.Any", "typing_extensions.Any"):
        return True
    if name == "Any" and origin is None:
        return True  # `typing.Any` spelt through the module
    found = source.definition(module, name)
    if found is None:
        return False
    where, node = found
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        return any(_is_any(source, where, n, seen | {(module, name)}) for n in _names(node.value))
    return False


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    a = fn.args
    params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p is not None)]
    return [p.annotation for p in params if p.annotation is not None] + (
        [fn.returns] if fn.returns is not None else []
    )


def _imports(source: _Source, tree: ast.Module) -> set[tuple[str, str]]:
    """(module, name) of each internal/dynamo name a caller's module uses: imported by name, or
    reached as an attribute of an imported internal/dynamo module."""
    used: set[tuple[str, str]] = set()
    modules: dict[str, str] = {}  # local name → internal/dynamo module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module != GENERATION and not node.module.startswith(f"{GENERATION}."):
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if source.is_module(full):
                    modules[alias.asname or alias.name] = full
                else:
                    used.add((node.module, alias.name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.startswith(f"{GENERATION}."):
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            used.add((modules[node.value.id], node.attr))
    return used


def _callers(root: Path) -> Iterator[Path]:
    generation = root / "internal" / "dynamo"
    for top in CALLER_DIRS:
        for path in sorted((root / top).rglob("*.py")):
            if generation not in path.parents:
                yield path


def scan(root: Path) -> Boundary:
    """The boundary of the checkout at `root` (see the module docstring)."""
    source = _Source(root)
    used: set[tuple[str, str]] = set()
    for path in _callers(root):
        used |= _imports(source, ast.parse(path.read_text(), str(path)))
    functions: set[str] = set()
    with_any: set[str] = set()
    for module, name in used:
        found = source.definition(module, name)
        if found is None or not isinstance(found[1], ast.FunctionDef | ast.AsyncFunctionDef):
            continue  # a class, a constant or an alias: not a function of the boundary
        where, fn = found
        key = f"{where.removeprefix(GENERATION + '.')}.{fn.name}"
        functions.add(key)
        if any(_is_any(source, where, n) for ann in _annotations(fn) for n in _names(ann)):
            with_any.add(key)
    return Boundary(frozenset(functions), frozenset(with_any))
