"""What the local control plane's etcd holds, read directly (it answers JSON on loopback), so a test
can tell the version an object is *stored* at, not only the one it is served in."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.errors import Conflict
from dynamo_operator.internal.client.resource import CUSTOM_RESOURCE_DEFINITION
from localcluster import ETCD, LocalCluster, http


def stored_objects(local: LocalCluster, group: str, plural: str, ns: str) -> list[dict[str, Any]]:
    """The namespace's objects of `plural.group` as etcd holds them (the bytes as stored, decoded),
    in key order."""
    state = json.loads((Path(local.state_dir) / "state.json").read_text())
    prefix = f"/registry/{group}/{plural}/{ns}/".encode()
    end = prefix[:-1] + bytes([prefix[-1] + 1])
    status, body = http(
        f"http://127.0.0.1:{state['ports'][ETCD]}/v3/kv/range",
        method="POST",
        body={"key": base64.b64encode(prefix).decode(), "range_end": base64.b64encode(end).decode()},
    )
    assert status == 200, body[:300]
    return [json.loads(base64.b64decode(kv["value"])) for kv in json.loads(body).get("kvs") or []]


async def set_storage_version(api: Client, crd: str, version: str, *, field_manager: str) -> None:
    """Make `version` the storage version of CRD `crd`: an update of the CRD as installed (the CA bundle
    the webhook injected included), as an upgrade of the operator's CRDs is; retried on a conflict."""
    for _ in range(5):
        current = await api.get(CUSTOM_RESOURCE_DEFINITION, crd)
        for served in current["spec"]["versions"]:
            served["storage"] = served["name"] == version
        try:
            await api.replace(CUSTOM_RESOURCE_DEFINITION, current, field_manager=field_manager)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not store {crd} at {version}")
