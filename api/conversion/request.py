"""Placeholder until this kind's conversion lands: every conversion is refused."""

from __future__ import annotations

from typing import Any

from . import ConversionError


def to_v1beta1(obj: dict[str, Any]) -> dict[str, Any]:
    raise ConversionError(f"{obj.get('kind')} conversion to v1beta1 is not implemented yet")


def to_v1alpha1(obj: dict[str, Any]) -> dict[str, Any]:
    raise ConversionError(f"{obj.get('kind')} conversion to v1alpha1 is not implemented yet")
