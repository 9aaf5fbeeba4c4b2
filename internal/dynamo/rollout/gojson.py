"""Go's encoding/json for typed values: the exact bytes a Go program writes when it marshals a struct it
decoded from our JSON. Needed wherever a hash must equal one a Go operator computed (workerhash.py).

A type is described by a descriptor: a scalar name (`string`, `bool`, `int`, `float`, `quantity`,
`intorstring`, `time`, `duration`, `raw`, `bytes`), `{"ptr": d}`, `{"slice": d}`, `{"map": d}` (string
keys) or `{"struct": name}`; a struct is its fields in encoding order, each `(json name, omitempty,
descriptor)`. The Kubernetes core types come from `go_structs_core_v1.json`, generated from the Go
types by reflection (`cd hack/gostructs && go run . > ../../internal/dynamo/rollout/go_structs_core_v1.json`);
callers add their own structs.

What Go does, and this module therefore does:
- fields in declaration order (embedded structs flattened in place), unknown input fields dropped;
- `omitempty` drops false, 0, "", nil pointers and empty slices/maps, never a struct value (so an
  absent Quantity is written "0", an absent Container.resources `{}`); without it an absent slice,
  map or pointer is `null`;
- map keys sorted; strings escaped as Go does, `<`, `>`, `&`, U+2028 and U+2029 included;
- quantities in canonical form (quantity.py), int-or-string as whichever it is.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from json.encoder import encode_basestring
from typing import Any

from dynamo_operator.internal.dynamo.rollout.quantity import canonical_quantity

Descriptor = str | Mapping[str, Any]
Field = tuple[str, bool, Descriptor]
Structs = Mapping[str, Sequence[Field]]

CORE_V1_FILE = "go_structs_core_v1.json"
# Kinds that are Go structs (or wrap one): never "empty" for omitempty, zero value written out.
_STRUCT_SCALARS = frozenset({"quantity", "intorstring", "time", "duration", "raw"})
_ZERO = {
    "string": '""',
    "bool": "false",
    "int": "0",
    "float": "0",
    "quantity": '"0"',
    "intorstring": "0",
    "time": "null",
    "duration": '"0s"',
    "raw": "null",
    "bytes": "null",
}
_GO_ONLY_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def optional(name: str, desc: Descriptor) -> Field:
    """A struct field tagged `omitempty`."""
    return (name, True, desc)


def required(name: str, desc: Descriptor) -> Field:
    """A struct field without `omitempty`."""
    return (name, False, desc)


def pointer_to(struct: str) -> Descriptor:
    """A pointer to the named struct."""
    return {"ptr": {"struct": struct}}


@functools.cache
def core_v1_structs() -> dict[str, tuple[Field, ...]]:
    """The Kubernetes core/v1 struct table (package data, read once)."""
    text = resources.files(__package__).joinpath(CORE_V1_FILE).read_text()
    doc = json.loads(text)
    return {name: tuple((f[0], bool(f[1]), f[2]) for f in fields) for name, fields in doc["structs"].items()}


def core_v1_source() -> str:
    """Which k8s.io/api the core/v1 table was generated from, e.g. "k8s.io/api v0.34.3"."""
    doc = json.loads(resources.files(__package__).joinpath(CORE_V1_FILE).read_text())
    return str(doc["source"])


def go_string(value: str) -> str:
    """A JSON string as Go writes it (Python's escapes plus Go's HTML-safe ones)."""
    return encode_basestring(value).translate(_GO_ONLY_ESCAPES)


def _go_number(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    number = float(value)
    return str(int(number)) if number.is_integer() and abs(number) < 1e21 else repr(number)


def _raw(value: Any) -> str:
    # An unstructured value: the API server hands it back with sorted keys, Go compacts it as is.
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.translate(_GO_ONLY_ESCAPES)


def is_empty(value: Any, desc: Descriptor) -> bool:
    """Go's `omitempty` test on the value a Go program would have decoded from `value`."""
    if isinstance(desc, str):
        if value is None:
            return desc not in _STRUCT_SCALARS
        if desc in _STRUCT_SCALARS:
            return False
        if desc in ("string", "bytes"):
            return bool(value == "")
        if desc == "bool":
            return value is False
        return bool(value == 0)
    if "struct" in desc:
        return False
    if "ptr" in desc:
        return value is None
    return value is None or len(value) == 0  # slice, map


def encode(value: Any, desc: Descriptor, structs: Structs) -> str:
    """`value` (decoded JSON; None for absent) as Go marshals the typed value it decodes into."""
    if isinstance(desc, str):
        return _scalar(value, desc)
    if "ptr" in desc:
        return "null" if value is None else encode(value, desc["ptr"], structs)
    if "slice" in desc:
        if value is None:
            return "null"
        return "[" + ",".join(encode(item, desc["slice"], structs) for item in value) + "]"
    if "map" in desc:
        if value is None:
            return "null"
        items = (f"{go_string(str(k))}:{encode(value[k], desc['map'], structs)}" for k in sorted(value))
        return "{" + ",".join(items) + "}"
    return encode_struct(value or {}, structs[desc["struct"]], structs)


def encode_struct(value: Mapping[str, Any], fields: Sequence[Field], structs: Structs) -> str:
    """A struct: its fields in order, `omitempty` ones left out when empty, unknown keys ignored."""
    parts = []
    for name, omitempty, desc in fields:
        item = value.get(name)
        if omitempty and is_empty(item, desc):
            continue
        # JSON field names are Go identifiers: nothing in them needs escaping.
        parts.append(f'"{name}":{encode(item, desc, structs)}')
    return "{" + ",".join(parts) + "}"


def _scalar(value: Any, kind: str) -> str:
    if value is None:
        return _ZERO[kind]
    match kind:
        case "string" | "time" | "duration" | "bytes":
            return go_string(str(value))
        case "bool":
            return "true" if value else "false"
        case "int" | "float":
            return _go_number(value)
        case "quantity":
            return go_string(canonical_quantity(str(value)))
        case "intorstring":
            return _go_number(value) if isinstance(value, int) else go_string(str(value))
        case "raw":
            return _raw(value)
    raise ValueError(f"unknown Go type descriptor {kind!r}")
