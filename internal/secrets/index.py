"""The docker-secret index: per namespace, registry host → names of dockerconfigjson Secrets.

It is an informer event handler (see internal/cache/interface.py `EventHandler`): attach it to an
informer over Secrets with field selector `type=kubernetes.io/dockerconfigjson` and the `transform`
below, and it stays current on every add/update/delete. Each Secret is parsed on its own, so one
malformed Secret is logged and skipped and never disturbs the entries of the others.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import structlog
from dynamo_operator.internal import consts
from dynamo_operator.internal.secrets.registry import InvalidRegistryError, auth_key_host

log = structlog.get_logger(__name__)

Obj = dict[str, Any]
FIELD_SELECTOR = f"type={consts.DOCKER_CONFIG_JSON_TYPE}"
_KEPT_METADATA = ("name", "namespace", "uid", "resourceVersion")


class InvalidDockerConfigError(ValueError):
    """A dockerconfigjson payload that cannot be read."""


def transform(obj: Obj) -> Obj:
    """Informer transform: keep only what the index reads, so the cache never holds other secret data."""
    meta = obj.get("metadata") or {}
    data = obj.get("data") or {}
    out: Obj = {
        "apiVersion": obj.get("apiVersion", "v1"),
        "kind": obj.get("kind", "Secret"),
        "metadata": {k: meta[k] for k in _KEPT_METADATA if k in meta},
        "type": obj.get("type"),
    }
    if consts.DOCKER_CONFIG_JSON_KEY in data:
        out["data"] = {consts.DOCKER_CONFIG_JSON_KEY: data[consts.DOCKER_CONFIG_JSON_KEY]}
    return out


def parse_docker_config(payload: str | bytes) -> tuple[set[str], list[str]]:
    """Registry hosts of a `.dockerconfigjson` document, and the `auths` keys that name no host.

    Raises InvalidDockerConfigError when the document itself is unreadable.
    """
    try:
        doc = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as err:
        raise InvalidDockerConfigError(f"not JSON: {err}") from err
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
    """Registry hosts a Secret authenticates to; raises InvalidDockerConfigError when unreadable."""
    if secret.get("type") != consts.DOCKER_CONFIG_JSON_TYPE:
        return set()
    encoded = (secret.get("data") or {}).get(consts.DOCKER_CONFIG_JSON_KEY)
    if not encoded:
        raise InvalidDockerConfigError(f"missing data key {consts.DOCKER_CONFIG_JSON_KEY}")
    try:
        payload = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as err:
        raise InvalidDockerConfigError(f"data is not base64: {err}") from err
    hosts, bad = parse_docker_config(payload)
    if bad:
        meta = secret.get("metadata") or {}
        log.warning("docker secret has unusable registry keys", secret=meta.get("name"), keys=bad)
    return hosts


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
            meta = obj.get("metadata") or {}
            log.warning(
                "skipping unreadable docker secret",
                namespace=meta.get("namespace"),
                secret=meta.get("name"),
                error=str(err),
            )
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
