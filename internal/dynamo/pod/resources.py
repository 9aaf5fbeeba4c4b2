"""Translation of the Dynamo `resources` block into a container's ResourceRequirements."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dynamo_operator.internal import consts
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.pod.user_pod import SIDES, UserPod

# Kubernetes quantity grammar: signed decimal number with an optional binary/decimal SI suffix or exponent.
_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")


def check_quantity(value: object, field: str) -> str:
    """Return `value` as a quantity string, or raise naming the field."""
    text = str(value).strip()
    if not _QUANTITY.match(text):
        raise GenerationError(field, f"{value!r} is not a valid quantity")
    return text


def resource_list(item: Mapping[str, Any] | None, field: str) -> dict[str, str]:
    """`{cpu, memory, gpu, gpuType, custom}` → a ResourceList."""
    if not item:
        return {}
    out: dict[str, str] = {}
    for key in ("cpu", "memory"):
        if item.get(key):
            out[key] = check_quantity(item[key], f"{field}.{key}")
    if item.get("gpu"):
        out[str(item.get("gpuType") or consts.DEFAULT_GPU_RESOURCE)] = check_quantity(
            item["gpu"], f"{field}.gpu"
        )
    for key, value in sorted((item.get("custom") or {}).items()):
        out[str(key)] = check_quantity(value, f"{field}.custom.{key}")
    return out


def apply_resources(container: dict[str, Any], pod: UserPod) -> None:
    """The component's quantities, each checked, over the container's own requests and limits key by
    key, and its claims after the container's (in place)."""
    if not pod.quantities and not pod.claims:
        return
    current: dict[str, Any] = dict(container.get("resources") or {})
    for side in SIDES:
        values = {q.name: check_quantity(q.value, q.field) for q in pod.quantities if q.side == side}
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
