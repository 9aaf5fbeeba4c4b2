"""copy_tree: a deep copy of decoded JSON, whatever its shape."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from dynamo_operator.internal.jsontree import copy_tree
from hypothesis import given
from hypothesis import strategies as st

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=25,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@given(JSON_VALUES)
def test_copy_is_equal_and_shares_no_container(value: Any) -> None:
    copied = copy_tree(value)
    assert copied == value
    originals = {id(c) for c in _containers(value)}
    assert not originals & {id(c) for c in _containers(copied)}


def test_editing_the_copy_leaves_the_original_alone() -> None:
    original = {"metadata": {"labels": {"a": "1"}, "ownerReferences": [{"uid": "u"}]}}
    copied = copy_tree(original)
    copied["metadata"]["labels"]["b"] = "2"
    copied["metadata"]["ownerReferences"][0]["uid"] = "other"
    assert original == {"metadata": {"labels": {"a": "1"}, "ownerReferences": [{"uid": "u"}]}}


def test_other_containers_are_deep_copied_as_deepcopy_would() -> None:
    inner = {"x": [1]}
    value = {"tuple": (inner,), "ordered": OrderedDict(a=inner)}
    copied = copy_tree(value)
    assert copied == copy.deepcopy(value)
    assert type(copied["ordered"]) is OrderedDict
    assert copied["tuple"][0] is not inner and copied["ordered"]["a"] is not inner
