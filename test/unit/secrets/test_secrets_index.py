"""The docker-secret index: parsing, event handling, isolation of bad Secrets."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from dynamo_operator.internal.cache.interface import EventHandler
from dynamo_operator.internal.secrets.index import (
    FIELD_SELECTOR,
    HOSTS_FIELD,
    MAX_DOCKER_CONFIG_BYTES,
    DockerSecretIndex,
    InvalidDockerConfigError,
    PullSecretTransform,
    parse_docker_config,
    secret_hosts,
    transform,
)
from structlog.testing import capture_logs

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


PASSWORD = "hunter2-distinctive"
AUTH = base64.b64encode(f"robot:{PASSWORD}".encode()).decode()


def _credentialed(name: str = "a", rv: str = "1") -> Obj:
    secret = _secret(name, {"https://nvcr.io/v2/": {"username": "robot", "password": PASSWORD, "auth": AUTH}})
    secret["metadata"]["resourceVersion"] = rv
    secret["stringData"] = {"x": PASSWORD}
    return secret


def test_transform_keeps_identity_type_and_hosts_only() -> None:
    """The shaped Secret is its name, namespace, uid, resourceVersion, type and registry hosts."""
    out = PullSecretTransform()(_credentialed())
    assert out == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "a", "namespace": "ns1", "uid": "u-a", "resourceVersion": "1"},
        "type": "kubernetes.io/dockerconfigjson",
        HOSTS_FIELD: ["nvcr.io"],
    }


def test_transform_drops_data_from_the_decoded_object_too() -> None:
    """The object handed in (the decoded watch event the reflector still holds) loses `data` and
    `stringData`: no credential stays reachable from it either."""
    secret = _credentialed()
    PullSecretTransform()(secret)
    assert "data" not in secret
    assert "stringData" not in secret
    assert PASSWORD not in repr(secret)


def test_transform_output_holds_no_credential() -> None:
    """Neither the password nor the base64 `auth` is anywhere in the shaped object."""
    text = repr(PullSecretTransform()(_credentialed()))
    assert PASSWORD not in text
    assert AUTH not in text


def test_transform_of_a_shaped_secret_keeps_its_hosts() -> None:
    """Shaping twice (a relist re-admits what a test handed back) changes nothing."""
    shape = PullSecretTransform()
    once = shape(_credentialed())
    assert shape(dict(once)) == once


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({".dockerconfigjson": base64.b64encode(b"{{{").decode()}, id="bad-json"),
        pytest.param({".dockerconfigjson": "%%%not-base64"}, id="not-base64"),
        pytest.param({".dockerconfigjson": 7}, id="not-a-string"),
        pytest.param({}, id="missing-key"),
        pytest.param({".dockerconfigjson": base64.b64encode(b"[" * 100_000).decode()}, id="too-deep"),
        pytest.param(
            {".dockerconfigjson": base64.b64encode(b" " * (MAX_DOCKER_CONFIG_BYTES + 1)).decode()},
            id="oversize",
        ),
    ],
)
def test_transform_of_an_unreadable_secret_has_no_hosts(data: Obj) -> None:
    """An unreadable pull Secret is shaped with no hosts and no data; the transform never raises."""
    secret = _secret("bad", {})
    secret["data"] = data
    out = PullSecretTransform()(secret)
    assert out[HOSTS_FIELD] == []
    assert "data" not in out


def test_unreadable_secret_is_logged_once_per_version() -> None:
    """A relist re-admits the same version: it is not logged again; a new version is."""
    shape = PullSecretTransform()
    with capture_logs() as logs:
        for rv in ("1", "1", "1", "2"):
            bad = _secret("bad", None, raw="{{{")
            bad["metadata"]["resourceVersion"] = rv
            shape(bad)
    assert [entry["event"] for entry in logs] == ["skipping unreadable docker secret"] * 2


def test_unusable_keys_are_logged_by_count_not_by_text() -> None:
    """An `auths` key that names no registry may hold user info: the log says how many, not which."""
    with capture_logs() as logs:
        out = PullSecretTransform()(_secret("a", {"https://robot:hunter2@": {}, "nvcr.io": {}}))
    assert out[HOSTS_FIELD] == ["nvcr.io"]
    assert [(e["event"], e["unusable"]) for e in logs] == [("docker secret has unusable registry keys", 1)]
    assert "hunter2" not in repr(logs)


def test_transform_warning_memory_is_bounded() -> None:
    """The versions remembered for logging once stay within the bound, whatever the churn."""
    shape = PullSecretTransform(warned_memory=4)
    with capture_logs():
        for i in range(50):
            shape(_secret(f"bad-{i}", None, raw="x"))
    assert len(shape._warned) == 4


def test_parse_refuses_oversize_documents() -> None:
    """A document past the size limit is unreadable, named by its limit."""
    payload = '{"auths": {"nvcr.io": {}}}' + " " * MAX_DOCKER_CONFIG_BYTES
    with pytest.raises(InvalidDockerConfigError, match=str(MAX_DOCKER_CONFIG_BYTES)):
        parse_docker_config(payload)


def test_parse_refuses_deep_nesting() -> None:
    """Nesting past the JSON parser's depth limit is unreadable, not a RecursionError."""
    with pytest.raises(InvalidDockerConfigError):
        parse_docker_config('{"auths": ' + "[" * 5000 + "]" * 5000 + "}")


def test_parse_error_keeps_no_reference_to_the_document() -> None:
    """The raised error chains nothing that holds the document (orjson's error keeps it as `.doc`)."""
    with pytest.raises(InvalidDockerConfigError) as info:
        parse_docker_config('{"auths": {"nvcr.io": {"password": "' + PASSWORD + '"}}')
    assert info.value.__cause__ is None
    assert info.value.__context__ is None
    assert PASSWORD not in str(info.value)


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


def test_shaped_unreadable_secret_is_not_indexed_nor_logged_again() -> None:
    """A Secret the transform could not read carries no hosts: the index skips it quietly (the
    transform logged it already)."""
    index = DockerSecretIndex()
    with capture_logs() as logs:
        shaped = PullSecretTransform()(_secret("bad", None, raw="nope"))
        index.on_add(shaped)
        index.replace_all([shaped])
    assert dict(index.snapshot("ns1")) == {}
    assert len(logs) == 1


def test_index_holds_no_credential() -> None:
    """What the index keeps after a credentialed Secret: names and hosts only."""
    index = DockerSecretIndex()
    index.on_add(PullSecretTransform()(_credentialed()))
    assert index.secrets_for("ns1", "nvcr.io") == ("a",)
    text = repr((index._by_secret, index._index))
    assert PASSWORD not in text
    assert AUTH not in text
