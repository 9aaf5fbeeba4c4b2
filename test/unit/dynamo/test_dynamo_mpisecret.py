"""The MPI SSH key Secret's generation (internal/dynamo/graph/mpisecret.py): which graphs need it, its
shape (upstream's keys and type), the copy from a source namespace, and that render prints no key."""

from __future__ import annotations

import base64
from typing import Any
from unittest import mock

import pytest
import yaml
from dynamo_operator.api.conversion import V1BETA1, convert
from dynamo_operator.internal.dynamo.common.context import Capabilities
from dynamo_operator.internal.dynamo.graph import components
from dynamo_operator.internal.dynamo.graph.mpisecret import (
    PLACEHOLDER_KEY_PAIR,
    SshKeyPair,
    desired_mpi_ssh_secret,
    desired_mpi_ssh_secrets,
    graph_needs_mpi_ssh_secret,
    mpi_ssh_secret_copy,
)
from dynamo_operator.internal.dynamo.render.offline import RenderOptions, render_objects
from unit.dynamo.dynamo_testlib import NS, dgd, service

Obj = dict[str, Any]
KEYS = SshKeyPair(private_key=b"PRIVATE", public_key=b"ssh-rsa PUBLIC\n")


def multinode(ctype: str, backend: str) -> Obj:
    return service(ctype, backend, multinode={"nodeCount": 2})


@pytest.mark.parametrize("backend", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("ctype", ["worker", "prefill", "decode"])
def test_every_multinode_graph_needs_the_secret(ctype: str, backend: str) -> None:
    """Any service on several nodes, any backend (upstream provides it for every multinode graph)."""
    assert graph_needs_mpi_ssh_secret(dgd({"F": service("frontend"), "W": multinode(ctype, backend)}))


@pytest.mark.parametrize(
    "services",
    [
        pytest.param({"W": service("worker")}, id="single-node"),
        pytest.param({"W": service("worker", multinode={"nodeCount": 1})}, id="one-node"),
        pytest.param({"F": service("frontend")}, id="frontend-only"),
    ],
)
def test_single_node_graphs_need_no_secret(services: dict[str, Obj]) -> None:
    assert not graph_needs_mpi_ssh_secret(dgd(services))


def test_default_node_count_is_multinode() -> None:
    """`multinode: {}` means two nodes (the API's default), so it needs the Secret."""
    assert graph_needs_mpi_ssh_secret(dgd({"W": service("worker", multinode={})}))


@pytest.mark.parametrize(
    ("multinode_block", "needed"), [({"nodeCount": 4}, True), ({}, True), ({"nodeCount": 1}, False)]
)
def test_a_stored_graphs_multinode_components_are_read_as_stored(multinode_block: Obj, needed: bool) -> None:
    stored = convert(dgd({"W": service("worker", multinode=multinode_block)}), V1BETA1)
    with mock.patch.object(components, "convert", side_effect=AssertionError("converted")):
        assert graph_needs_mpi_ssh_secret(stored) is needed


def test_secret_has_upstreams_keys_type_and_label() -> None:
    """private.key and private.key.pub, base64, Opaque, managed-by dynamo-operator, no owner."""
    secret = desired_mpi_ssh_secret(NS, "mpi-run-ssh-secret", KEYS)
    assert secret == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "mpi-run-ssh-secret",
            "namespace": NS,
            "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"},
        },
        "type": "Opaque",
        "data": {
            "private.key": base64.b64encode(b"PRIVATE").decode(),
            "private.key.pub": base64.b64encode(b"ssh-rsa PUBLIC\n").decode(),
        },
    }


def test_copy_takes_type_and_data_only() -> None:
    """A copy into another namespace keeps the key pair and drops the source's identity and extras."""
    source = desired_mpi_ssh_secret("dynamo-system", "mpi-run-ssh-secret", KEYS)
    source["metadata"] |= {"uid": "u", "resourceVersion": "7", "annotations": {"a": "b"}}
    copy = mpi_ssh_secret_copy(source, "team-a")
    assert copy["metadata"] == {
        "name": "mpi-run-ssh-secret",
        "namespace": "team-a",
        "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"},
    }
    assert (copy["type"], copy["data"]) == (source["type"], source["data"])


def test_key_source_is_called_only_when_the_graph_needs_a_secret() -> None:
    """Drawing a key costs CPU and randomness: a single-node graph never asks for one."""
    calls: list[int] = []

    def keys() -> SshKeyPair:
        calls.append(1)
        return KEYS

    assert desired_mpi_ssh_secrets(dgd({"W": service("worker")}), NS, "s", keys) == []
    assert len(desired_mpi_ssh_secrets(dgd({"W": multinode("worker", "trtllm")}), NS, "s", keys)) == 1
    assert calls == [1]


def test_key_pair_repr_shows_no_key() -> None:
    """A key pair that ends up in a log line or a traceback shows nothing of the key."""
    assert "PRIVATE" not in repr(KEYS) and "PUBLIC" not in repr(KEYS)


def test_render_shows_the_secret_with_a_placeholder_not_a_key() -> None:
    """`render` lists the Secret a multinode graph gets, holding the placeholder (deterministic)."""
    text = yaml.safe_dump(dgd({"W": multinode("worker", "trtllm")}, uid=None, backend="trtllm"))
    objs = render_objects(text, RenderOptions(namespace=NS, capabilities=Capabilities(lws=True)))
    [secret] = [o for o in objs if o["kind"] == "Secret"]
    assert base64.b64decode(secret["data"]["private.key"]) == PLACEHOLDER_KEY_PAIR.private_key
    assert render_objects(text, RenderOptions(namespace=NS, capabilities=Capabilities(lws=True))) == objs
