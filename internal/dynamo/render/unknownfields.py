"""Unknown fields, found as the API server finds them: by walking an object against the CRD's structural
schema (the one `make manifests` generates). Pure.

kubectl sends `fieldValidation=Strict` by default, so the API server refuses an object naming a field its
schema does not declare, with `unknown field "spec.services.Worker.replica"`. Offline tools must say the
same, or a typo that `kubectl apply` refuses would render fine (and one the API server prunes would
silently vanish). Subtrees marked `x-kubernetes-preserve-unknown-fields` and schemas without
`properties` (free-form objects, the root `metadata`) accept anything, as in the API server.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def unknown_fields(obj: Any, schema: Mapping[str, Any], path: str = "") -> list[str]:
    """Dotted paths of the fields in `obj` that `schema` does not declare, in document order."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return []
    out: list[str] = []
    if isinstance(obj, Mapping):
        properties = schema.get("properties")
        additional = schema.get("additionalProperties")
        for key, value in obj.items():
            where = _join(path, str(key))
            if isinstance(properties, Mapping) and properties:
                if key in properties:
                    out += unknown_fields(value, properties[key], where)
                elif isinstance(additional, Mapping):
                    out += unknown_fields(value, additional, where)
                else:
                    out.append(where)
            elif isinstance(additional, Mapping):
                out += unknown_fields(value, additional, where)
    elif isinstance(obj, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(obj):
            out += unknown_fields(item, schema["items"], f"{path}[{i}]")
    return out
