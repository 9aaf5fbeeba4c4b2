"""ConversionReview handling: request in, response out, with a converter of the test's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pytest
from dynamo_operator.internal.webhook import review


def rename(obj: Mapping[str, object], to: str) -> dict[str, object]:
    if (obj.get("spec") or {}).get("broken"):  # type: ignore[union-attr]
        raise ValueError("spec.broken cannot be converted")
    return {**obj, "apiVersion": to}


def body(objects: list[dict[str, Any]], *, to: str = "example.com/v2", uid: str = "u-1", **top: Any) -> bytes:
    doc = {
        "apiVersion": review.API_VERSION,
        "kind": review.KIND,
        "request": {"uid": uid, "desiredAPIVersion": to, "objects": objects},
    } | top
    return orjson.dumps(doc)


def obj(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }


def test_every_object_is_converted_and_the_uid_is_echoed() -> None:
    out = orjson.loads(review.handle(body([obj("a"), obj("b")], uid="abc"), rename))
    assert out["apiVersion"] == review.API_VERSION
    assert out["kind"] == review.KIND
    assert out["response"]["uid"] == "abc"
    assert out["response"]["result"] == {"status": "Success"}
    assert [o["apiVersion"] for o in out["response"]["convertedObjects"]] == ["example.com/v2"] * 2
    assert [o["metadata"]["name"] for o in out["response"]["convertedObjects"]] == ["a", "b"]


def test_one_object_that_fails_fails_the_review_naming_it() -> None:
    out = orjson.loads(review.handle(body([obj("a"), obj("bad", broken=True)]), rename))
    result = out["response"]["result"]
    assert result["status"] == "Failure"
    assert "Widget ns/bad" in result["message"]
    assert "spec.broken cannot be converted" in result["message"]
    assert "convertedObjects" not in out["response"]
    assert out["response"]["uid"] == "u-1"


def test_a_converter_returning_another_version_fails_the_review() -> None:
    out = orjson.loads(review.handle(body([obj("a")]), lambda o, _to: dict(o)))
    assert out["response"]["result"]["status"] == "Failure"
    assert "example.com/v1" in out["response"]["result"]["message"]


def test_an_empty_review_succeeds_with_no_objects() -> None:
    out = orjson.loads(review.handle(body([]), rename))
    assert out["response"]["convertedObjects"] == []


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b"not json", "not JSON"),
        (b"[]", "not a JSON object"),
        (orjson.dumps({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "ConversionReview"}), "v1beta1"),
        (orjson.dumps({"apiVersion": review.API_VERSION, "kind": review.KIND}), "no request"),
    ],
)
def test_a_body_that_is_no_v1_review_is_refused(raw: bytes, words: str) -> None:
    with pytest.raises(review.BadReview, match=words):
        review.handle(raw, rename)


def test_a_review_without_uid_is_refused() -> None:
    with pytest.raises(review.BadReview, match="uid"):
        review.handle(body([obj("a")], uid=""), rename)
