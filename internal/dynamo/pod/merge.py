"""Merge helpers with one documented semantics, used for every user-over-default layering.

`override(base, user)`: maps merge recursively (user wins per key); a non-empty user list replaces
the base list whole; an empty user list or a missing/None user value keeps the base; any other user
value replaces. Probes are special: their handler (httpGet/exec/tcpSocket/grpc) is one choice, so a
user handler replaces the default handler instead of being merged next to it (upstream's field-wise
merge could produce a probe with two handlers, which the API server rejects).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree

PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
PROBE_FIELDS = ("livenessProbe", "readinessProbe", "startupProbe")


def override(base: Mapping[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
    """Return a new dict: `user` layered over `base` (neither input is modified)."""
    out = copy_tree(dict(base))
    for key, value in user.items():
        if value is None:
            continue
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = override_probe(current, value) if key in PROBE_FIELDS else override(current, value)
        elif isinstance(value, list):
            if value:
                out[key] = copy_tree(value)
        else:
            out[key] = copy_tree(value)
    return out


def override_probe(base: Mapping[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
    """Layer a partial user probe over a default one; a user handler of another kind replaces the
    default handler (one of the same kind is merged field by field)."""
    chosen = {h for h in PROBE_HANDLERS if user.get(h) is not None}
    if chosen:
        base = {k: v for k, v in base.items() if k not in PROBE_HANDLERS or k in chosen}
    return override(base, user)


def merge_env(low: Iterable[Mapping[str, Any]], high: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Union of two env lists by name, `high` winning; sorted by name so the result is order-free."""
    merged: dict[str, dict[str, Any]] = {}
    for var in low:
        merged[str(var["name"])] = dict(var)
    for var in high:
        merged[str(var["name"])] = dict(var)
    return [merged[name] for name in sorted(merged)]


def env(name: str, value: str) -> dict[str, Any]:
    """A literal env var."""
    return {"name": name, "value": value}


def field_env(name: str, field_path: str) -> dict[str, Any]:
    """An env var from the downward API."""
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def dedupe_by_name(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Keep the first item of each name, in order."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for item in items:
        name = str(item.get("name"))
        if name not in seen:
            seen.add(name)
            out.append(dict(item))
    return out
