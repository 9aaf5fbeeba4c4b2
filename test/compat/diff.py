"""Two sets of objects (upstream's golden, ours) compared object by object and leaf by leaf."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from compat import normalise
from compat.paths import flatten, is_within

Obj = dict[str, Any]
Change = Literal["only-golden", "only-ours", "changed"]
ABSENT: Any = None  # the value shown for the side a difference is missing from

# Upstream names rolling-update workers `<dgd>-<svc>-<hash8>` (and their PodGroups `<…>-<hash8>-<i>`).
_HASH_SEGMENT = re.compile(r"-[0-9a-f]{8}(?=-|$)")
_QUANTITY = re.compile(r"([+-]?[0-9.]+)([a-zA-Z]*)")
_SUFFIX: dict[str, Decimal] = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    **{p: Decimal(10) ** (3 * (i + 1)) for i, p in enumerate("kMGTPE")},
    **{f"{p}i": Decimal(2) ** (10 * (i + 1)) for i, p in enumerate("KMGTPE")},
}
_QUANTITY_PATH = re.compile(r".*(\.(limits|requests)\[[^\]]+\]|\.(limits|requests)\.[a-z-]+|\.sizeLimit)")


@dataclass(frozen=True, slots=True)
class Difference:
    """One thing that differs. `path` is `Kind/name` for a whole object, else `Kind/name:field`."""

    path: str
    change: Change
    golden: Any = ABSENT
    ours: Any = ABSENT


@dataclass(slots=True)
class Comparison:
    objects: int = 0
    fields: int = 0
    differences: list[Difference] = field(default_factory=list)


def unhashed(name: str) -> str:
    return _HASH_SEGMENT.sub("", name)


def pair_objects(golden: Mapping[str, Obj], ours: Mapping[str, Obj]) -> list[tuple[str | None, str | None]]:
    """(golden key, our key) pairs: same key first; then, per kind, names equal once every 8-hex
    segment is dropped (a worker named with another hash, or without one, is still that worker, and
    comparing its fields says far more than "one missing, one extra"). Ambiguous matches stay apart."""
    pairs: list[tuple[str | None, str | None]] = [(k, k) for k in sorted(golden) if k in ours]
    left = [k for k in sorted(golden) if k not in ours]
    right = [k for k in sorted(ours) if k not in golden]
    by_base: dict[str, list[str]] = {}
    for k in right:
        by_base.setdefault(unhashed(k), []).append(k)
    golden_bases = [unhashed(k) for k in left]
    for k in left:
        base = unhashed(k)
        candidates = by_base.get(base, [])
        if len(candidates) == 1 and golden_bases.count(base) == 1:
            pairs.append((k, candidates[0]))
            right.remove(candidates[0])
        else:
            pairs.append((k, None))
    pairs += [(None, k) for k in right]
    return pairs


def _empty(value: Any) -> bool:
    return value is None or value in ("", {}, [])


def _quantity(value: Any) -> Decimal | None:
    match = _QUANTITY.fullmatch(str(value))
    if not match or match.group(2) not in _SUFFIX:
        return None
    try:
        return Decimal(match.group(1)) * _SUFFIX[match.group(2)]
    except InvalidOperation:
        return None


def _same(path: str, a: Any, b: Any) -> bool:
    if a == b:
        return True
    if _QUANTITY_PATH.fullmatch(path):  # the API server canonicalises quantities ("1000m" → "1")
        qa, qb = _quantity(a), _quantity(b)
        return qa is not None and qa == qb
    return False


def compare_object(key: str, golden: Obj, ours: Obj) -> tuple[int, list[Difference]]:
    """Leaves compared and the ones that differ. A leaf that is empty (`""`, `{}`, `[]`, null) on the
    side that has it and absent on the other is the same object: Go's omitempty drops empty values
    on the way out of the API server, and a field we leave out is read back as its zero value. A list
    item (env var, port, owner, container) only one side has is one difference, reported whole."""
    g_items: dict[str, Any] = {}
    o_items: dict[str, Any] = {}
    g = flatten(normalise.golden(golden), items=g_items)
    o = flatten(normalise.ours(ours), items=o_items)
    # Outermost first, so an item missing whole is reported at its own path, not at a nested one.
    g_only = sorted((p for p in g_items if p not in o_items), key=len)
    o_only = sorted((p for p in o_items if p not in g_items), key=len)
    out: list[Difference] = []
    compared = 0
    reported: set[str] = set()
    for leaf in sorted(set(g) | set(o)):
        if (leaf not in o and _empty(g[leaf])) or (leaf not in g and _empty(o[leaf])):
            continue
        path = f"{key}:{leaf}"
        if leaf in g and leaf in o:
            compared += 1
            if not _same(leaf, g[leaf], o[leaf]):
                out.append(Difference(path, "changed", golden=g[leaf], ours=o[leaf]))
            continue
        in_golden = leaf in g
        items, missing = (g_items, g_only) if in_golden else (o_items, o_only)
        whole = next((p for p in missing if is_within(leaf, p)), None)
        if whole in reported:
            continue
        compared += 1
        if whole is not None:
            reported.add(whole)
            path, value = f"{key}:{whole}", items[whole]
        else:
            value = g[leaf] if in_golden else o[leaf]
        if in_golden:
            out.append(Difference(path, "only-golden", golden=value))
        else:
            out.append(Difference(path, "only-ours", ours=value))
    return compared, out


def compare(golden: Mapping[str, Obj], ours: Mapping[str, Obj]) -> Comparison:
    """Every object of both sides; a paired object's path is named after the golden's key."""
    result = Comparison()
    for gk, ok in pair_objects(golden, ours):
        result.objects += 1
        if gk is None:
            assert ok is not None
            result.differences.append(Difference(ok, "only-ours", ours=ok))
            continue
        if ok is None:
            result.differences.append(Difference(gk, "only-golden", golden=gk))
            continue
        compared, diffs = compare_object(gk, golden[gk], ours[ok])
        result.fields += compared
        result.differences += diffs
    return result


def render_value(value: Any, limit: int = 0) -> str:
    """A leaf as one line: strings as they are, anything else as compact JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    if limit and len(text) > limit:
        return text[: limit - 1] + "…"
    return text
