"""How a child's first write decides whether later applies can prune it, against the real API server.

ChildSyncer creates new children with server-side apply, not a plain POST. A POST under the same
field-manager name records its fields as an `Update` entry; server-side apply only prunes fields
its own `Apply` entry owned, so a field later dropped from the desired object would stay forever.
These tests pin both halves: our create path stays prunable, and the POST path is not.
"""

from __future__ import annotations

import copy
from typing import Any

from dynamo_operator.internal import kinds
from dynamo_operator.internal.apply import ChildSyncer, Desired
from dynamo_operator.internal.client.client import Client
from dynamo_operator.internal.client.resource import Resource, object_key
from dynamo_operator.internal.consts import FIELD_MANAGER
from dynamo_operator.internal.dynamo.common.hashing import LAST_APPLIED_HASH

Obj = dict[str, Any]


def deployment(namespace: str, *, extra: bool) -> Obj:
    """A small Deployment; `extra` adds a label and an env var that a later desired drops."""
    labels = {"app": "web", **({"extra": "yes"} if extra else {})}
    env = [{"name": "KEEP", "value": "1"}, *([{"name": "DROP", "value": "2"}] if extra else [])]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": 0,  # nothing to schedule: the test is about fields, not pods
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "registry.example/web:1", "env": env}]},
            },
        },
    }


class Snapshot:
    """A `ChildReader` holding what the test last read from the API server (a caught-up cache)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], Obj] = {}

    def put(self, resource: Resource, obj: Obj) -> None:
        obj = copy.deepcopy(obj)
        obj["metadata"].pop("managedFields", None)  # the real cache strips them too
        self.objects[(resource, object_key(obj))] = obj

    def get(self, resource: Resource, key: str) -> Obj | None:
        return self.objects.get((resource, key))

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        return [
            o
            for (r, _), o in self.objects.items()
            if r == resource
            and any(
                ref.get("controller") and ref.get("uid") == value
                for ref in o["metadata"].get("ownerReferences") or ()
            )
        ]

    def shape(self, resource: Resource, obj: Obj) -> Obj:
        return obj

    def is_current(self, resource: Resource) -> bool:
        return False  # not a watch: never trusted as one


class NoEvents:
    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        pass


def _env(obj: Obj) -> list[str]:
    [main] = obj["spec"]["template"]["spec"]["containers"]
    return [e["name"] for e in main.get("env") or ()]


def _managers(obj: Obj) -> set[tuple[str, str]]:
    """Our own managedFields entries (kube-controller-manager may add its own at any time)."""
    entries = obj["metadata"].get("managedFields") or ()
    return {(m["manager"], m["operation"]) for m in entries if m["manager"] == FIELD_MANAGER}


async def _owner(api: Client, ns: str) -> Obj:
    # A real object, so the garbage collector does not remove a child whose owner does not exist.
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": ns}}
    return {**await api.create(kinds.CONFIG_MAP, body), "apiVersion": "v1", "kind": "ConfigMap"}


async def test_child_created_by_syncer_is_pruned_when_a_field_is_dropped(api: Client, ns: str) -> None:
    """Sync creates the child; a later sync without a label and an env var removes both."""
    owner = await _owner(api, ns)
    snapshot = Snapshot()
    syncer = ChildSyncer(
        client=api, cache=snapshot, recorder=NoEvents(), field_manager=FIELD_MANAGER, stamp=LAST_APPLIED_HASH
    )

    first = await syncer.sync(owner, [Desired(kinds.DEPLOYMENT, deployment(ns, extra=True))], owned=[])
    assert first.created == ["Deployment/web"]
    live = await api.get(kinds.DEPLOYMENT, "web", namespace=ns)
    assert (live["metadata"]["labels"].get("extra"), _env(live)) == ("yes", ["KEEP", "DROP"])
    assert (FIELD_MANAGER, "Apply") in _managers(live)

    snapshot.put(kinds.DEPLOYMENT, live)
    second = await syncer.sync(owner, [Desired(kinds.DEPLOYMENT, deployment(ns, extra=False))], owned=[])
    assert second.updated == ["Deployment/web"]
    live = await api.get(kinds.DEPLOYMENT, "web", namespace=ns)
    assert "extra" not in live["metadata"]["labels"]
    assert _env(live) == ["KEEP"]


async def test_post_created_child_keeps_fields_a_later_apply_drops(api: Client, ns: str) -> None:
    """Why creates go through apply: after a POST by the same manager, apply prunes nothing."""
    created = await api.create(kinds.DEPLOYMENT, deployment(ns, extra=True))
    # The client's user agent names the manager of a POST: the same name, but an Update entry.
    assert _managers(created) == {(FIELD_MANAGER, "Update")}

    applied = await api.apply(
        kinds.DEPLOYMENT, deployment(ns, extra=False), field_manager=FIELD_MANAGER, force=True
    )
    assert applied["metadata"]["labels"].get("extra") == "yes"
    assert _env(applied) == ["KEEP", "DROP"]
    assert _managers(applied) == {(FIELD_MANAGER, "Update"), (FIELD_MANAGER, "Apply")}
