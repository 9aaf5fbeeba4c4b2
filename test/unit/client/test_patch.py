"""Merge patches from two versions of a document (RFC 7386), and the null-free form the server keeps."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.client.patch import merge_patch, without_none


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        pytest.param({"a": 1}, {"a": 1}, {}, id="equal"),
        pytest.param({"a": 1, "b": 2}, {"a": 1}, {"b": None}, id="removed-key-nulls"),
        pytest.param({"s": {"x": 1, "y": 2}}, {"s": {"x": 1}}, {"s": {"y": None}}, id="nested-map-removal"),
        pytest.param({"l": [1, 2]}, {"l": [1]}, {"l": [1]}, id="lists-replace"),
        pytest.param(None, {"a": {"b": 1}}, {"a": {"b": 1}}, id="from-nothing"),
        pytest.param({"a": 1}, {"a": {"b": 1}}, {"a": {"b": 1}}, id="scalar-to-map-replaces"),
        pytest.param({"s": {"x": 1}}, {"s": {"x": 1}, "t": None}, {"t": None}, id="new-null-sent"),
    ],
)
def test_merge_patch(old: dict[str, Any] | None, new: dict[str, Any], patch: dict[str, Any]) -> None:
    assert merge_patch(old, new) == patch


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        pytest.param({"a": None, "b": 1}, {"b": 1}, id="top-level"),
        pytest.param({"a": {"b": None, "c": [{"d": None, "e": 2}]}}, {"a": {"c": [{"e": 2}]}}, id="nested"),
        pytest.param([None, 1], [None, 1], id="list-items-kept"),
        pytest.param("x", "x", id="scalar"),
    ],
)
def test_without_none_drops_nulls_at_every_depth_of_maps(value: Any, stored: Any) -> None:
    assert without_none(value) == stored
