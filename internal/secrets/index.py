"""The docker-secret index: per namespace, registry host → names of dockerconfigjson Secrets.

It is an informer event handler (see internal/cache/interface.py `EventHandler`): attach it to an
informer over Secrets with field selector `type=kubernetes.io/dockerconfigjson` and `transform`
below, and it stays current on every add/update/delete. Each Secret is parsed on its own, so one
malformed Secret is logged and skipped and never disturbs the entries of the others.

Discovery needs the registry hosts of each Secret, never its credentials (issue #34). So the
informer's transform reads the hosts out of `.dockerconfigjson` as the object arrives and keeps a
Secret's identity and hosts only (`HOSTS_FIELD`); no `data` reaches the store, the index or a
handler, and the decoded watch event the reflector still holds loses its `data` too.
"""

from __future__ import annotations

import base64
import binascii
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from contextlib import suppress
from types import MappingProxyType
from typing import Any

import orjson
import structlog
from dynamo_operator.internal import consts
from dynamo_operator.internal.secrets.registry import InvalidRegistryError, auth_key_host

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
FIELD_SELECTOR = f"type={consts.DOCKER_CONFIG_JSON_TYPE}"
_KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion")
# Where a shaped Secret carries its registry hosts (sorted). Not a Kubernetes field: the key marks an
# object the transform made, which the index reads as is instead of parsing data it no longer has.
HOSTS_FIELD = "registryHosts"
# A docker config names a handful of registries in a few hundred bytes; 256 KiB (about 1,500 entries)
# bounds the parse work and memory of one Secret well below the API server's 1 MiB for a whole
# Secret. Nesting is bounded by orjson, which refuses documents deeper than 1,024 levels.
MAX_DOCKER_CONFIG_BYTES = 256 * 1024
# Base64 of the largest payload we read, so an oversize one is refused before it is decoded.
_MAX_ENCODED = 4 * ((MAX_DOCKER_CONFIG_BYTES + 2) // 3)
# How many Secret versions the transform remembers having warned about (a relist re-admits every
# object; an unreadable Secret is logged once per resourceVersion, not once per relist).
WARNED_MEMORY = 1024


class InvalidDockerConfigError(ValueError):
    """A dockerconfigjson payload that cannot be read."""


def parse_docker_config(payload: str | bytes) -> tuple[set[str], list[str]]:
    """Registry hosts of a `.dockerconfigjson` document, and the `auths` keys that name no host.

    Raises InvalidDockerConfigError when the document itself is unreadable or larger than
    `MAX_DOCKER_CONFIG_BYTES`. Only the `auths` keys are read; the credentials under them are not.
    """
    size = len(payload.encode() if isinstance(payload, str) else payload)
    if size > MAX_DOCKER_CONFIG_BYTES:
        raise InvalidDockerConfigError(f"larger than {MAX_DOCKER_CONFIG_BYTES} bytes ({size})")
    # The error is raised outside the handler: orjson's exception holds the whole document (`.doc`),
    # and chaining would keep it reachable from ours.
    problem: str | None = None
    try:
        doc = orjson.loads(payload)
    except (orjson.JSONDecodeError, RecursionError) as err:
        problem = f"not JSON: {err}"
    if problem is not None:
        raise InvalidDockerConfigError(problem)
    if not isinstance(doc, dict) or not isinstance(doc.get("auths"), dict):
        raise InvalidDockerConfigError("no 'auths' object")
    hosts: set[str] = set()
    bad: list[str] = []
    for key in doc["auths"]:
        try:
            hosts.add(auth_key_host(str(key)))
        except InvalidRegistryError:
            bad.append(str(key))
    return hosts, bad


def secret_hosts(secret: Mapping[str, Any]) -> set[str]:
    """Registry hosts a Secret authenticates to; raises InvalidDockerConfigError when unreadable.

    A Secret shaped by `transform` answers from `HOSTS_FIELD`; a whole one (`dynamo-operator
    render`, tests) is parsed, and unusable `auths` keys are logged.
    """
    hosts, unusable = _read_hosts(secret)
    if unusable:
        _warn_unusable(secret, unusable)
    return hosts


def _read_hosts(secret: Mapping[str, Any]) -> tuple[set[str], int]:
    """`secret_hosts` without logging: the hosts and how many `auths` keys named no registry."""
    if secret.get("type") != consts.DOCKER_CONFIG_JSON_TYPE:
        return set(), 0
    if HOSTS_FIELD in secret:
        return {str(host) for host in secret[HOSTS_FIELD] or ()}, 0
    encoded = (secret.get("data") or {}).get(consts.DOCKER_CONFIG_JSON_KEY)
    if not encoded:
        raise InvalidDockerConfigError(f"missing data key {consts.DOCKER_CONFIG_JSON_KEY}")
    if not isinstance(encoded, str | bytes) or len(encoded) > _MAX_ENCODED:
        raise InvalidDockerConfigError(f"data is not a string of at most {_MAX_ENCODED} base64 bytes")
    payload: bytes | None = None
    with suppress(binascii.Error, ValueError):
        payload = base64.b64decode(encoded, validate=True)
    if payload is None:
        raise InvalidDockerConfigError("data is not base64")
    hosts, bad = parse_docker_config(payload)
    return hosts, len(bad)


def _warn_unusable(secret: Mapping[str, Any], unusable: int) -> None:
    # The count only: an unusable key may carry user info (`https://user:password@`).
    meta = secret.get("metadata") or {}
    log.warning(
        "docker secret has unusable registry keys",
        namespace=meta.get("namespace"),
        secret=meta.get("name"),
        unusable=unusable,
    )


def _describe_error(obj: Mapping[str, Any], err: InvalidDockerConfigError) -> None:
    meta = obj.get("metadata") or {}
    log.warning(
        "skipping unreadable docker secret",
        namespace=meta.get("namespace"),
        secret=meta.get("name"),
        error=str(err),
    )


class PullSecretTransform:
    """Informer transform for pull Secrets: identity and registry hosts, no data.

    Called with the freshly decoded object (the informer's `admit`), it removes `data` and
    `stringData` from that object in place, so whoever still holds the decoded event holds no
    credential either, and returns a new object: kept metadata, `type` and `HOSTS_FIELD`. An
    unreadable Secret gets no hosts and one warning per resourceVersion; it never raises.
    """

    def __init__(self, warned_memory: int = WARNED_MEMORY) -> None:
        self._warned: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        self._memory = warned_memory

    def __call__(self, obj: Obj) -> Obj:
        meta = obj.get("metadata") or {}
        try:
            found, unusable = _read_hosts(obj)
        except InvalidDockerConfigError as err:
            found, unusable = set(), 0
            if self._first_warning(meta):
                _describe_error(obj, err)
        if unusable and self._first_warning(meta):
            _warn_unusable(obj, unusable)
        obj.pop("data", None)
        obj.pop("stringData", None)
        return {
            "apiVersion": obj.get("apiVersion", "v1"),
            "kind": obj.get("kind", "Secret"),
            "metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta},
            "type": obj.get("type"),
            HOSTS_FIELD: sorted(found),
        }

    def _first_warning(self, meta: Mapping[str, Any]) -> bool:
        key = (
            str(meta.get("namespace", "")),
            str(meta.get("name", "")),
            str(meta.get("resourceVersion", "")),
        )
        if key in self._warned:
            return False
        self._warned[key] = None
        while len(self._warned) > self._memory:
            self._warned.popitem(last=False)
        return True


# The one transform the operator's pull-Secret informers share (the cache refuses a second informer
# of the same scope with another transform).
transform = PullSecretTransform()


class DockerSecretIndex:
    """Namespace → registry host → sorted secret names, kept current from informer events.

    Invariant: `_by_secret[(ns, name)]` holds the hosts of the last readable version of each Secret;
    `_index` is derived from it for the namespaces touched by each event.
    """

    def __init__(self) -> None:
        self._by_secret: dict[tuple[str, str], frozenset[str]] = {}
        self._index: dict[str, dict[str, tuple[str, ...]]] = {}

    # --- EventHandler ----------------------------------------------------------------------------
    def on_add(self, obj: Obj) -> None:
        self._upsert(obj)

    def on_update(self, old: Obj, new: Obj) -> None:
        self._upsert(new)

    def on_delete(self, obj: Obj) -> None:
        key = self._key(obj)
        if self._by_secret.pop(key, None) is not None:
            self._rebuild(key[0])

    # --- reads -----------------------------------------------------------------------------------
    def snapshot(self, namespace: str) -> Mapping[str, Sequence[str]]:
        """An immutable view for one namespace, suitable for GenContext.docker_secrets."""
        return MappingProxyType(dict(self._index.get(namespace, {})))

    def secrets_for(self, namespace: str, host: str) -> tuple[str, ...]:
        """Names of the Secrets in `namespace` that authenticate to registry `host`."""
        return self._index.get(namespace, {}).get(host, ())

    def replace_all(self, secrets: Sequence[Obj]) -> None:
        """Rebuild from a full list (the periodic refresh), skipping unreadable Secrets."""
        self._by_secret.clear()
        for secret in secrets:
            hosts = self._hosts_or_none(secret)
            if hosts:
                self._by_secret[self._key(secret)] = hosts
        for namespace in {ns for ns, _ in self._by_secret} | set(self._index):
            self._rebuild(namespace)

    # --- internals -------------------------------------------------------------------------------
    @staticmethod
    def _key(obj: Mapping[str, Any]) -> tuple[str, str]:
        meta = obj.get("metadata") or {}
        return str(meta.get("namespace", "")), str(meta.get("name", ""))

    @staticmethod
    def _hosts_or_none(obj: Mapping[str, Any]) -> frozenset[str] | None:
        try:
            return frozenset(secret_hosts(obj))
        except InvalidDockerConfigError as err:
            _describe_error(obj, err)
            return None

    def _upsert(self, obj: Obj) -> None:
        key = self._key(obj)
        hosts = self._hosts_or_none(obj)
        if hosts:
            self._by_secret[key] = hosts
        else:
            self._by_secret.pop(key, None)
        self._rebuild(key[0])

    def _rebuild(self, namespace: str) -> None:
        by_host: dict[str, set[str]] = {}
        for (ns, name), hosts in self._by_secret.items():
            if ns == namespace:
                for host in hosts:
                    by_host.setdefault(host, set()).add(name)
        if by_host:
            self._index[namespace] = {h: tuple(sorted(names)) for h, names in sorted(by_host.items())}
        else:
            self._index.pop(namespace, None)
