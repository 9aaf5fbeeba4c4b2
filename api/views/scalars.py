"""JSON values as the views type them: what a schemaless field may hold, and two Kubernetes scalars."""

from __future__ import annotations

from typing import TypeAlias

# Any JSON value, for fields the API keeps as written (x-kubernetes-preserve-unknown-fields).
JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"
# A resource quantity ("8Gi", "500m", or a bare number) and an int-or-string (a port name or number).
Quantity: TypeAlias = "str | int | float"
IntOrString: TypeAlias = "int | str"
