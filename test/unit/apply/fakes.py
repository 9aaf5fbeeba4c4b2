"""In-memory stand-ins for the apply package's unit tests (pure logic only), and a hash stamp that
is not the operator's: the package must work with whatever stamp and field manager it is given."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

from dynamo_operator.internal.apply import ChildSyncer
from dynamo_operator.internal.client import errors
from dynamo_operator.internal.client.resource import Resource, object_key

Obj = dict[str, Any]

FIELD_MANAGER = "example-manager"
STAMP_ANNOTATION = "example.com/content-hash"


class ExampleStamp:
    """A plain sha256 of the object without status and without its own annotation."""

    def content(self, obj: Mapping[str, Any]) -> str:
        meta = dict(obj.get("metadata") or {})
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != STAMP_ANNOTATION}
        meta["annotations"] = annotations
        body = {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def stamp(self, obj: Obj) -> Obj:
        obj.setdefault("metadata", {}).setdefault("annotations", {})[STAMP_ANNOTATION] = self.content(obj)
        return obj

    def recorded(self, obj: Mapping[str, Any]) -> str | None:
        value = ((obj.get("metadata") or {}).get("annotations") or {}).get(STAMP_ANNOTATION)
        return value if isinstance(value, str) else None


STAMP = ExampleStamp()

OWNER: Obj = {
    "apiVersion": "example.com/v1",
    "kind": "Owner",
    "metadata": {"name": "g", "namespace": "ns", "uid": "u1"},
}


def cm(name: str, data: str = "1", owner_uid: str | None = None) -> Obj:
    """A ConfigMap; with `owner_uid`, controlled by that owner (kind K, name o)."""
    meta: Obj = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if owner_uid:
        meta["ownerReferences"] = [
            {"apiVersion": "x", "kind": "K", "name": "o", "uid": owner_uid, "controller": True}
        ]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": data}}


class FakeCache:
    """Objects by (resource, key); the controller index by ownerReference UID; no shaping."""

    def __init__(self) -> None:
        self.objects: dict[tuple[Resource, str], Obj] = {}
        # Kinds whose watch is current (no gap it may still be catching up on).
        self.current: set[Resource] = set()

    def get(self, resource: Resource, key: str) -> Obj | None:
        return self.objects.get((resource, key))

    def is_current(self, resource: Resource) -> bool:
        return resource in self.current

    def by_index(self, resource: Resource, index: str, value: str) -> list[Obj]:
        assert index == "controller"
        return [
            o
            for (r, _), o in self.objects.items()
            if r == resource
            and any(ref.get("uid") == value for ref in o["metadata"].get("ownerReferences") or ())
        ]

    def shape(self, resource: Resource, obj: Obj) -> Obj:
        return obj


class FakeClient:
    """Records (verb, name) per request; a GET finds what `server` holds."""

    def __init__(self, cache: FakeCache) -> None:
        self.cache = cache
        self.calls: list[tuple[str, str]] = []
        self.field_managers: list[str] = []
        self.server: dict[tuple[Resource, str], Obj] = {}

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = "", force: bool = False
    ) -> Obj:
        self.calls.append(("apply", obj["metadata"]["name"]))
        self.field_managers.append(field_manager)
        return obj

    async def create(self, resource: Resource, obj: Obj) -> Obj:
        self.calls.append(("create", obj["metadata"]["name"]))
        if (resource, object_key(obj)) in self.cache.objects:
            raise errors.AlreadyExists(409, "AlreadyExists")
        return obj

    async def get(self, resource: Resource, name: str, *, namespace: str | None = None) -> Obj:
        self.calls.append(("get", name))
        obj = self.server.get((resource, f"{namespace}/{name}"))
        if obj is None:
            raise errors.NotFound(404, "NotFound")
        return obj

    async def delete(self, resource: Resource, name: str, **_: Any) -> None:
        self.calls.append(("delete", name))

    async def patch(self, resource: Resource, name: str, body: Any, **_: Any) -> Obj:
        self.calls.append(("patch", name))
        return {}


class FakeRecorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def event(self, obj: Obj, *, type: str, reason: str, message: str) -> None:
        self.events.append((type, reason))


def syncer(client: Any, cache: Any, recorder: FakeRecorder | None = None, **options: Any) -> ChildSyncer:
    """A syncer with the example stamp and field manager."""
    return ChildSyncer(
        client=client,
        cache=cache,
        recorder=recorder or FakeRecorder(),
        field_manager=FIELD_MANAGER,
        stamp=STAMP,
        **options,
    )


RESOURCE_VERSIONS = itertools.count(1)


class LandingClient(FakeClient):
    """Each write is in the cache at once (a watch that has caught up), as the API server keeps it:
    an applied object with a UID and a new resourceVersion; a status patch sets the status, any other
    patch merges the annotations it names."""

    async def apply(
        self, resource: Resource, obj: Obj, *, field_manager: str = "", force: bool = False
    ) -> Obj:
        await super().apply(resource, obj, field_manager=field_manager, force=force)
        stored = copy.deepcopy(obj)
        name = obj["metadata"]["name"]
        stored["metadata"].update(
            uid=f"uid-{resource.plural}-{name}", resourceVersion=str(next(RESOURCE_VERSIONS))
        )
        self.cache.objects[(resource, object_key(obj))] = stored
        return stored

    async def patch(self, resource: Resource, name: str, body: Any, **options: Any) -> Obj:
        await super().patch(resource, name, body)
        key = (resource, f"{options.get('namespace') or 'ns'}/{name}")
        obj = copy.deepcopy(self.cache.objects[key])
        if options.get("subresource") == "status":
            obj["status"] = {**(obj.get("status") or {}), **body["status"]}
        else:
            obj["metadata"].setdefault("annotations", {}).update(body["metadata"]["annotations"])
        obj["metadata"]["resourceVersion"] = str(next(RESOURCE_VERSIONS))
        self.cache.objects[key] = obj
        return obj


def edited(cache: FakeCache, key: tuple[Resource, str], change: Callable[[Obj], object]) -> None:
    """Someone else changed a cached object: a changed copy with a new resourceVersion."""
    obj = copy.deepcopy(cache.objects[key])
    change(obj)
    obj["metadata"]["resourceVersion"] = str(next(RESOURCE_VERSIONS))
    cache.objects[key] = obj


def stale_copy(cache: FakeCache, key: tuple[Resource, str], name: str) -> None:
    """A child the owner made earlier under another name: a copy of the one at `key` (same owner,
    own UID), which a sync no longer desires."""
    resource, namespaced = key
    obj = copy.deepcopy(cache.objects[key])
    obj["metadata"].update(name=name, uid=f"uid-{name}")
    cache.objects[(resource, f"{namespaced.partition('/')[0]}/{name}")] = obj


class RefusingClient(FakeClient):
    """Every apply is refused with `error`."""

    def __init__(self, cache: FakeCache, error: errors.ApiError) -> None:
        super().__init__(cache)
        self.error = error

    async def apply(self, resource: Any, obj: Any, *, field_manager: str = "", force: bool = False) -> Any:
        self.calls.append(("apply", obj["metadata"]["name"]))
        raise self.error


def terminating_namespace() -> errors.Forbidden:
    """The API server's refusal of a create in a namespace being deleted."""
    return errors.Forbidden(
        403,
        "Forbidden",
        'configmaps "c" is forbidden: unable to create new content in namespace ns because it is being'
        " terminated",
        {"causes": [{"reason": "NamespaceTerminating", "field": "metadata.namespace"}]},
    )


def namespace_gone() -> errors.NotFound:
    """The API server's answer to a create in a namespace that no longer exists."""
    return errors.NotFound(404, "NotFound", 'namespaces "ns" not found', {"name": "ns", "kind": "namespaces"})
