"""Registry hosts: of an image reference, and of a docker config `auths` key. Both normalise the
same way so they compare by plain string equality.

Normalisation (a deliberate fix over upstream, which compared raw strings): hosts are lower-cased,
Docker Hub's aliases (`index.docker.io`, `registry-1.docker.io`, `registry.hub.docker.com`) all
become `docker.io`, and an image without a registry part (`ubuntu`, `library/ubuntu:22.04`) is on
`docker.io`, as the container runtime resolves it.
"""

from __future__ import annotations

import re

from dynamo_operator.internal import consts

DOCKER_HUB_ALIASES = frozenset(
    {"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"}
)

_HOST = re.compile(r"^(?:\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(?::[0-9]{1,5})?$")


class InvalidRegistryError(ValueError):
    """The string names no usable registry host."""


def _normalise(host: str, original: str) -> str:
    host = host.lower()
    if not host or not _HOST.match(host):
        raise InvalidRegistryError(f"no valid registry host in {original!r}")
    if host in DOCKER_HUB_ALIASES:
        return consts.DOCKER_HUB_HOST
    return host


def image_registry_host(image: str) -> str:
    """Registry host of an image reference (`host[:port]`, lower-case; `docker.io` when implicit).

    Tags and digests are ignored: `nvcr.io/nvidia/x:1.0@sha256:...` → `nvcr.io`,
    `localhost:5000/x` → `localhost:5000`, `ubuntu:22.04` → `docker.io`.
    """
    ref = image.strip()
    if not ref:
        raise InvalidRegistryError("empty image reference")
    ref = ref.split("@", 1)[0]
    first, slash, _ = ref.partition("/")
    if not slash:
        return consts.DOCKER_HUB_HOST
    # The first path segment is a registry only if it looks like a host (Docker's own rule).
    if "." in first or ":" in first or first == "localhost" or first.startswith("["):
        return _normalise(first, image)
    return consts.DOCKER_HUB_HOST


def auth_key_host(key: str) -> str:
    """Registry host of a docker config `auths` key (`https://index.docker.io/v1/` → `docker.io`).

    Scheme, user info, path, query and fragment are dropped; the port is kept.
    """
    rest = key.strip()
    if "://" in rest:
        rest = rest.split("://", 1)[1]
    rest = re.split(r"[/?#]", rest, maxsplit=1)[0]
    rest = rest.rsplit("@", 1)[-1]
    return _normalise(rest, key)
