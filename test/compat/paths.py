"""Objects flattened to `path → leaf`, with paths a person can read and a list entry can name.

A path is `Kind/name:field.path`: map keys that are plain identifiers join with `.`, any other key
(labels, annotations, resource names) goes in brackets: `metadata.labels[nvidia.com/dynamo-component]`.
Lists whose items all carry a distinct identity are keyed by it, so inserting one env var does not
shift every later one: `containers[main].env[NATS_SERVER]`, `volumeMounts[/dev/shm]`,
`ownerReferences[DynamoComponentDeployment]`. Other lists of objects are indexed (`rules[0]`); lists
of scalars (command, args, finalizers) are one leaf, since their order is their meaning.
"""

from __future__ import annotations

import re
from typing import Any

Leaves = dict[str, Any]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The identity of a list item, by the list's field name; first match wins. `name` covers containers,
# env, ports, volumes, cliques, scaling groups, subjects; the others are the lists where it does not.
_LIST_KEYS: dict[str, tuple[str, ...]] = {
    "volumeMounts": ("mountPath",),
    "ownerReferences": ("kind",),
    "envFrom": ("secretRef.name", "configMapRef.name"),
    "tolerations": ("key",),
}
_DEFAULT_KEYS: tuple[str, ...] = ("name",)


def join(base: str, key: str) -> str:
    if _IDENT.fullmatch(key):
        return f"{base}.{key}" if base else key
    return f"{base}[{key}]"


def _item_key(item: Any, fields: tuple[str, ...]) -> str | None:
    if not isinstance(item, dict):
        return None
    for dotted in fields:
        value: Any = item
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str | int) and str(value):
            return str(value)
    return None


def _list_keys(field: str, items: list[Any]) -> list[str] | None:
    """Identities for each item, or None when some item has none or two share one."""
    fields = _LIST_KEYS.get(field, _DEFAULT_KEYS)
    keys = [_item_key(item, fields) for item in items]
    if any(k is None for k in keys) or len(set(keys)) != len(keys):
        return None
    return [str(k) for k in keys]


def flatten(value: Any, base: str = "", field: str = "", items: Leaves | None = None) -> Leaves:
    """Every leaf of `value` under `base`. Empty maps and lists are leaves too (`emptyDir: {}` means
    something), so absence and emptiness stay distinguishable here; `diff` decides what they mean.
    `items`, when given, collects every list item that is a map or list, whole, by its path: a
    difference in an item only one side has is reported once, there."""
    out: Leaves = {}
    if isinstance(value, dict) and value:
        for key in sorted(value):
            out.update(flatten(value[key], join(base, str(key)), str(key), items))
    elif isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        keys = _list_keys(field, value)
        for i, item in enumerate(value):
            path = f"{base}[{keys[i] if keys else i}]"
            if items is not None:
                items[path] = item
            out.update(flatten(item, path, field, items))
    else:
        out[base] = value
    return out


def is_within(path: str, ancestor: str) -> bool:
    return path == ancestor or path.startswith((f"{ancestor}.", f"{ancestor}["))


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path pattern as a regex. `**` matches anything; `*` matches within one step: outside
    brackets it stops at `.`, `:`, `[` and `]`, inside brackets only at `]` (keys hold dots)."""
    out, depth, i = [], 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append(r"[^\]]*" if depth else r"[^.:\[\]]*")
        else:
            depth += {"[": 1, "]": -1}.get(ch, 0)
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))
