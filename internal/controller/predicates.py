"""Event filters: decide, per watch event, whether it should enqueue anything.

A predicate answers for the three event kinds. Build new ones with `Funcs` (unset kinds pass) and
combine with `any_of` / `all_of` / `negate`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from dynamo_operator.internal.cache.interface import Obj


class Predicate(Protocol):
    """True lets the event through."""

    def create(self, obj: Obj) -> bool: ...
    def update(self, old: Obj, new: Obj) -> bool: ...
    def delete(self, obj: Obj) -> bool: ...


def _yes(*_: Obj) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Funcs:
    """A predicate from plain functions; an event kind without a function passes."""

    on_create: Callable[[Obj], bool] = _yes
    on_update: Callable[[Obj, Obj], bool] = _yes
    on_delete: Callable[[Obj], bool] = _yes

    def create(self, obj: Obj) -> bool:
        return self.on_create(obj)

    def update(self, old: Obj, new: Obj) -> bool:
        return self.on_update(old, new)

    def delete(self, obj: Obj) -> bool:
        return self.on_delete(obj)


def _meta(obj: Obj, field: str) -> object:
    return obj.get("metadata", {}).get(field)


generation_changed: Predicate = Funcs(
    on_update=lambda old, new: _meta(old, "generation") != _meta(new, "generation")
)
"""Skips updates that leave metadata.generation alone: status writes, label/annotation edits and resyncs.
Caveat: a kind without a generation (most built-ins bump it only on spec) never passes an update."""

spec_changed: Predicate = Funcs(on_update=lambda old, new: old.get("spec") != new.get("spec"))
"""Passes updates whose spec differs as read. Beside `generation_changed` where the version a cache
holds has spec fields the stored version keeps outside its spec (in annotations): changing those
bumps no generation (internal/client/codec.py)."""

annotation_changed: Predicate = Funcs(
    on_update=lambda old, new: (_meta(old, "annotations") or {}) != (_meta(new, "annotations") or {})
)
"""Passes updates whose annotations differ."""

label_changed: Predicate = Funcs(
    on_update=lambda old, new: (_meta(old, "labels") or {}) != (_meta(new, "labels") or {})
)
"""Passes updates whose labels differ."""

resource_version_changed: Predicate = Funcs(
    on_update=lambda old, new: _meta(old, "resourceVersion") != _meta(new, "resourceVersion")
)
"""Skips resyncs (an update carrying the same resourceVersion)."""


@dataclass(frozen=True, slots=True)
class _Requirement:
    key: str
    op: str  # "in", "notin", "exists", "!"
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        match self.op:
            case "in":
                return labels.get(self.key) in self.values
            case "notin":
                return labels.get(self.key) not in self.values
            case "exists":
                return self.key in labels
            case _:
                return self.key not in labels


_SET_TERM = re.compile(r"^\s*([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ_TERM = re.compile(r"^\s*([\w./-]+)\s*(==|=|!=)\s*([\w./-]*)\s*$")
_EXISTS_TERM = re.compile(r"^\s*(!?)\s*([\w./-]+)\s*$")


def parse_selector(selector: str) -> list[_Requirement]:
    """Parse a label selector string (`a=b,c!=d,e,!f,g in (x,y)`) as the API server does."""
    terms = re.split(r",(?![^(]*\))", selector) if selector.strip() else []
    requirements = []
    for term in terms:
        if m := _SET_TERM.match(term):
            values = frozenset(v.strip() for v in m[3].split(",") if v.strip())
            requirements.append(_Requirement(m[1], m[2], values))
        elif m := _EQ_TERM.match(term):
            requirements.append(_Requirement(m[1], "notin" if m[2] == "!=" else "in", frozenset({m[3]})))
        elif m := _EXISTS_TERM.match(term):
            requirements.append(_Requirement(m[2], "!" if m[1] else "exists", frozenset()))
        else:
            raise ValueError(f"invalid label selector term {term!r} in {selector!r}")
    return requirements


def label_selector(selector: Mapping[str, str] | str) -> Predicate:
    """Passes events whose (new) object's labels match: a `matchLabels` mapping or a selector string."""
    requirements = (
        parse_selector(selector)
        if isinstance(selector, str)
        else [_Requirement(k, "in", frozenset({v})) for k, v in selector.items()]
    )

    def matches(obj: Obj) -> bool:
        labels = _meta(obj, "labels") or {}
        assert isinstance(labels, dict)
        return all(r.matches(labels) for r in requirements)

    return Funcs(on_create=matches, on_update=lambda _old, new: matches(new), on_delete=matches)


def any_of(*predicates: Predicate) -> Predicate:
    """Passes when at least one predicate passes."""
    return Funcs(
        on_create=lambda o: any(p.create(o) for p in predicates),
        on_update=lambda old, new: any(p.update(old, new) for p in predicates),
        on_delete=lambda o: any(p.delete(o) for p in predicates),
    )


def all_of(*predicates: Predicate) -> Predicate:
    """Passes when every predicate passes (an empty list passes)."""
    return Funcs(
        on_create=lambda o: all(p.create(o) for p in predicates),
        on_update=lambda old, new: all(p.update(old, new) for p in predicates),
        on_delete=lambda o: all(p.delete(o) for p in predicates),
    )


def negate(predicate: Predicate) -> Predicate:
    """Passes exactly what `predicate` blocks."""
    return Funcs(
        on_create=lambda o: not predicate.create(o),
        on_update=lambda old, new: not predicate.update(old, new),
        on_delete=lambda o: not predicate.delete(o),
    )


def _content(obj: Mapping[str, object]) -> tuple[object, ...]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    body = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
    return body, meta.get("labels"), meta.get("annotations"), meta.get("ownerReferences")


def _status_or_content(obj: Mapping[str, object]) -> tuple[object, ...]:
    meta = obj.get("metadata")
    generation = meta.get("generation") if isinstance(meta, Mapping) else None
    return (*_content(obj), obj.get("status"), generation)


class ChildPredicate:
    """Which events of an owned child are worth a reconcile of its owner.

    Create events are skipped: the owner created the child itself (after a restart the owners' own
    adds reconcile everything). Updates pass when what the owner reads changed: the child's content
    (someone edited it) and, when `status` is set, its status (readiness drives the owner's).
    Deletes always pass, so a deleted child is recreated.
    """

    def __init__(self, *, status: bool) -> None:
        self._view = _status_or_content if status else _content

    def create(self, obj: Obj) -> bool:
        return False

    def update(self, old: Obj, new: Obj) -> bool:
        return self._view(old) != self._view(new)

    def delete(self, obj: Obj) -> bool:
        return True


CHILD_STATUS_CHANGED: Predicate = ChildPredicate(status=True)
"""For children whose status the owner reads (workloads, sub-resources it waits on)."""

CHILD_CONTENT_CHANGED: Predicate = ChildPredicate(status=False)
"""For children the owner only writes."""
