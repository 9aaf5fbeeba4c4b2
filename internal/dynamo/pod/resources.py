"""Translation of the Dynamo `resources` block into a container's ResourceRequirements."""

from __future__ import annotations

import re
from typing import Any

from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.pod.user_pod import SIDES, Side, UserPod

# Kubernetes quantity grammar: signed decimal number with an optional binary/decimal SI suffix or exponent.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def check_quantity(value: object, field: str) -> str:
    """Return `value` as a quantity string, or raise naming the field."""
    text = str(value).strip()
    if not _QUANTITY.match(text):
        raise GenerationError(field, f"{value!r} is not a valid quantity")
    return text


def check_quantities(pod: UserPod, prefix: str = "") -> dict[Side, dict[str, str]]:
    """The component's quantities by side, each checked (a refusal names `prefix` + its field)."""
    out: dict[Side, dict[str, str]] = {side: {} for side in SIDES}
    for q in pod.quantities:
        out[q.side][q.name] = check_quantity(q.value, prefix + q.field)
    return out


def apply_resources(container: dict[str, Any], pod: UserPod) -> None:
    """The component's quantities, each checked, over the container's own requests and limits key by
    key, and its claims after the container's (in place)."""
    if not pod.quantities and not pod.claims:
        return
    current: dict[str, Any] = dict(container.get("resources") or {})
    for side, values in check_quantities(pod).items():
        if values:
            current[side] = {**(current.get(side) or {}), **values}
    if pod.claims:
        existing = list(current.get("claims") or [])
        names = {c.get("name") for c in existing}
        current["claims"] = existing + [dict(c) for c in pod.claims if c.get("name") not in names]
    if current:
        container["resources"] = current


def gpu_count(pod: UserPod, *, prefer_requests: bool = False) -> int:
    """GPUs per node (limits, or requests first when asked); 0 if none or not a number."""
    for side in ("requests", "limits") if prefer_requests else ("limits",):
        value = pod.gpus(side)
        if value:
            try:
                return int(value)
            except ValueError:
                return 0
    return 0
