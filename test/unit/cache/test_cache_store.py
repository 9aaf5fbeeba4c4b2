"""The indexed store: keys, built-in and custom indexes kept in step with every write."""

from __future__ import annotations

from typing import Any

import pytest
from dynamo_operator.internal.cache.interface import Obj
from dynamo_operator.internal.cache.store import CONTROLLER_INDEX, NAMESPACE_INDEX, Store
from dynamo_operator.internal.cache.transform import keep_fields, metadata_only, strip_managed_fields


def obj(
    name: str, ns: str | None = "a", *, owner: str | None = None, labels: dict[str, str] | None = None
) -> Obj:
    meta: dict[str, Any] = {"name": name, "resourceVersion": "1"}
    if ns:
        meta["namespace"] = ns
    if owner:
        meta["ownerReferences"] = [
            {"uid": "other", "controller": False},
            {"uid": owner, "controller": True, "kind": "X", "name": "o"},
        ]
    if labels:
        meta["labels"] = labels
    return {"metadata": meta}


def names(objs: list[Obj]) -> list[str]:
    return sorted(o["metadata"]["name"] for o in objs)


def test_keys_are_namespace_slash_name_or_name() -> None:
    store = Store()
    store.upsert(obj("x", "a"))
    store.upsert(obj("node1", None))
    assert sorted(store.keys()) == ["a/x", "node1"]
    assert store.get("a/x") is not None and store.get("x") is None


def test_namespace_index() -> None:
    store = Store()
    for name, ns in [("x", "a"), ("y", "a"), ("z", "b"), ("n", None)]:
        store.upsert(obj(name, ns))
    assert names(store.by_index(NAMESPACE_INDEX, "a")) == ["x", "y"]
    assert names(store.by_index(NAMESPACE_INDEX, "b")) == ["z"]
    assert sorted(store.index_values(NAMESPACE_INDEX)) == ["a", "b"]


def test_controller_index_uses_only_the_controller_owner_reference() -> None:
    store = Store()
    store.upsert(obj("child", owner="uid-1"))
    store.upsert(obj("orphan"))
    assert names(store.by_index(CONTROLLER_INDEX, "uid-1")) == ["child"]
    assert store.by_index(CONTROLLER_INDEX, "other") == []


def test_update_moves_the_object_between_index_values() -> None:
    """Re-filing on update: the old value no longer lists the object, and empty values vanish."""
    store = Store({"app": lambda o: [o["metadata"].get("labels", {}).get("app", "")]})
    store.upsert(obj("x", labels={"app": "one"}))
    store.upsert(obj("x", labels={"app": "two"}))
    assert store.by_index("app", "one") == []
    assert names(store.by_index("app", "two")) == ["x"]
    assert "one" not in store.index_values("app")


def test_remove_unfiles_from_every_index() -> None:
    store = Store()
    store.upsert(obj("x", owner="u"))
    assert store.remove("a/x") is not None
    assert store.by_index(NAMESPACE_INDEX, "a") == [] and store.by_index(CONTROLLER_INDEX, "u") == []
    assert store.remove("a/x") is None


def test_indexers_added_later_file_existing_objects() -> None:
    store = Store()
    store.upsert(obj("x", labels={"tier": "gpu"}))
    store.add_indexers({"tier": lambda o: list((o["metadata"].get("labels") or {}).values())})
    assert names(store.by_index("tier", "gpu")) == ["x"]


def test_multi_valued_index() -> None:
    store = Store({"labels": lambda o: [f"{k}={v}" for k, v in (o["metadata"].get("labels") or {}).items()]})
    store.upsert(obj("x", labels={"a": "1", "b": "2"}))
    assert names(store.by_index("labels", "a=1")) == names(store.by_index("labels", "b=2")) == ["x"]


def test_duplicate_or_unknown_index_names_are_errors() -> None:
    store = Store()
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexers({NAMESPACE_INDEX: lambda o: []})
    with pytest.raises(KeyError):
        store.by_index("nope", "x")


def test_replace_swaps_content_and_returns_the_previous() -> None:
    store = Store()
    store.upsert(obj("x"))
    store.upsert(obj("y"))
    previous = store.replace([obj("y"), obj("z")])
    assert sorted(previous) == ["a/x", "a/y"]
    assert sorted(store.keys()) == ["a/y", "a/z"]
    assert names(store.by_index(NAMESPACE_INDEX, "a")) == ["y", "z"]


def test_strip_managed_fields() -> None:
    o = obj("x")
    o["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    assert "managedFields" not in strip_managed_fields(o)["metadata"]


def test_metadata_only_and_keep_fields_trim_objects() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "a"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": "e30=", "other": "c2VjcmV0"},
    }
    assert metadata_only(secret) == {"apiVersion": "v1", "kind": "Secret", "metadata": secret["metadata"]}
    trimmed = keep_fields("type", data_keys=[".dockerconfigjson"])(secret)
    assert trimmed["type"] == "kubernetes.io/dockerconfigjson"
    assert trimmed["data"] == {".dockerconfigjson": "e30="}
