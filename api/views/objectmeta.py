"""The metadata of a top-level object, as the API server returns it (hand-written: the vendored
ObjectMeta schema is the part a pod template embeds)."""

from __future__ import annotations

from typing import Required, TypedDict


class OwnerReference(TypedDict, total=False):
    """An object this one belongs to; the controller reference is the one with `controller: true`."""

    apiVersion: Required[str]
    kind: Required[str]
    name: Required[str]
    uid: Required[str]
    controller: bool
    blockOwnerDeletion: bool


class ManagedFieldsEntry(TypedDict, total=False):
    """Which manager owns which fields (server-side apply)."""

    apiVersion: str
    fieldsType: str
    fieldsV1: dict[str, object]
    manager: str
    operation: str
    subresource: str
    time: str


class ObjectMeta(TypedDict, total=False):
    """Name, identity, labels and the server's bookkeeping of a stored object."""

    name: str
    generateName: str
    namespace: str
    uid: str
    resourceVersion: str
    generation: int
    creationTimestamp: str
    deletionTimestamp: str
    deletionGracePeriodSeconds: int
    labels: dict[str, str]
    annotations: dict[str, str]
    ownerReferences: list[OwnerReference]
    finalizers: list[str]
    managedFields: list[ManagedFieldsEntry]
