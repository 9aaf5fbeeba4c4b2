"""Predicates: which watch events get through to the queue."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.controller import (
    annotation_changed,
    any_of,
    generation_changed,
    label_changed,
    label_selector,
    negate,
    resource_version_changed,
)
from dynamo_operator.internal.controller.predicates import (
    CHILD_CONTENT_CHANGED,
    CHILD_STATUS_CHANGED,
    Predicate,
    all_of,
    parse_selector,
)


def obj(*, generation: int = 1, labels: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"metadata": {"name": "x", "namespace": "ns", "generation": generation, "labels": labels, **meta}}


@pytest.mark.parametrize(
    ("old", "new", "passes"),
    [
        pytest.param(obj(generation=1), obj(generation=2), True, id="spec-change"),
        pytest.param(obj(generation=1), obj(generation=1, labels={"a": "b"}), False, id="metadata-only"),
        pytest.param(obj(generation=3), obj(generation=3), False, id="resync"),
    ],
)
def test_generation_changed_update(old: dict[str, Any], new: dict[str, Any], passes: bool) -> None:
    """Updates pass only when metadata.generation moved."""
    assert generation_changed.update(old, new) is passes


def test_generation_changed_passes_create_and_delete() -> None:
    """Creates and deletes always pass generation_changed."""
    assert generation_changed.create(obj()) and generation_changed.delete(obj())


@pytest.mark.parametrize(
    ("old", "new", "passes"),
    [
        pytest.param(obj(), obj(annotations={"a": "1"}), True, id="added"),
        pytest.param(obj(annotations={"a": "1"}), obj(annotations={"a": "2"}), True, id="changed"),
        pytest.param(obj(annotations={}), obj(), False, id="empty-vs-missing"),
        pytest.param(
            obj(annotations={"a": "1"}, generation=1),
            obj(annotations={"a": "1"}, generation=2),
            False,
            id="spec-only",
        ),
    ],
)
def test_annotation_changed_update(old: dict[str, Any], new: dict[str, Any], passes: bool) -> None:
    """Updates pass only when annotations differ."""
    assert annotation_changed.update(old, new) is passes


def test_label_and_resource_version_changed() -> None:
    """label_changed compares labels; resource_version_changed filters resyncs."""
    assert label_changed.update(obj(labels={"a": "1"}), obj(labels={"a": "2"}))
    assert not label_changed.update(obj(labels={"a": "1"}), obj(labels={"a": "1"}))
    assert not resource_version_changed.update(obj(resourceVersion="5"), obj(resourceVersion="5"))
    assert resource_version_changed.update(obj(resourceVersion="5"), obj(resourceVersion="6"))


@pytest.mark.parametrize(
    ("selector", "labels", "passes"),
    [
        pytest.param({"mirror": "true"}, {"mirror": "true", "x": "y"}, True, id="mapping-match"),
        pytest.param({"mirror": "true"}, {"mirror": "false"}, False, id="mapping-mismatch"),
        pytest.param({"mirror": "true"}, None, False, id="no-labels"),
        pytest.param("a=1,b!=2", {"a": "1", "b": "3"}, True, id="eq-and-neq"),
        pytest.param("a==1", {"a": "1"}, True, id="double-eq"),
        pytest.param("a,!b", {"a": "", "b": "x"}, False, id="exists-and-not-exists"),
        pytest.param("env in (prod, staging)", {"env": "staging"}, True, id="set-in"),
        pytest.param("env notin (prod,staging),a", {"env": "dev", "a": "1"}, True, id="set-notin-and-exists"),
        pytest.param("", {"anything": "x"}, True, id="empty-selects-all"),
    ],
)
def test_label_selector(selector: dict[str, str] | str, labels: dict[str, str] | None, passes: bool) -> None:
    """label_selector matches the object's labels (the new object on update)."""
    predicate = label_selector(selector)
    assert predicate.create(obj(labels=labels)) is passes
    assert predicate.update(obj(labels={}), obj(labels=labels)) is passes
    assert predicate.delete(obj(labels=labels)) is passes


def test_invalid_selector_is_rejected() -> None:
    """A malformed term raises instead of silently matching everything."""
    with pytest.raises(ValueError):
        parse_selector("a=b=c")


def test_combinators() -> None:
    """any_of passes if one passes, all_of if all pass, negate inverts."""
    spec_change = (obj(generation=1), obj(generation=2))
    label_only = (obj(labels={"a": "1"}), obj(labels={"a": "2"}))
    either = any_of(generation_changed, label_changed)
    both = all_of(generation_changed, label_changed)
    assert either.update(*spec_change) and either.update(*label_only)
    assert not both.update(*spec_change)
    assert negate(generation_changed).update(*label_only)
    assert all_of().create(obj())


def _child(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "metadata": {"name": "c", "generation": 1, "labels": {"l": "1"}, "annotations": {"a": "1"}},
        "spec": {"replicas": 1},
        "status": {"readyReplicas": 0},
    }
    for path, value in fields.items():
        section, key = path.split("__")
        base[section] = {**base[section], key: value}
    return base


@pytest.mark.parametrize(
    ("new", "content", "status"),
    [
        pytest.param(_child(), False, False, id="resync"),
        pytest.param(_child(metadata__resourceVersion="9"), False, False, id="resource-version-only"),
        pytest.param(_child(spec__replicas=3), True, True, id="spec-edited"),
        pytest.param(_child(metadata__labels={"l": "2"}), True, True, id="labels-edited"),
        pytest.param(_child(metadata__annotations={}), True, True, id="annotations-edited"),
        pytest.param(_child(metadata__ownerReferences=[{"uid": "x"}]), True, True, id="owners-edited"),
        pytest.param(_child(status__readyReplicas=1), False, True, id="status-changed"),
        pytest.param(_child(metadata__generation=2), False, True, id="generation-bumped"),
    ],
)
def test_child_predicates_pass_updates_of_what_the_owner_reads(
    new: dict[str, Any], content: bool, status: bool
) -> None:
    assert CHILD_CONTENT_CHANGED.update(_child(), new) is content
    assert CHILD_STATUS_CHANGED.update(_child(), new) is status


@pytest.mark.parametrize(
    "predicate", [CHILD_CONTENT_CHANGED, CHILD_STATUS_CHANGED], ids=["content", "status"]
)
def test_child_predicates_skip_creates_and_pass_deletes(predicate: Predicate) -> None:
    """The owner made the child itself; a deleted child must be made again."""
    assert not predicate.create(_child())
    assert predicate.delete(_child())
