"""What a cache keeps of an object: managedFields never, a kind's shape when one is set, and every
short string shared with the other cached objects."""

from __future__ import annotations

import copy
import json
import sys
from typing import Any

import orjson
import pytest
from dynamo_operator.internal.cache.cache import Cache
from dynamo_operator.internal.cache.informer import SharedInformer
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.reflector import Scope
from dynamo_operator.internal.cache.transform import INTERN_MAX_LEN, intern_strings, keep_paths, metadata_only
from dynamo_operator.internal.client.resource import CONFIG_MAP, DEPLOYMENT, SERVICE


class NoSource:
    async def list_page(self, *a: Any, **kw: Any) -> Any:
        raise AssertionError("not used")

    def watch(self, *a: Any, **kw: Any) -> Any:
        raise AssertionError("not used")


def deployment(name: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": "1",
            "labels": {"nvidia.com/dynamo-component": "decode"},
            "managedFields": [{"manager": "dynamo-operator", "operation": "Apply"}],
        },
        "spec": {
            "replicas": 2,
            "paused": False,
            "template": {"spec": {"containers": [{"name": "main", "image": "nvcr.io/x:1"}]}},
        },
        "status": {"readyReplicas": 2, "conditions": [{"type": "Available", "status": "True"}]},
    }


def decoded(obj: Obj) -> Obj:
    """As a watch delivers it: freshly decoded by the client's decoder, sharing no string value with
    any other object."""
    out: Obj = orjson.loads(json.dumps(obj))
    return out


def test_intern_strings_makes_equal_keys_and_short_values_one_object() -> None:
    a, b = intern_strings(decoded(deployment("a"))), intern_strings(decoded(deployment("b")))
    key_a = next(k for k in a["metadata"]["labels"])
    key_b = next(k for k in b["metadata"]["labels"])
    assert key_a is key_b
    assert (
        a["spec"]["template"]["spec"]["containers"][0]["image"]
        is b["spec"]["template"]["spec"]["containers"][0]["image"]
    )


def test_intern_strings_keeps_long_values_and_non_strings_as_they_are() -> None:
    long = "x" * (INTERN_MAX_LEN + 1)
    obj = {"message": long, "count": 3, "ok": True, "none": None, "items": [1.5, "y"]}
    out = intern_strings(obj)
    assert out == obj
    assert out["message"] is long  # not copied, not interned


def test_intern_strings_works_in_place_and_changes_no_value() -> None:
    """The cache's objects are freshly decoded and its own: interning mutates them (rebuilding every
    container cost more than the decoding) and every value stays equal."""
    obj = decoded(deployment("a"))
    before = copy.deepcopy(obj)
    metadata = obj["metadata"]
    out = intern_strings(obj)
    assert out is obj and out["metadata"] is metadata
    assert out == before


class Label(str):
    """A str subclass, which sys.intern refuses (no JSON decoder makes one)."""


def test_intern_strings_interns_a_lone_string_subclass_and_leaves_nested_ones_alone() -> None:
    assert intern_strings(Label("q")) is sys.intern("q")
    nested = Label("v")
    obj = {"a": nested, "b": [["w" * 2, {"c": "z" * 3}]], "d": (1, 2)}
    out = intern_strings(obj)
    assert out == {"a": "v", "b": [["ww", {"c": "zzz"}]], "d": (1, 2)}
    assert out["a"] is nested
    assert out["b"][0][0] is sys.intern("ww") and out["b"][0][1]["c"] is sys.intern("zzz")


@pytest.mark.parametrize(
    ("paths", "expected_spec", "has_status"),
    [
        (("spec.replicas", "spec.paused", "status"), {"replicas": 2, "paused": False}, True),
        (("spec.replicas",), {"replicas": 2}, False),
        (("status",), None, True),
        (("spec.missing", "nothing.here"), None, False),
        (("spec.template.spec",), {"template": {"spec": deployment("a")["spec"]["template"]["spec"]}}, False),
    ],
)
def test_keep_paths_keeps_metadata_and_exactly_the_named_paths(
    paths: tuple[str, ...], expected_spec: Obj | None, has_status: bool
) -> None:
    out = keep_paths(*paths)(deployment("a"))
    assert out["metadata"] == deployment("a")["metadata"]
    assert (out["apiVersion"], out["kind"]) == ("apps/v1", "Deployment")
    assert out.get("spec") == expected_spec
    assert ("status" in out) is has_status


def test_keep_paths_tolerates_a_path_through_a_non_object() -> None:
    obj = {"metadata": {"name": "a"}, "spec": "not-an-object"}
    assert keep_paths("spec.replicas")(obj) == {"apiVersion": None, "kind": None, "metadata": {"name": "a"}}


def test_informer_stores_objects_without_managed_fields_in_their_shape_with_shared_strings() -> None:
    shape = keep_paths("spec.replicas", "status")
    informer = SharedInformer(NoSource(), Scope(DEPLOYMENT, None, None, None), transform=shape)
    informer.replace([decoded(deployment("a")), decoded(deployment("b"))])
    a, b = informer.store.get("ns/a"), informer.store.get("ns/b")
    assert a is not None and b is not None
    assert "managedFields" not in a["metadata"]
    assert a["spec"] == {"replicas": 2} and "template" not in a["spec"]
    assert a["status"] == deployment("a")["status"]
    assert a["status"]["conditions"][0]["type"] is b["status"]["conditions"][0]["type"]


def test_a_shape_set_on_the_cache_applies_to_every_later_informer_of_that_kind() -> None:
    cache = Cache(NoSource())
    shape = keep_paths("status")
    cache.set_shape(DEPLOYMENT, shape)
    assert cache.informer(DEPLOYMENT).transform is shape
    assert cache.informer(DEPLOYMENT, namespace="ns").transform is shape
    assert cache.informer(DEPLOYMENT, label_selector="app=x").transform is shape
    assert cache.informer(CONFIG_MAP).transform is None  # other kinds untouched


def test_an_informer_naming_its_own_transform_or_metadata_only_ignores_the_shape() -> None:
    cache = Cache(NoSource())
    cache.set_shape(SERVICE, metadata_only)
    own = keep_paths("spec")
    assert cache.informer(SERVICE, namespace="a", transform=own).transform is own
    assert cache.informer(SERVICE, metadata_only=True).transform is None


def test_asking_again_without_a_transform_returns_the_shaped_informer() -> None:
    cache = Cache(NoSource())
    cache.set_shape(SERVICE, metadata_only)
    first = cache.informer(SERVICE)
    assert cache.informer(SERVICE) is first


def test_a_shape_cannot_be_set_once_an_informer_of_the_kind_exists() -> None:
    cache = Cache(NoSource())
    cache.informer(DEPLOYMENT)
    with pytest.raises(ValueError, match="exist already"):
        cache.set_shape(DEPLOYMENT, metadata_only)


@pytest.mark.parametrize("kind_has_shape", [True, False], ids=["shaped-kind", "unshaped-kind"])
def test_the_cache_shapes_an_object_as_its_informers_would(kind_has_shape: bool) -> None:
    """For those who stand in for the cache (a memory of our own writes): the same shape, the same
    missing managedFields, whether or not the kind has a shape."""
    cache = Cache(NoSource())
    if kind_has_shape:
        cache.set_shape(DEPLOYMENT, keep_paths("spec.replicas", "status"))
    informer = cache.informer(DEPLOYMENT)
    informer.replace([decoded(deployment("a"))])
    assert cache.shape(DEPLOYMENT, decoded(deployment("a"))) == informer.store.get("ns/a")
