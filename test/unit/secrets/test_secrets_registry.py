"""Registry hosts of images and of docker config `auths` keys."""

from __future__ import annotations

import pytest
from dynamo_operator.internal.secrets.registry import InvalidRegistryError, auth_key_host, image_registry_host


@pytest.mark.parametrize(
    ("image", "host"),
    [
        pytest.param("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1", "nvcr.io", id="registry-with-tag"),
        pytest.param("nvcr.io/nvidia/x@sha256:" + "a" * 64, "nvcr.io", id="digest"),
        pytest.param("nvcr.io/nvidia/x:1.0@sha256:" + "b" * 64, "nvcr.io", id="tag-and-digest"),
        pytest.param("my.reg:5000/team/img:1", "my.reg:5000", id="port"),
        pytest.param("localhost:5000/x", "localhost:5000", id="localhost-port"),
        pytest.param("localhost/x", "localhost", id="localhost"),
        pytest.param("ubuntu", "docker.io", id="bare-name"),
        pytest.param("ubuntu:22.04", "docker.io", id="bare-name-tag-not-a-port"),
        pytest.param("library/ubuntu:1", "docker.io", id="one-segment-namespace"),
        pytest.param("nvidia/cuda:12", "docker.io", id="hub-org"),
        pytest.param("docker.io/library/ubuntu", "docker.io", id="explicit-docker-io"),
        pytest.param("index.docker.io/library/ubuntu", "docker.io", id="index-alias"),
        pytest.param("registry-1.docker.io/x/y", "docker.io", id="registry-1-alias"),
        pytest.param("NVCR.IO/x", "nvcr.io", id="lowercased"),
        pytest.param("ghcr.io/a/b/c/d:e", "ghcr.io", id="deep-path"),
        pytest.param("[::1]:5000/x", "[::1]:5000", id="ipv6"),
        pytest.param("127.0.0.1:5000/x", "127.0.0.1:5000", id="ipv4-port"),
    ],
)
def test_image_registry_host(image: str, host: str) -> None:
    """Image → registry host: ports kept, tags/digests ignored, Docker Hub defaults and aliases."""
    assert image_registry_host(image) == host


@pytest.mark.parametrize(
    ("key", "host"),
    [
        pytest.param("https://index.docker.io/v1/", "docker.io", id="docker-hub-legacy-url"),
        pytest.param("docker.io", "docker.io", id="docker-io"),
        pytest.param("nvcr.io", "nvcr.io", id="bare-host"),
        pytest.param("https://nvcr.io", "nvcr.io", id="scheme"),
        pytest.param("http://my.reg:5000/v2/", "my.reg:5000", id="scheme-port-path"),
        pytest.param("my.reg:5000/v2/", "my.reg:5000", id="port-path"),
        pytest.param("https://user@my.reg", "my.reg", id="userinfo"),
        pytest.param("https://my.reg/?q=1#f", "my.reg", id="query-fragment"),
        pytest.param("localhost:5000", "localhost:5000", id="localhost"),
        pytest.param("Quay.IO", "quay.io", id="case"),
    ],
)
def test_auth_key_host(key: str, host: str) -> None:
    """docker config `auths` key → the same normalised host as images."""
    assert auth_key_host(key) == host


@pytest.mark.parametrize(
    "key",
    [
        pytest.param("", id="empty"),
        pytest.param("https://", id="scheme-only"),
        pytest.param("my.reg:port", id="non-numeric-port"),
        pytest.param("bad host", id="space"),
    ],
)
def test_auth_key_without_host_is_refused(key: str) -> None:
    """Keys that name no host raise InvalidRegistryError."""
    with pytest.raises(InvalidRegistryError):
        auth_key_host(key)


def test_empty_image_is_refused() -> None:
    """An empty image has no registry."""
    with pytest.raises(InvalidRegistryError):
        image_registry_host(" ")


@pytest.mark.parametrize(
    ("image", "key"),
    [
        pytest.param("ubuntu", "https://index.docker.io/v1/", id="hub-legacy"),
        pytest.param("nvcr.io/x:1", "https://nvcr.io/v2/", id="ngc"),
        pytest.param("my.reg:5000/x", "my.reg:5000", id="port"),
    ],
)
def test_image_matches_auth_key(image: str, key: str) -> None:
    """Images and auth keys of the same registry normalise to the same string."""
    assert image_registry_host(image) == auth_key_host(key)


def test_port_distinguishes_registries() -> None:
    """The same host on another port is another registry."""
    assert image_registry_host("my.reg:5000/x") != auth_key_host("my.reg")
