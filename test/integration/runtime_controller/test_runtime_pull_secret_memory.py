"""No registry credential stays in the operator's memory (issue #34, defect 4).

An in-process operator (every controller registered, as `dynamo-operator` does) indexes a pull Secret
whose password is distinctive; once its index finds the Secret by registry host, every object the
operator's own structures reach from the Manager (cache, informers, stores, indexes, event handlers,
the pull-secret index, reconcilers) is walked, and not one string or bytes object holds the password,
the base64 `auth`, or the base64 `.dockerconfigjson`, nor decodes from base64 to anything holding them.

The walk follows containers and the operator's own objects (`dynamo_operator.*` instances), not
functions, frames or third-party objects (aiohttp's buffers, the event loop): those are transient I/O
state, and through the loop they would reach this test's own locals.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import gc
import json
import re
import secrets
from collections import deque
from collections.abc import Iterator

import pytest
from dynamo_operator.context import detect_capabilities, settings_from
from dynamo_operator.flags import OperatorOptions
from dynamo_operator.internal import consts
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import SECRET
from dynamo_operator.internal.manager import Manager, ManagerOptions
from dynamo_operator.internal.secrets.index import HOSTS_FIELD, DockerSecretIndex
from dynamo_operator.wiring import register_controllers
from testsupport.api import eventually
from testsupport.operator import install_crds

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]

REGISTRY = "registry.example"
CONTAINERS = (dict, list, tuple, set, frozenset, deque)
BASE64 = re.compile(rb"^[A-Za-z0-9+/]{16,}={0,2}$")


def b64(raw: str) -> str:
    return base64.b64encode(raw.encode()).decode()


def own(obj: object) -> bool:
    """An instance of the operator's own classes (not a class, function or module)."""
    kind = type(obj)
    return kind.__module__.startswith("dynamo_operator.") and not isinstance(obj, type)


def reachable(root: object) -> Iterator[object]:
    """Every object reachable from `root` through containers and the operator's own objects."""
    seen: set[int] = set()
    todo: deque[object] = deque([root])
    while todo:
        obj = todo.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        yield obj
        if isinstance(obj, CONTAINERS) or own(obj) or type(obj).__name__ == "mappingproxy":
            todo.extend(r for r in gc.get_referents(obj) if not isinstance(r, type))


def holds(value: str | bytes, needles: list[bytes]) -> bool:
    """Whether `value`, or its base64 decoding, contains one of `needles`."""
    raw = value.encode(errors="replace") if isinstance(value, str) else bytes(value)
    forms = [raw]
    if BASE64.match(raw):
        with contextlib.suppress(binascii.Error, ValueError):
            forms.append(base64.b64decode(raw, validate=True))
    return any(needle in form for form in forms for needle in needles)


async def test_no_registry_credential_is_reachable_from_the_operator(api: Client, ns: str) -> None:
    """After the index found a pull Secret by host, its password, base64 `auth` and base64 config
    are in no string or bytes the operator's structures reach, and the cached Secret has no data."""
    await install_crds(api)
    password = f"pw-{secrets.token_hex(16)}"
    auth = b64(f"robot:{password}")
    config = b64(json.dumps({"auths": {REGISTRY: {"username": "robot", "password": password, "auth": auth}}}))
    needles = [password.encode(), auth.encode(), config.encode()]
    capabilities = await detect_capabilities(api)
    settings = settings_from(OperatorOptions(), capabilities)
    mgr = Manager(api, options=ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
    register_controllers(mgr, settings)
    task = asyncio.create_task(mgr.run())
    try:
        await eventually(lambda: mgr.ready or task.done(), timeout=60)
        body = {
            "metadata": {"name": "regcred", "namespace": ns},
            "type": consts.DOCKER_CONFIG_JSON_TYPE,
            "data": {consts.DOCKER_CONFIG_JSON_KEY: config},
        }
        await api.create(SECRET, body)
        del body
        index = settings.pull_secrets
        found = await eventually(lambda: index.secrets_for(ns, REGISTRY), timeout=30)
        assert found == ("regcred",)

        walked = list(reachable(mgr))
        assert any(obj is index for obj in walked), "the walk reaches the pull-secret index"
        assert sum(isinstance(obj, DockerSecretIndex) for obj in walked) == 1
        stored = [
            obj
            for obj in walked
            if isinstance(obj, dict)
            and obj.get("type") == consts.DOCKER_CONFIG_JSON_TYPE
            and (obj.get("metadata") or {}).get("namespace") == ns
        ]
        assert stored, "the walk reaches the cached pull Secret"
        assert all("data" not in obj and obj[HOSTS_FIELD] == [REGISTRY] for obj in stored)
        leaks = [obj[:40] for obj in walked if isinstance(obj, str | bytes) and holds(obj, needles)]
        assert not leaks, f"{len(leaks)} of {len(walked)} reachable objects hold the credential"
    finally:
        mgr.stop()
        await asyncio.wait_for(task, 45)
