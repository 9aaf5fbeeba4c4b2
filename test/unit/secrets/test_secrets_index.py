"""The docker-secret index: parsing, event handling, isolation of bad Secrets."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from dynamo_operator.internal.cache.interface import EventHandler
from dynamo_operator.internal.secrets.index import (
    FIELD_SELECTOR,
    DockerSecretIndex,
    InvalidDockerConfigError,
    parse_docker_config,
    secret_hosts,
    transform,
)

Obj = dict[str, Any]


def _secret(
    name: str,
    auths: Any,
    *,
    ns: str = "ns1",
    raw: str | None = None,
    type_: str = "kubernetes.io/dockerconfigjson",
) -> Obj:
    payload = raw if raw is not None else json.dumps({"auths": auths})
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": ns, "uid": f"u-{name}", "labels": {"x": "y"}},
        "type": type_,
        "data": {".dockerconfigjson": base64.b64encode(payload.encode()).decode(), "other": "c2VjcmV0"},
    }


def test_index_is_an_event_handler() -> None:
    """The index satisfies the informer EventHandler protocol."""
    handler: EventHandler = DockerSecretIndex()
    assert handler is not None


def test_field_selector() -> None:
    """The informer is narrowed to dockerconfigjson Secrets on the server."""
    assert FIELD_SELECTOR == "type=kubernetes.io/dockerconfigjson"


def test_transform_keeps_only_what_is_needed() -> None:
    """The transform keeps name/namespace/uid/resourceVersion, the type and the one data key."""
    out = transform(_secret("a", {"nvcr.io": {}}))
    assert set(out["metadata"]) == {"name", "namespace", "uid"}
    assert set(out["data"]) == {".dockerconfigjson"}
    assert out["type"] == "kubernetes.io/dockerconfigjson"


@pytest.mark.parametrize(
    ("payload", "hosts", "bad"),
    [
        pytest.param('{"auths": {"nvcr.io": {}}}', {"nvcr.io"}, [], id="one"),
        pytest.param(
            '{"auths": {"https://index.docker.io/v1/": {}, "docker.io": {}}}',
            {"docker.io"},
            [],
            id="aliases-merge",
        ),
        pytest.param(
            '{"auths": {"nvcr.io": {}, "bad host": {}}}', {"nvcr.io"}, ["bad host"], id="bad-key-skipped"
        ),
        pytest.param('{"auths": {}}', set(), [], id="empty-auths"),
    ],
)
def test_parse_docker_config(payload: str, hosts: set[str], bad: list[str]) -> None:
    """`auths` keys become hosts; unusable keys are reported, not fatal."""
    assert parse_docker_config(payload) == (hosts, bad)


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param("not json", id="not-json"),
        pytest.param('{"x": 1}', id="no-auths"),
        pytest.param("[]", id="not-object"),
    ],
)
def test_parse_docker_config_unreadable(payload: str) -> None:
    """Unreadable documents raise InvalidDockerConfigError."""
    with pytest.raises(InvalidDockerConfigError):
        parse_docker_config(payload)


def test_secret_without_data_is_unreadable() -> None:
    """A dockerconfigjson Secret without its data key is unreadable."""
    with pytest.raises(InvalidDockerConfigError):
        secret_hosts({"type": "kubernetes.io/dockerconfigjson", "metadata": {"name": "a"}, "data": {}})


def test_other_secret_types_have_no_hosts() -> None:
    """Only dockerconfigjson Secrets contribute."""
    assert secret_hosts(_secret("a", {"nvcr.io": {}}, type_="Opaque")) == set()


def test_add_indexes_by_namespace_and_host() -> None:
    """Added Secrets are indexed per namespace and host, names sorted."""
    index = DockerSecretIndex()
    index.on_add(_secret("b", {"nvcr.io": {}}))
    index.on_add(_secret("a", {"nvcr.io": {}, "quay.io": {}}))
    index.on_add(_secret("c", {"nvcr.io": {}}, ns="other"))
    assert dict(index.snapshot("ns1")) == {"nvcr.io": ("a", "b"), "quay.io": ("a",)}
    assert index.secrets_for("other", "nvcr.io") == ("c",)


def test_update_moves_secret_to_new_hosts() -> None:
    """An update replaces the Secret's hosts."""
    index = DockerSecretIndex()
    old = _secret("a", {"nvcr.io": {}})
    index.on_add(old)
    index.on_update(old, _secret("a", {"quay.io": {}}))
    assert dict(index.snapshot("ns1")) == {"quay.io": ("a",)}


def test_delete_removes_secret() -> None:
    """A delete drops the Secret (and the namespace when it was the last one)."""
    index = DockerSecretIndex()
    secret = _secret("a", {"nvcr.io": {}})
    index.on_add(secret)
    index.on_delete(secret)
    assert dict(index.snapshot("ns1")) == {}


def test_bad_secret_does_not_poison_index() -> None:
    """One unreadable Secret is skipped; the others stay indexed."""
    index = DockerSecretIndex()
    index.on_add(_secret("good", {"nvcr.io": {}}))
    index.on_add(_secret("bad", None, raw="{{{"))
    assert dict(index.snapshot("ns1")) == {"nvcr.io": ("good",)}


def test_secret_turning_bad_loses_its_entries() -> None:
    """A Secret updated to an unreadable payload no longer grants its old hosts."""
    index = DockerSecretIndex()
    good = _secret("a", {"nvcr.io": {}})
    index.on_add(good)
    index.on_update(good, _secret("a", None, raw="nope"))
    assert index.secrets_for("ns1", "nvcr.io") == ()


def test_snapshot_is_immutable() -> None:
    """Snapshots cannot be modified by their readers."""
    index = DockerSecretIndex()
    index.on_add(_secret("a", {"nvcr.io": {}}))
    snap = index.snapshot("ns1")
    with pytest.raises(TypeError):
        snap["x"] = ("y",)  # type: ignore[index]


def test_snapshot_unaffected_by_later_events() -> None:
    """A snapshot taken before an event keeps its content."""
    index = DockerSecretIndex()
    index.on_add(_secret("a", {"nvcr.io": {}}))
    snap = index.snapshot("ns1")
    index.on_add(_secret("b", {"nvcr.io": {}}))
    assert snap["nvcr.io"] == ("a",)


def test_replace_all_rebuilds() -> None:
    """A full refresh replaces the index, dropping Secrets no longer listed and skipping bad ones."""
    index = DockerSecretIndex()
    index.on_add(_secret("gone", {"nvcr.io": {}}, ns="old"))
    index.replace_all([_secret("a", {"nvcr.io": {}}), _secret("bad", None, raw="x")])
    assert dict(index.snapshot("old")) == {}
    assert dict(index.snapshot("ns1")) == {"nvcr.io": ("a",)}


def test_works_on_transformed_objects() -> None:
    """The index reads the informer's transformed objects."""
    index = DockerSecretIndex()
    index.on_add(transform(_secret("a", {"https://index.docker.io/v1/": {}})))
    assert index.secrets_for("ns1", "docker.io") == ("a",)
